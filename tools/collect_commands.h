// collect's modes as a command table. Each Command declares its positional arguments, the flags
// it accepts and its help; main scans the command line, looks the mode up, checks the flags and
// arguments against it, then runs it. Adding a mode or giving a mode a new flag touches only
// its table entry (tools/collect_main.cc); `collect --help` and `collect MODE --help` are
// generated from the table.
//
// The flags themselves stay absl flags (defined beside the code they configure); the table
// only says which of them a mode reads. The command line is scanned here before absl parses it,
// so that an unknown flag, a flag of another mode or a bad value is a usage error (exit 2)
// naming the flag, not absl's exit 1.
#ifndef ROASTCOFFEA_TOOLS_COLLECT_COMMANDS_H_
#define ROASTCOFFEA_TOOLS_COLLECT_COMMANDS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/exit_code.h"

namespace roastcoffea {

// What a mode's run function gets.
struct Invocation {
  // The positional arguments after the mode's name.
  std::vector<std::string> arguments;
  // Everything after the first bare "--": the command to measure.
  std::vector<std::string> command;
  // The whole command line, as typed (recorded in the measurement).
  int argc = 0;
  char** argv = nullptr;
};

// A flag that only applies to some values of another flag (e.g. --scheduler to
// --backend=dask).
struct FlagCondition {
  std::string flag;                 // "scheduler"
  std::string on_flag;              // "backend"
  std::vector<std::string> values;  // {"dask"}
};

struct Command {
  static constexpr int kUnlimited = -1;

  std::string name;                // "show"
  std::string arguments_synopsis;  // "DIR"
  std::string summary;             // a paragraph, wrapped when printed
  std::string help;                // more, as formatted, for `collect MODE --help` only
  int min_arguments = 0;
  int max_arguments = 0;          // or kUnlimited
  std::string arguments_problem;  // "one measurement directory": says what is expected
  // The names (without dashes) of the absl flags this mode reads.
  std::vector<std::string> flags;
  // Flags it also accepts but help does not list (for tests, e.g. fault injection).
  std::vector<std::string> hidden_flags;
  // This mode's own help for a flag that several modes share ({"format", "table, csv, ..."}),
  // shown instead of the flag's general help.
  std::vector<std::pair<std::string, std::string>> flag_help;
  // The exit codes this mode can return, for its help; empty: all.
  std::vector<ExitCode> exit_codes;
  std::vector<FlagCondition> conditions;
  // Whether `-- COMMAND ...` may follow.
  bool accepts_command = false;
  std::function<ExitCode(const Invocation&)> run;
};

// The command line before absl parses it.
struct ScannedCommandLine {
  // The flags given, by name without dashes or "no" ("threads", "dask_profiles"), in order.
  std::vector<std::string> flags;
  // Their values as given ("true"/"false" for --flag/--noflag).
  std::vector<std::string> values;
  std::vector<std::string> positional;
  std::vector<std::string> command;  // after the first bare "--"
  bool has_command_separator = false;
  // --help (or -h, --helpshort): collect prints the table's help itself.
  bool help = false;
  // --version, --helpon, --fromenv, ...: left to absl. (A --flagfile's lines are scanned as
  // if they were on the command line, so they are checked against the mode too.)
  bool absl_special = false;
};

// Scans argv[1..argc) the way absl will parse it (--flag=v, --flag v, -flag, --noflag for
// booleans), stopping at the first bare "--", and the lines of every --flagfile the same way.
// Every flag must be a known absl flag and its value must parse: else a usage error naming it,
// with the closest known flag ("unknown flag --formt (did you mean --format?)") and the flag
// file it came from.
absl::StatusOr<ScannedCommandLine> ScanCommandLine(int argc, char** argv);

// The command named `name`, or null.
const Command* FindCommand(const std::vector<Command>& commands, absl::string_view name);

// A usage error for a mode that is not in the table, with the closest one.
absl::Status UnknownCommandError(const std::vector<Command>& commands, absl::string_view name);

// Usage errors: a flag the mode does not read ("--format does not apply to 'compare' (its
// flags: --tables, ...)"), a flag whose condition does not hold ("--scheduler needs
// --backend=dask"), too few or too many arguments, a command after "--" it does not take.
absl::Status CheckInvocation(const Command& command, const ScannedCommandLine& line);

// The candidate closest to `word` by edit distance, or "" when none is close.
std::string ClosestName(absl::string_view word, const std::vector<std::string>& candidates);

// `collect MODE --help`: synopsis, help, only this mode's flags with their help (its own where
// it has one) and defaults, and only its exit codes.
std::string CommandHelp(absl::string_view program, const Command& command);

// `collect --help`: `intro`, the modes with their summaries, every mode's flags, `outro`.
std::string ToolHelp(absl::string_view program, const std::vector<Command>& commands,
                     absl::string_view intro, absl::string_view outro);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COLLECT_COMMANDS_H_
