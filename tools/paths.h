// Where collect reads and writes: paths as the user meant them.
#ifndef ROASTCOFFEA_TOOLS_PATHS_H_
#define ROASTCOFFEA_TOOLS_PATHS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

// Resolves a relative path against the directory the user ran from: under `bazel run` that is
// $BUILD_WORKING_DIRECTORY (Bazel itself runs the binary inside its runfiles tree); otherwise
// the current directory. Absolute paths are returned unchanged.
std::string ResolveUserPath(absl::string_view path);

// Creates `directory` (and its parents) if needed and checks that files can be created in it,
// so that a run fails before it starts, not after, when its results could not be saved.
// The error names the directory and the OS reason.
absl::Status EnsureWritableDirectory(const std::string& directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_PATHS_H_
