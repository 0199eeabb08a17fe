// Writing an output file of a saved measurement's renderers (HTML report, folded stacks, flame
// graphs): atomically and safely (io/atomic_write.h), and never over the measurement itself,
// whose layout this package owns (store/measurement_io.h).
#ifndef ROASTCOFFEA_STORE_ATOMIC_FILE_H_
#define ROASTCOFFEA_STORE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace roastcoffea {

// InvalidArgument when `path` is FORMAT, measurement.pb or measurement.json of a measurement
// directory (`report --html_output=M/measurement.pb` would destroy the measurement it reports);
// otherwise io's WriteFileAtomically (errors name `path` and the OS's reason).
absl::Status WriteOutputFileAtomically(const std::string& path, const std::string& contents);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_ATOMIC_FILE_H_
