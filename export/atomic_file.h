// Writing an output file of a saved measurement's renderers (HTML report, folded stacks, flame
// graphs): atomically and safely (io/atomic_write.h), and never over the measurement itself.
#ifndef ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_
#define ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace roastcoffea {
namespace export_internal {

// InvalidArgument when `path` is FORMAT, measurement.pb or measurement.json of a measurement
// directory (`report --html_output=M/measurement.pb` would destroy the measurement it reports);
// otherwise io's WriteFileAtomically (errors name `path` and the OS's reason).
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_
