// `collect profile DIR`: the statistical profiles of a saved measurement as tables (per worker
// and merged: the heaviest functions and exclusive stacks), and as folded stacks and flame
// graphs written to a directory.
#ifndef ROASTCOFFEA_TOOLS_PROFILE_COMMAND_H_
#define ROASTCOFFEA_TOOLS_PROFILE_COMMAND_H_

#include <string>

#include "tools/exit_code.h"

namespace roastcoffea {

struct ProfileConfig {
  std::string tables;           // --tables: auto, unicode or ascii
  int top = 0;                  // --top: rows per table, at least 1
  std::string output;           // --output: the files' directory; empty: DIR/profile or a fallback
  bool wrapper_frames = false;  // --wrapper_frames: keep the thread-pool and tracking frames
};

ExitCode ProfileCommand(const ProfileConfig& config, const std::string& directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_PROFILE_COMMAND_H_
