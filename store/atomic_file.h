// Writing an output file of a saved measurement's renderers (HTML report, comparison, folded
// stacks, flame graphs, traces): atomically and safely (io/atomic_write.h: never through a link,
// never over a device node or anything but a regular file), and never over the measurement
// itself, whose layout this package owns (store/measurement_io.h). The one rule for every output
// writer: the renderers call WriteOutputFileAtomically, the trace writers (a layer that cannot
// depend on store) are guarded by CheckOutputPath in collect.
#ifndef ROASTCOFFEA_STORE_ATOMIC_FILE_H_
#define ROASTCOFFEA_STORE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace roastcoffea {

// InvalidArgument (naming `path`) when `path` is a file of a measurement directory (one holding
// a FORMAT file): FORMAT, measurement.pb, measurement.json, or any entry that already exists
// there (kept engine logs, ...); `show M --trace=M/measurement.pb` would destroy the measurement
// it shows. A new file in a measurement directory (M/trace.json) is allowed. Otherwise OK.
absl::Status CheckOutputPath(const std::string& path);

// CheckOutputPath, then io's WriteFileAtomically (errors name `path` and the OS's reason).
absl::Status WriteOutputFileAtomically(const std::string& path, const std::string& contents);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_ATOMIC_FILE_H_
