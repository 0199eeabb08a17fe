#include "tools/collect_command_table.h"

#include <string>
#include <utility>
#include <vector>

#include "tools/collect_flags.h"
#include "tools/compare_command.h"
#include "tools/profile_command.h"
#include "tools/report_command.h"
#include "tools/run_command.h"
#include "tools/show_command.h"

namespace roastcoffea {
namespace {

Command RunEntry(const LaunchContext& launch) {
  Command run;
  run.name = "run";
  run.arguments_synopsis = "";
  run.summary =
      "The default mode. Run the built-in sample analysis on a thread pool (or as Work Queue "
      "tasks), or measure an analysis on a Dask cluster or TaskVine/Work Queue while COMMAND "
      "runs; print the tables and save the measurement under --output_dir.";
  run.help =
      "collect [run] [flags]\n"
      "    Run the built-in sample analysis (a dijet analysis over a generated dataset of\n"
      "    compressed columnar files) on a thread pool, with every chunk tracked and the worker\n"
      "    threads sampled. Prints the tables and saves the measurement under --output_dir.\n"
      "collect --backend=workqueue [--workers=N] [flags]\n"
      "    The same analysis as Work Queue tasks on local (or remote) workers.\n"
      "collect --backend=dask --scheduler=tcp://HOST:PORT [flags] [-- COMMAND ...]\n"
      "collect --backend=taskvine --taskvine_logs=DIR [--follow] [flags] [-- COMMAND ...]\n"
      "    Measure an analysis on a Dask cluster or TaskVine/Work Queue: track the engine while\n"
      "    COMMAND runs (or --duration seconds, or until Ctrl-C), read the Coffea report and\n"
      "    chunk records COMMAND may write to $ROASTCOFFEA_REPORT and\n"
      "    $ROASTCOFFEA_CHUNK_RECORDS, print, save. Exit 3: partial measurement; 4: COMMAND\n"
      "    failed.\n"
      "Backend flags (--threads, --scheduler, --taskvine_logs, --workers, ...) need their\n"
      "--backend.\n";
  run.max_arguments = 0;
  run.arguments_problem = "no arguments; a command to measure goes after --";
  for (const RunFlag& flag : RunFlags()) {
    (flag.hidden ? run.hidden_flags : run.flags).push_back(flag.name);
    if (!flag.backends.empty()) {
      run.conditions.push_back(FlagCondition{flag.name, "backend", flag.backends});
    }
  }
  run.exit_codes = {ExitCode::kOk,         ExitCode::kFailure,       ExitCode::kUsage,
                    ExitCode::kPartial,    ExitCode::kCommandFailed, ExitCode::kSavedElsewhere,
                    ExitCode::kInterrupted};
  run.accepts_command = true;
  run.run = [launch](const Invocation& invocation) {
    RunConfig config = RunConfigFromFlags();
    config.launch = launch;
    return RunCommand(config, invocation);
  };
  return run;
}

Command ShowEntry() {
  Command show;
  show.name = "show";
  show.arguments_synopsis = "DIR";
  show.summary =
      "Print the tables of a measurement saved earlier (ours, or the original Python tool's "
      "roastcoffea_measurement_v1 directory); --format=csv|json|markdown prints the flat "
      "metrics instead.";
  show.help = "--trace=FILE also writes the measurement's timeline.\n";
  show.min_arguments = show.max_arguments = 1;
  show.arguments_problem = "one measurement directory";
  show.flags = {"tables", "format", "trace", "serve"};
  show.flag_help = {
      {"format", "table (the summary tables), or the flat metrics as csv, json or markdown."}};
  show.exit_codes = {ExitCode::kOk, ExitCode::kFailure, ExitCode::kUsage, ExitCode::kInterrupted};
  show.run = [](const Invocation& invocation) {
    return ShowCommand(ShowConfigFromFlags(), invocation.arguments.front());
  };
  return show;
}

Command CompareEntry() {
  Command compare;
  compare.name = "compare";
  compare.arguments_synopsis = "A B [C ...]";
  compare.summary =
      "Key metrics of saved runs side by side, changes against A in percent, regressions "
      "marked; Amdahl's law fit from 3+ core counts.";
  compare.help =
      "A1,A2 (one argument): repeats of one configuration (e.g. one version of the code).\n"
      "Runs of different code (build-id of the analysis executable, or --label at run time)\n"
      "are different configurations. A regression must be beyond a noise estimate: the\n"
      "repeats of each side, or for the per-chunk time per event row the Mann-Whitney rank\n"
      "test over the chunks. With one run per side only that row can gate: the run metrics\n"
      "have no noise estimate (marked ?) unless --regression_threshold is given (then the\n"
      "threshold alone decides).\n"
      "A verdict line says how much faster or slower each configuration ran, with its\n"
      "uncertainty. --format=csv|json|markdown for scripts, --html_output=FILE also writes the\n"
      "table, the verdicts, each run's warnings and findings and the scaling plot,\n"
      "--fail_on_regression exits 5 when a regression is found; runs of the same code\n"
      "(build-id, label) and flags are repeats and pass it (nothing can regress).\n";
  compare.min_arguments = 2;
  compare.max_arguments = Command::kUnlimited;
  compare.arguments_problem = "two or more measurement directories";
  compare.flags = {"tables", "regression_threshold", "format", "fail_on_regression", "html_output"};
  compare.flag_help = {
      {"format", "table, or the comparison as csv, json or markdown."},
      {"html_output", "also write the comparison and its scaling plot as HTML to this file."}};
  compare.exit_codes = {ExitCode::kOk, ExitCode::kFailure, ExitCode::kUsage, ExitCode::kRegression,
                        ExitCode::kInterrupted};
  compare.run = [](const Invocation& invocation) {
    return CompareCommand(CompareConfigFromFlags(invocation.argc, invocation.argv),
                          invocation.arguments);
  };
  return compare;
}

Command ReportEntry() {
  Command report;
  report.name = "report";
  report.arguments_synopsis = "DIR";
  report.summary =
      "Write one self-contained HTML file (metadata, tables, SVG plots) for a saved "
      "measurement, to --html_output (default: DIR.html).";
  report.min_arguments = report.max_arguments = 1;
  report.arguments_problem = "one measurement directory";
  report.flags = {"html_output"};
  report.flag_help = {{"html_output",
                       "the HTML file to write (default: <DIR>.html next to the measurement; "
                       "./<name>.html, then $TMPDIR/<name>.html when that is not writable)."}};
  report.exit_codes = {ExitCode::kOk, ExitCode::kFailure, ExitCode::kUsage, ExitCode::kInterrupted};
  report.run = [](const Invocation& invocation) {
    return ReportCommand(ReportConfigFromFlags(), invocation.arguments.front());
  };
  return report;
}

Command ProfileEntry() {
  Command profile;
  profile.name = "profile";
  profile.arguments_synopsis = "DIR";
  profile.summary =
      "The statistical profiles of a saved measurement: per worker and merged, the --top "
      "heaviest functions (self, total) and exclusive stacks; writes profile.folded and "
      "flamegraph.svg (merged) and profile.<worker>.folded and flamegraph.<worker>.svg into "
      "DIR/profile (./<name>-profile when DIR is not writable, or --output).";
  profile.min_arguments = profile.max_arguments = 1;
  profile.arguments_problem = "one measurement directory";
  profile.flags = {"tables", "top", "output", "wrapper_frames"};
  profile.exit_codes = {ExitCode::kOk, ExitCode::kFailure, ExitCode::kUsage,
                        ExitCode::kInterrupted};
  profile.run = [](const Invocation& invocation) {
    return ProfileCommand(ProfileConfigFromFlags(), invocation.arguments.front());
  };
  return profile;
}

}  // namespace

std::vector<Command> CollectCommands(const LaunchContext& launch) {
  std::vector<Command> commands;
  commands.push_back(RunEntry(launch));
  commands.push_back(ShowEntry());
  commands.push_back(CompareEntry());
  commands.push_back(ReportEntry());
  commands.push_back(ProfileEntry());
  return commands;
}

}  // namespace roastcoffea
