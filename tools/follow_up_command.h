// The commands collect prints for the user to run next ("Show it again with: ..."): they name
// the launcher the user actually ran (`./bazelw run //tools:collect --` under `bazel run`, else
// argv[0] as typed) and quote every word that needs it, so that they can be pasted as printed.
#ifndef ROASTCOFFEA_TOOLS_FOLLOW_UP_COMMAND_H_
#define ROASTCOFFEA_TOOLS_FOLLOW_UP_COMMAND_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/shell_quote.h"

namespace roastcoffea {

// How collect was started.
struct LaunchContext {
  std::string argv0;
  // $BUILD_WORKSPACE_DIRECTORY: set by `bazel run`, empty otherwise.
  std::string workspace_directory;
  // Where the user typed the command: $BUILD_WORKING_DIRECTORY under `bazel run`, else the
  // current directory.
  std::string working_directory;
  // Whether the workspace has the ./bazelw wrapper (else the command says `bazel`).
  bool workspace_has_bazelw = true;
};

// From the environment and the current directory.
LaunchContext CurrentLaunchContext(const char* argv0);

// `path` as the user can type it where they ran collect: relative to the working directory
// when it lies below it, else unchanged.
std::string DisplayPath(const LaunchContext& context, absl::string_view path);

// The command line that runs collect with `arguments`, every word quoted as needed:
//   ./bazelw run //tools:collect -- show 'my run'     (under bazel run, from the workspace)
//   ../bazelw run //tools:collect -- show DIR          (from a directory of the workspace)
//   ./bazel-bin/tools/collect show DIR                 (otherwise: argv[0] as typed)
std::string FollowUpCommand(const LaunchContext& context,
                            const std::vector<std::string>& arguments);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_FOLLOW_UP_COMMAND_H_
