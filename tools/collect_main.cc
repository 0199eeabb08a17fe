// collect: run an analysis with performance metrics collected, print the tables, save the
// measurement; or show a saved one. main() scans the command line, finds the mode in the
// command table (tools/collect_command_table.h), checks the mode's flags and arguments, parses
// the flags and runs the mode; each mode is a file of its own that takes a typed config
// (tools/collect_flags.h builds them from the flags). The exit status is tools/exit_code.h.
//
//   collect [flags]            run the built-in sample analysis (threadpool backend)
//   collect show DIR           print the tables of a saved measurement
//   collect compare A B ...    compare saved measurements
//   collect report DIR         write the HTML report of a saved measurement
//   collect profile DIR        top stacks, folded stacks and flame graphs of its profiles
#include <google/protobuf/stubs/logging.h>
#include <signal.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collector/interruption.h"
#include "collector/tool_build.h"
#include "tools/collect_command_table.h"
#include "tools/collect_commands.h"
#include "tools/collect_version.h"
#include "tools/command_failure.h"
#include "tools/exit_code.h"
#include "tools/follow_up_command.h"

namespace roastcoffea {
namespace {

constexpr char kIntro[] = R"(collect measures the performance of a chunked analysis.
)";

constexpr char kOutro[] =
    R"(Ctrl-C (SIGINT) or SIGTERM during a run: no new chunk starts (threadpool), or the signal is
passed on to COMMAND; running chunks or COMMAND get --grace_period seconds to end; then the
measurement of what was done is saved, marked interrupted, and collect exits 130. A second
signal exits at once (130) without saving.

Under Bazel:  ./bazelw run //tools:collect -- [mode] [flags]
)";

std::string VersionString() {
  const v1::BuildInfo build = ToolBuildInfo();
  return absl::StrCat("roastcoffea collect ", kToolVersion, " (", build.build_mode(), ", ",
                      build.compiler(), ")\n");
}

int Main(int argc, char** argv) {
  const std::string program = "collect";
  // First: a signal before the run's own policy is in place exits 130 with a word, not as a
  // silent death by SIGINT.
  ExitOnSignalWhileNoMeasurementRuns(program, ToInt(ExitCode::kInterrupted));
  const std::vector<Command> commands = CollectCommands(CurrentLaunchContext(argv[0]));
  const std::string outro = absl::StrCat(ExitCodeTable(), "\n", kOutro);
  absl::SetProgramUsageMessage(absl::StrCat(kIntro, "\n", outro));
  // --helpfull lists every flag of the tool (they are defined beside the code they configure:
  // tools/dask_collect.cc, tools/trace_flag.cc, ...), not only this file's.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "tools/");
  };
  // --version: "roastcoffea collect 0.1.0 (opt, gcc 12.2.0)", so that a report of a slow run
  // shows whether the tool was optimised.
  usage.version_string = VersionString;
  absl::SetFlagsUsageConfig(usage);

  // Checked here, before absl parses (which exits 1 on a bad flag): usage errors exit 2.
  absl::StatusOr<ScannedCommandLine> line = ScanCommandLine(argc, argv);
  if (!line.ok()) return ToInt(Fail(line.status()));
  // `collect help [MODE]` is `collect [MODE] --help`.
  std::vector<std::string> positional = line->positional;
  if (!positional.empty() && positional.front() == "help") {
    line->help = true;
    positional.erase(positional.begin());
  }
  const std::string mode = positional.empty() ? "run" : positional.front();
  const Command* command = FindCommand(commands, mode);
  if (line->help) {
    if (positional.empty()) {
      std::cout << ToolHelp(program, commands, kIntro, outro);
      return ToInt(ExitCode::kOk);
    }
    if (command == nullptr) return ToInt(Fail(UnknownCommandError(commands, mode)));
    std::cout << CommandHelp(program, *command);
    return ToInt(ExitCode::kOk);
  }
  if (command == nullptr) return ToInt(Fail(UnknownCommandError(commands, mode)));
  if (!line->absl_special) {
    if (absl::Status status = CheckInvocation(*command, *line); !status.ok()) {
      return ToInt(Fail(status));
    }
  }
  // Everything after the first "--" is the command to measure, not ours to parse.
  int ours = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      ours = i;
      break;
    }
  }
  std::vector<char*> parsed = absl::ParseCommandLine(ours, argv);
  Invocation invocation;
  invocation.arguments.assign(parsed.begin() + 1, parsed.end());
  if (!invocation.arguments.empty() && invocation.arguments.front() == command->name) {
    invocation.arguments.erase(invocation.arguments.begin());
  }
  invocation.command = line->command;
  invocation.argc = argc;
  invocation.argv = argv;
  return ToInt(command->run(invocation));
}

}  // namespace
}  // namespace roastcoffea

int main(int argc, char** argv) {
  // The tables are printed before the measurement is saved: a reader that went away (`collect
  // | head`) fails the write with EPIPE instead of killing collect by SIGPIPE, and a file size
  // limit (ulimit -f) with EFBIG instead of SIGXFSZ (the save then falls back as on a full disk,
  // and the checkpoint keeps what was measured). The user's command gets the defaults back
  // (tools/external_run.cc).
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  // protobuf logs "[libprotobuf ERROR ...]" lines for corrupt input before collect's own error,
  // which names the file and says what is wrong: keep only what aborts.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* filename,
                                     int line, const std::string& message) {
    if (level < google::protobuf::LOGLEVEL_FATAL) return;
    std::cerr << "[libprotobuf FATAL " << filename << ":" << line << "] " << message << "\n";
  });
  return roastcoffea::Main(argc, argv);
}
