// `collect show DIR`: the summary tables (or the flat metrics) of a saved measurement, its
// timeline with --trace, and with --serve the measurement served until Ctrl-C.
#ifndef ROASTCOFFEA_TOOLS_SHOW_COMMAND_H_
#define ROASTCOFFEA_TOOLS_SHOW_COMMAND_H_

#include <string>

#include "tools/exit_code.h"

namespace roastcoffea {

struct ShowConfig {
  std::string tables;  // --tables: auto, unicode or ascii
  std::string format;  // --format: table, csv, json or markdown
  std::string trace;   // --trace: the timeline file; empty: none
  std::string serve;   // --serve: [HOST]:PORT; empty: none
};

// `directory`: as the user gave it (ours, the original tool's, or a checkpoint).
ExitCode ShowCommand(const ShowConfig& config, const std::string& directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_SHOW_COMMAND_H_
