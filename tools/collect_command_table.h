// collect's modes: run, show, compare, report, profile. Each entry says what the mode takes
// (arguments, flags, the backend a flag needs), its help and exit codes, and runs it with the
// config tools/collect_flags.h builds from the flags. A new mode, or a new flag of a mode, is
// one entry (or one name) in collect_command_table.cc; the README's Modes and Flags sections
// list the same.
#ifndef ROASTCOFFEA_TOOLS_COLLECT_COMMAND_TABLE_H_
#define ROASTCOFFEA_TOOLS_COLLECT_COMMAND_TABLE_H_

#include <vector>

#include "tools/collect_commands.h"
#include "tools/follow_up_command.h"

namespace roastcoffea {

// `launch`: how the user ran collect, for the commands a run prints.
std::vector<Command> CollectCommands(const LaunchContext& launch);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COLLECT_COMMAND_TABLE_H_
