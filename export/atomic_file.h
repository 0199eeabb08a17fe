// Writing one file so that readers see the old contents or the new, never a part: the
// contents go to a sibling temporary file, which is then renamed over `path`.
#ifndef ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_
#define ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace roastcoffea {
namespace export_internal {

// PermissionDenied when the temporary file cannot be created, Internal when writing or the
// rename fails (the temporary file is removed); messages name the file.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_ATOMIC_FILE_H_
