// collect: run an analysis with performance metrics collected, print the tables, save the
// measurement; or show a saved one. The modes are a command table (Commands() below,
// tools/collect_commands.h): each declares its arguments and the flags it reads; the exit status
// is tools/exit_code.h.
//
//   collect [flags]            run the built-in sample analysis (threadpool backend)
//   collect show DIR           print the tables of a saved measurement
//   collect compare A B ...    compare saved measurements
//   collect report DIR         write the HTML report of a saved measurement
//   collect profile DIR        top stacks, folded stacks and flame graphs of its profiles
#include <google/protobuf/stubs/logging.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "collector/assemble_measurement.h"
#include "collector/interruption.h"
#include "collector/measurement_session.h"
#include "export/compare.h"
#include "export/compare_html.h"
#include "export/display_width.h"
#include "export/flat_formats.h"
#include "export/html_report.h"
#include "export/profile_files.h"
#include "export/profile_tables.h"
#include "export/recap.h"
#include "export/tables.h"
#include "ingest/any_measurement.h"
#include "live/live_server.h"
#include "profile/profile.h"
#include "store/measurement_io.h"
#include "store/name_claim.h"
#include "store/save_fallback.h"
#include "tools/backend_factory.h"
#include "tools/code_identity.h"
#include "tools/collect_commands.h"
#include "tools/exit_code.h"
#include "tools/external_run.h"
#include "tools/follow_up_command.h"
#include "tools/paths.h"
#include "tools/sample_analysis/sample_dataset.h"
#include "tools/sample_run.h"
#include "tools/threadpool_collect.h"
#include "tools/trace_flag.h"
#include "tools/workqueue/workqueue_flags.h"
#include "tools/workqueue/workqueue_run.h"

ABSL_FLAG(int64_t, events_per_file,
          roastcoffea::sample_analysis::SampleDatasetSpec{}.events_per_file,
          "Sample dataset: events in each generated file.");
ABSL_FLAG(int, files_per_dataset,
          roastcoffea::sample_analysis::SampleDatasetSpec{}.files_per_dataset,
          "Sample dataset: files in each of its datasets (two QCD-like backgrounds and one "
          "dijet-resonance signal).");
ABSL_FLAG(int64_t, chunk_size, 25000, "Events per chunk (chunks are entry ranges of one file).");
ABSL_FLAG(double, interval, 0.25, "Seconds between two samples of the workers (> 0).");
ABSL_FLAG(std::string, output_dir, "measurements",
          "Directory that receives the measurement, as <output_dir>/<name>/. Relative paths are "
          "relative to the directory you ran from.");
ABSL_FLAG(std::string, name, "",
          "Name of the measurement directory (default: the UTC start time, "
          "e.g. 2026-11-22T08-15-03Z). At most 227 bytes, not starting with '.', without '/' or "
          "control characters (checked before the run). Claimed for the run: another run with "
          "the same name is refused at its start. An existing directory is never overwritten.");
ABSL_FLAG(std::string, cache_dir, "",
          "Where the generated sample dataset is kept between runs (default: "
          "$ROASTCOFFEA_CACHE_DIR, else $XDG_CACHE_HOME/roastcoffea, else "
          "~/.cache/roastcoffea).");
ABSL_FLAG(uint64_t, seed, roastcoffea::sample_analysis::SampleDatasetSpec{}.seed,
          "Sample dataset: random seed of the event generator.");
ABSL_FLAG(std::string, backend, "threadpool",
          "What runs the analysis: threadpool (the built-in sample analysis, in this process), "
          "dask (a Dask cluster: see --scheduler), taskvine (a TaskVine or Work Queue manager's "
          "logs: see --taskvine_logs) or workqueue (the built-in sample analysis as Work Queue "
          "tasks: see --workers).");
ABSL_FLAG(std::string, serve, "",
          "[HOST]:PORT: serve the run live over HTTP while it goes on: /metrics for Prometheus "
          "(text or OpenMetrics) and / (a live page, then the final report). HOST defaults to "
          "127.0.0.1 (this machine only; 0.0.0.0 serves every network: your choice). PORT 0 "
          "picks a free port, printed at the start. show: serve the saved measurement until "
          "Ctrl-C.");
ABSL_FLAG(double, serve_linger, 5,
          "With --serve, after the run is saved: seconds to keep serving its final figures so "
          "that a scraper's last scrape sees them (Ctrl-C ends it early).");
ABSL_FLAG(double, checkpoint_interval, 30,
          "Seconds between two checkpoints of the chunks recorded so far, in "
          "<output_dir>/<name>.checkpoint: a run killed by SIGKILL or the OOM killer leaves what "
          "it measured up to the last one, which `show` reads (marked partial); the saved "
          "measurement replaces it. 0: no checkpoint.");
ABSL_FLAG(double, grace_period, 2,
          "After the first SIGINT or SIGTERM: seconds that running chunks (threadpool) or the "
          "command (dask, taskvine) get to end before the measurement of what was done is saved "
          "(exit 130). A second signal exits at once.");
ABSL_FLAG(double, duration, 0,
          "dask and taskvine without a command: seconds to track (0: until Ctrl-C).");
ABSL_FLAG(std::string, tables, "auto",
          "Table style: auto (Unicode boxes on a terminal unless NO_COLOR is set, else ASCII), "
          "unicode or ascii.");
ABSL_FLAG(std::string, format, "table",
          "show: table (the summary tables), or the flat metrics as csv, json or markdown; "
          "compare: table, csv, json or markdown.");
ABSL_FLAG(double, regression_threshold, 5.0,
          "compare: a change worse than this many percent of the baseline is a regression when "
          "it is beyond a noise estimate; given explicitly, the threshold alone decides where "
          "there is none (one run per side).");
ABSL_FLAG(bool, fail_on_regression, false, "compare: exit 5 when a regression is found (for CI).");
ABSL_FLAG(std::string, label, "",
          "Runs: a name for the measured code's version (e.g. a git commit), recorded in the "
          "configuration next to the analysis executable's build-id; compare treats runs with "
          "different labels or build-ids as different configurations, never as repeats.");
ABSL_FLAG(bool, html, false,
          "After a run: also write the HTML report (tables and plots) next to the measurement, "
          "as <measurement directory>.html.");
ABSL_FLAG(std::string, html_output, "",
          "report: the HTML file to write (default: <DIR>.html next to the measurement); "
          "compare: also write the comparison and its scaling plot as HTML to this file.");
ABSL_FLAG(int, top, 20,
          "profile: rows (heaviest functions, heaviest exclusive stacks) per table, at least 1.");
ABSL_FLAG(std::string, output, "",
          "profile: directory for the folded stacks and flame graphs (default: DIR/profile, or "
          "./<name>-profile, or $TMPDIR/<name>-profile when DIR is not writable).");
ABSL_FLAG(bool, wrapper_frames, false,
          "profile: keep the thread start-up, thread-pool and chunk-tracking frames below the "
          "chunk's processor in tables, folded stacks and flame graphs (default: collapsed).");

namespace roastcoffea {
namespace {

constexpr char kToolVersion[] = "0.1.0";

constexpr char kIntro[] = R"(collect measures the performance of a chunked analysis.
)";

constexpr char kOutro[] =
    R"(Ctrl-C (SIGINT) or SIGTERM during a run: no new chunk starts (threadpool), or the signal is
passed on to COMMAND; running chunks or COMMAND get --grace_period seconds to end; then the
measurement of what was done is saved, marked interrupted, and collect exits 130. A second
signal exits at once (130) without saving.

Under Bazel:  ./bazelw run //tools:collect -- [mode] [flags]
)";

absl::StatusOr<TableOptions> TableStyle() {
  const std::string style = absl::GetFlag(FLAGS_tables);
  TableOptions options;
  if (style == "auto") {
    options.unicode = UseUnicodeTables();
  } else if (style == "unicode") {
    options.unicode = true;
  } else if (style == "ascii") {
    options.unicode = false;
  } else {
    return UsageError(absl::StrCat("--tables must be auto, unicode or ascii, got '", style, "'"));
  }
  return options;
}

// The live view of the run (--serve), when asked for; lives until collect exits.
std::unique_ptr<live::LiveServer>& LiveView() {
  static auto* const server = new std::unique_ptr<live::LiveServer>();
  return *server;
}

volatile sig_atomic_t g_stop_serving = 0;
void StopServing(int) { g_stop_serving = 1; }

// Waits `duration` (InfiniteDuration: until a signal), or until SIGINT or SIGTERM, which end
// the wait instead of the process; the previous handlers are back afterwards.
void ServeUntilSignal(absl::Duration duration) {
  struct sigaction action = {}, old_int = {}, old_term = {};
  action.sa_handler = StopServing;
  sigemptyset(&action.sa_mask);
  g_stop_serving = 0;
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  const absl::Time end =
      duration == absl::InfiniteDuration() ? absl::InfiniteFuture() : absl::Now() + duration;
  while (g_stop_serving == 0 && absl::Now() < end) absl::SleepFor(absl::Milliseconds(50));
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

// Starts the live view of --serve, before anything runs: a bad address or a port in use is an
// error now, not after the run.
absl::Status StartLiveView() {
  const std::string serve = absl::GetFlag(FLAGS_serve);
  if (serve.empty()) return absl::OkStatus();
  absl::StatusOr<live::HttpServerOptions> http = live::ParseServeAddress(serve);
  if (!http.ok()) return AsUsageError(http.status());
  live::LiveServerOptions options;
  options.http = *http;
  options.version = kToolVersion;
  absl::StatusOr<std::unique_ptr<live::LiveServer>> server = live::LiveServer::Start(options);
  if (!server.ok()) {
    return UsageError(absl::StrCat("--serve=", serve, ": ", server.status().message()));
  }
  LiveView() = *std::move(server);
  std::cerr << "collect: serving live at http://" << LiveView()->address()
            << "/ (Prometheus: http://" << LiveView()->address() << "/metrics)\n";
  return absl::OkStatus();
}

// Text that may carry data (an error naming a file, a warning quoting an engine's log) for the
// terminal: every control character (C0, DEL, C1 such as the 8-bit CSI U+009B) becomes '?' by
// export's one sanitiser, line by line, so that the lines themselves are kept.
std::string ForTerminal(absl::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back(export_internal::ReplaceControlCharacters(line));
  }
  return absl::StrJoin(lines, "\n");
}

// Usage errors (tools/exit_code.h) exit 2; every other error, bad input data included, 1.
ExitCode Fail(const absl::Status& status) {
  std::cerr << "collect: " << ForTerminal(status.message()) << "\n";
  // Cancelled: a signal stopped the run before anything was measured (nothing to save).
  if (absl::IsCancelled(status)) return ExitCode::kInterrupted;
  return ExitCodeFor(status);
}

// How the user ran collect, for the commands it prints (set once in main).
const LaunchContext& Launch() {
  static const LaunchContext* const context = new LaunchContext();
  return *context;
}
LaunchContext& MutableLaunch() { return const_cast<LaunchContext&>(Launch()); }

ExitCode Show(const Invocation& invocation) {
  const std::vector<std::string>& arguments = invocation.arguments;
  if (absl::Status trace = ValidateTraceFlag(); !trace.ok()) return Fail(AsUsageError(trace));
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return Fail(tables.status());
  absl::StatusOr<v1::Measurement> measurement =
      LoadAnyMeasurement(ResolveUserPath(arguments.front()));
  if (!measurement.ok()) return Fail(measurement.status());
  if (const std::string format = absl::GetFlag(FLAGS_format); format != "table") {
    absl::StatusOr<FlatFormat> flat = ParseFlatFormat(format);
    if (!flat.ok()) return Fail(AsUsageError(flat.status()));
    std::cout << FormatFlatMetrics(*measurement, *flat);
    // The flat metrics own stdout (a script reads them): the trace's note goes to stderr.
    if (absl::Status trace = WriteTraceIfRequested(*measurement, std::cerr); !trace.ok()) {
      return Fail(trace);
    }
    return ExitCode::kOk;
  }
  std::cout << FormatSummaryTables(*measurement, *tables);
  if (measurement->metadata().interrupted()) {
    std::cout << "\nInterrupted (" << measurement->metadata().interruption()
              << "): the measurement holds what was done until then.\n";
  }
  if (absl::Status trace = WriteTraceIfRequested(*measurement, std::cout); !trace.ok()) {
    return Fail(trace);
  }
  if (!absl::GetFlag(FLAGS_serve).empty()) {
    if (absl::Status serving = StartLiveView(); !serving.ok()) return Fail(serving);
    LiveView()->SetFinal(*measurement);
    std::cout.flush();
    std::cerr << "collect: serving " << measurement->metadata().name() << " until Ctrl-C\n";
    ServeUntilSignal(absl::InfiniteDuration());
    LiveView()->Stop();
  }
  return ExitCode::kOk;
}

ExitCode Report(const Invocation& invocation) {
  const std::vector<std::string>& arguments = invocation.arguments;
  const std::string directory = MeasurementDirectoryFor(ResolveUserPath(arguments.front()));
  absl::StatusOr<v1::Measurement> measurement = LoadAnyMeasurement(directory);
  if (!measurement.ok()) return Fail(measurement.status());
  const std::string requested = absl::GetFlag(FLAGS_html_output);
  if (!requested.empty()) {
    const std::string output = ResolveUserPath(requested);
    if (absl::Status written = WriteHtmlReport(*measurement, output); !written.ok()) {
      return Fail(written);
    }
    std::cout << "HTML report written to " << output << "\n";
    return ExitCode::kOk;
  }
  // A shared measurement is often read-only: like `profile`, fall back to the current directory,
  // then $TMPDIR, and say so.
  const std::string base = directory.substr(directory.find_last_of('/') + 1);
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string file =
      (base.empty() || base == "." || base == ".." ? "measurement" : base) + ".html";
  const std::vector<std::string> candidates = {
      directory + ".html", ResolveUserPath(file),
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp", "/", file)};
  absl::Status last;
  for (const std::string& output : candidates) {
    last = WriteHtmlReport(*measurement, output);
    if (last.ok()) {
      std::cout << "HTML report written to " << output << "\n";
      return ExitCode::kOk;
    }
    std::cerr << "collect: note: cannot write the report to " << output << ": " << last.message()
              << "\n";
  }
  return Fail(last);
}

ExitCode Profile(const Invocation& invocation) {
  const std::vector<std::string>& arguments = invocation.arguments;
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return Fail(tables.status());
  if (absl::GetFlag(FLAGS_top) < 1) {
    return Fail(
        UsageError(absl::StrCat("--top must be at least 1, got ", absl::GetFlag(FLAGS_top))));
  }
  const std::string directory = MeasurementDirectoryFor(ResolveUserPath(arguments.front()));
  absl::StatusOr<v1::Measurement> measurement = LoadAnyMeasurement(directory);
  if (!measurement.ok()) return Fail(measurement.status());
  if (measurement->profiles_size() == 0) {
    return Fail(absl::FailedPreconditionError(absl::StrCat(
        "no profiles in ", directory, ": run with --profile (threadpool) or --backend=dask")));
  }
  // Like `show` and `report`, a corrupt profile costs that profile, not the others.
  const int profiles = measurement->profiles_size();
  for (const std::string& warning : LeaveOutCorruptProfiles(&*measurement, directory)) {
    std::cerr << "collect: warning: " << ForTerminal(warning) << "\n";
  }
  if (measurement->profiles_size() == 0) {
    return Fail(absl::DataLossError(absl::StrCat("every profile in ", directory, " (", profiles,
                                                 ") is corrupt; nothing to show")));
  }
  ProfileTableOptions options;
  options.table = *tables;
  options.top = absl::GetFlag(FLAGS_top);
  options.show_wrapper_frames = absl::GetFlag(FLAGS_wrapper_frames);
  // Names use the width the terminal gives ($COLUMNS, the terminal, else 100).
  FitProfileTablesToWidth(options.table.width > 0 ? options.table.width : TerminalWidth(),
                          &options);
  absl::StatusOr<std::string> text = FormatProfileTables(*measurement, options);
  if (!text.ok()) {
    return Fail(
        absl::Status(text.status().code(), absl::StrCat(directory, ": ", text.status().message())));
  }
  std::cout << *text;
  const std::string requested = absl::GetFlag(FLAGS_output);
  std::string output;
  if (!requested.empty()) {
    output = ResolveUserPath(requested);
    if (absl::Status status = EnsureWritableDirectory(output); !status.ok()) {
      return Fail(absl::Status(status.code(), absl::StrCat("--output: ", status.message())));
    }
  } else {
    // A shared measurement is often read-only: fall back to a writable place and say so.
    const char* tmpdir = std::getenv("TMPDIR");
    std::vector<std::string> problems;
    absl::StatusOr<std::string> chosen = FirstWritableDirectory(
        DefaultProfileOutputDirectories(directory, ResolveUserPath("."),
                                        tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp"),
        &problems);
    if (!chosen.ok()) return Fail(chosen.status());
    for (const std::string& problem : problems) {
      std::cerr << "collect: note: cannot write the profile files to " << problem << "\n";
    }
    output = *chosen;
  }
  ProfileFilesOptions file_options;
  file_options.show_wrapper_frames = options.show_wrapper_frames;
  absl::StatusOr<WrittenProfileFiles> written =
      WriteProfileFiles(*measurement, output, file_options);
  if (!written.ok()) return Fail(written.status());
  std::cout << "\nFolded stacks (flamegraph.pl, speedscope) and flame graphs written to " << output
            << ":\n";
  for (const std::string& path : written->paths) std::cout << "  " << path << "\n";
  if (!written->merge_problem.empty()) {
    std::cerr << "collect: warning: no merged profile.folded and flamegraph.svg: "
              << written->merge_problem << "\n";
  }
  if (written->stacks_left_out > 0) {
    std::cerr << "collect: warning: " << written->stacks_left_out << " stacks ("
              << written->samples_left_out
              << " samples) left out of the .folded files: they would exceed "
              << (ProfileFilesOptions().max_folded_bytes >> 20)
              << " MiB in all (each line repeats its whole stack)\n";
  }
  if (written->profiles_left_out > 0) {
    std::cerr << "collect: warning: files for " << written->profiles_left_out
              << " more profiles not written (at most " << ProfileFilesOptions().max_profiles
              << "; the merged files include them)\n";
  }
  return ExitCode::kOk;
}

ExitCode Compare(const Invocation& invocation) {
  const std::vector<std::string>& arguments = invocation.arguments;
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return Fail(tables.status());
  std::vector<v1::Measurement> runs;
  std::vector<std::string> labels;
  ComparisonOptions options;
  // "A1,A2": repeats of one configuration, given explicitly (unless the name is a directory).
  const bool explicit_groups = std::any_of(arguments.begin(), arguments.end(), [](auto& a) {
    return absl::StrContains(a, ',') && !std::filesystem::exists(ResolveUserPath(a));
  });
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::vector<std::string> directories = {arguments[i]};
    if (explicit_groups && !std::filesystem::exists(ResolveUserPath(arguments[i]))) {
      directories = absl::StrSplit(arguments[i], ',', absl::SkipEmpty());
    }
    for (const std::string& directory : directories) {
      absl::StatusOr<v1::Measurement> run = LoadAnyMeasurement(ResolveUserPath(directory));
      if (!run.ok()) return Fail(run.status());
      runs.push_back(ComparedPart(*std::move(run)));  // one big run in memory at a time
      labels.push_back(directory);
      if (explicit_groups) options.configuration_of_run.push_back(static_cast<int>(i));
    }
  }
  options.unicode = tables->unicode;
  options.regression_threshold_percent = absl::GetFlag(FLAGS_regression_threshold);
  // Given explicitly, the threshold alone gates where no noise estimate exists.
  if (absl::StatusOr<ScannedCommandLine> line = ScanCommandLine(invocation.argc, invocation.argv);
      line.ok()) {
    options.threshold_given =
        std::count(line->flags.begin(), line->flags.end(), std::string("regression_threshold")) > 0;
  }
  options.fail_on_regression = absl::GetFlag(FLAGS_fail_on_regression);
  absl::StatusOr<ComparisonFormat> format = ParseComparisonFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) return Fail(AsUsageError(format.status()));
  options.format = *format;
  // CompareRuns' errors are about the arguments (nothing to compare).
  absl::StatusOr<ComparisonResult> result = CompareRuns(labels, runs, options);
  if (!result.ok()) return Fail(AsUsageError(result.status()));
  std::cout << result->text;
  if (const std::string html = absl::GetFlag(FLAGS_html_output); !html.empty()) {
    const absl::Status written = WriteComparisonHtml(ResolveUserPath(html), *result);
    if (!written.ok()) return Fail(written);
    std::cerr << "collect: wrote " << html << "\n";
  }
  return result->failed() ? ExitCode::kRegression : ExitCode::kOk;
}

// Every flag problem at once, each naming its flag, before anything runs.
absl::Status ValidateRunFlags() {
  std::vector<std::string> problems = ThreadPoolFlagProblems();
  const std::string label = absl::GetFlag(FLAGS_label);
  if (label.size() > 200 || std::any_of(label.begin(), label.end(),
                                        [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    problems.push_back("--label must be one line of at most 200 characters");
  }
  const double interval = absl::GetFlag(FLAGS_interval);
  if (!(interval > 0) || interval > 3600) {
    problems.push_back(
        absl::StrCat("--interval must be a number of seconds in (0, 3600], got ", interval));
  }
  const double checkpoint = absl::GetFlag(FLAGS_checkpoint_interval);
  if (!(checkpoint >= 0) || checkpoint > 3600) {
    problems.push_back(absl::StrCat(
        "--checkpoint_interval must be a number of seconds in [0, 3600], got ", checkpoint));
  }
  const double grace = absl::GetFlag(FLAGS_grace_period);
  if (!(grace >= 0) || grace > 3600) {
    problems.push_back(
        absl::StrCat("--grace_period must be a number of seconds in [0, 3600], got ", grace));
  }
  if (absl::GetFlag(FLAGS_chunk_size) < 1) {
    problems.push_back(
        absl::StrCat("--chunk_size must be at least 1, got ", absl::GetFlag(FLAGS_chunk_size)));
  }
  if (absl::GetFlag(FLAGS_events_per_file) < 1) {
    problems.push_back(absl::StrCat("--events_per_file must be at least 1, got ",
                                    absl::GetFlag(FLAGS_events_per_file)));
  }
  if (absl::GetFlag(FLAGS_files_per_dataset) < 1) {
    problems.push_back(absl::StrCat("--files_per_dataset must be at least 1, got ",
                                    absl::GetFlag(FLAGS_files_per_dataset)));
  }
  const std::string name = absl::GetFlag(FLAGS_name);
  if (!name.empty()) {
    if (absl::Status valid = ValidateMeasurementName(name); !valid.ok()) {
      problems.push_back(absl::StrCat("--name: ", valid.message()));
    }
  }
  if (absl::Status trace = ValidateTraceFlag(); !trace.ok()) {
    problems.push_back(std::string(trace.message()));
  }
  if (problems.empty()) return absl::OkStatus();
  return UsageError(absl::StrJoin(problems, "; "));
}

// Where a run's measurement goes; checked before the run so that it fails early.
struct OutputPlan {
  std::string directory;
  std::string requested_name;
  TableOptions tables;
  // Held for the whole run when --name is given: a second run with that name is refused at its
  // start instead of running in full and failing to save.
  std::optional<NameClaim> name_claim;
  // Set when the measurement went to the fallback directory (store/save_fallback.h): the run
  // then exits 6 whatever else happened, so that a script looks for it there.
  mutable bool saved_elsewhere = false;
};

// `code`, or 6 when the measurement was saved in the fallback directory.
ExitCode WithSaveOutcome(const OutputPlan& plan, ExitCode code) {
  return plan.saved_elsewhere ? ExitCode::kSavedElsewhere : code;
}

absl::StatusOr<OutputPlan> PlanOutput() {
  OutputPlan plan;
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return tables.status();
  plan.tables = *tables;
  plan.directory = ResolveUserPath(absl::GetFlag(FLAGS_output_dir));
  if (absl::Status status = EnsureWritableDirectory(plan.directory); !status.ok()) {
    return absl::Status(status.code(), absl::StrCat("--output_dir: ", status.message()));
  }
  plan.requested_name = absl::GetFlag(FLAGS_name);
  if (!plan.requested_name.empty()) {
    absl::StatusOr<NameClaim> claim = NameClaim::Claim(plan.directory, plan.requested_name);
    if (absl::IsUnavailable(claim.status())) return AsUsageError(claim.status());
    if (!claim.ok()) return claim.status();
    plan.name_claim = std::move(*claim);
    std::cerr << "collect: the name '" << plan.requested_name << "' is claimed for this run in "
              << plan.directory << " (another run with it is refused until this one ends)\n";
  }
  return plan;
}

// How the measurement is made and where it goes: everything a save needs, even one the
// session makes by itself after an interruption.
SessionOptions MakeSessionOptions(const OutputPlan& plan, int argc, char** argv) {
  SessionOptions options;
  options.interval = absl::Seconds(absl::GetFlag(FLAGS_interval));
  options.output_dir = plan.directory;
  options.metadata.set_name(plan.requested_name);  // empty: the session's UTC start time
  options.metadata.set_tool_version(kToolVersion);
  for (int i = 0; i < argc; ++i) options.metadata.add_command_line(argv[i]);
  (*options.metadata.mutable_configuration())["interval_seconds"] =
      absl::StrCat(absl::GetFlag(FLAGS_interval));
  options.grace_period = absl::Seconds(absl::GetFlag(FLAGS_grace_period));
  options.checkpoint_interval = absl::Seconds(absl::GetFlag(FLAGS_checkpoint_interval));
  // collect is a program: it owns its signals (first: stop and save; second: exit at once).
  options.handle_signals = true;
  if (LiveView() != nullptr) {
    options.on_start = [](const MeasurementSession* s) { LiveView()->Watch(s); };
    options.on_end = [](const MeasurementSession* s) { LiveView()->Unwatch(s); };
  }
  options.program_name = "collect";
  return options;
}

// The measured code's identity (tools/code_identity.h): --label and the ELF build-id of
// `executable` ("" when there is none, e.g. tracking until Ctrl-C).
void RecordCodeIdentity(const std::string& executable,
                        google::protobuf::Map<std::string, std::string>* configuration) {
  const std::string label = absl::GetFlag(FLAGS_label);
  if (!label.empty()) (*configuration)[kLabelKey] = label;
  if (executable.empty()) return;
  absl::StatusOr<std::string> id = ElfBuildId(executable);
  if (id.ok()) {
    (*configuration)[kCodeBuildIdKey] = *id;
  } else if (label.empty()) {
    std::cerr << "collect: note: the measured code has no build-id (" << id.status().message()
              << "); give --label=VERSION so that compare tells versions apart\n";
  }
}

// Exit 130: the run was cut short, or a signal came while it was being saved. Not when the
// signal was how the run was meant to end (tracking until Ctrl-C).
bool Interrupted(const MeasurementSession& session, const v1::Measurement& measurement) {
  return measurement.metadata().interrupted() ||
         (session.interrupted() && !session.options().signal_is_the_end);
}

// Prints the tables (and `extra_output`) and the warnings, saves the measurement through its
// session, writes the trace and the HTML report if asked. Returns the directory written.
absl::StatusOr<std::string> FinishSaving(
    const OutputPlan& plan, const v1::Measurement& measurement, const std::string& extra_output,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&)>& save,
    const MeasurementSession* session) {
  std::cout << FormatSummaryTables(measurement, plan.tables);
  if (!extra_output.empty()) std::cout << "\n" << extra_output << "\n";
  std::cout.flush();  // the warnings follow the tables on a terminal
  for (const v1::Warning& warning : measurement.warnings()) {
    std::cerr << "collect: warning: " << ForTerminal(warning.message()) << "\n";
  }
  absl::StatusOr<SaveOutcome> outcome =
      SaveWithFallback(measurement, save, FallbackSaveDirectory());
  if (!outcome.ok()) return outcome.status();
  const absl::StatusOr<std::string> saved = outcome->path;
  if (outcome->fell_back) {
    plan.saved_elsewhere = true;
    std::cerr << "collect: could not save the measurement where asked (" << outcome->why
              << "); saved it instead to " << *saved << " (exit status 6)\n";
  }
  if (LiveView() != nullptr) LiveView()->SetFinal(measurement);
  // What matters, still on screen when the tables have scrolled away.
  std::cout << "\n" << FormatRecap(measurement, plan.tables);
  std::cout << "\nMeasurement saved to " << *saved << "\n"
            << "Show it again with: "
            << FollowUpCommand(Launch(), {"show", DisplayPath(Launch(), *saved)}) << "\n";
  if (!absl::GetFlag(FLAGS_html)) {
    std::cout << "HTML report (plots, timeline): "
              << FollowUpCommand(Launch(), {"report", DisplayPath(Launch(), *saved)}) << "\n";
  }
  if (measurement.profiles_size() > 0) {
    int64_t samples = 0;
    for (const v1::Profile& profile : measurement.profiles()) {
      // Per-worker profiles only: section and task-prefix profiles repeat their samples.
      if (!profile.section().empty() || !profile.task_prefix().empty()) continue;
      samples += ProfileSampleCount(profile);
    }
    // A profile without samples (a run too short for the sampling interval) has nothing to show.
    if (samples > 0) {
      std::cout << "Profile: " << samples << " samples; hot functions and flame graphs with: "
                << FollowUpCommand(Launch(), {"profile", DisplayPath(Launch(), *saved)}) << "\n";
    }
  }
  std::cout.flush();
  if (measurement.metadata().interrupted()) {
    std::cerr << "collect: interrupted (" << measurement.metadata().interruption()
              << "): the measurement holds what was done until then: " << *saved << "\n";
  } else if (session != nullptr && Interrupted(*session, measurement)) {
    std::cerr << "collect: interrupted (" << session->interruption()
              << ") after the run: the measurement is complete: " << *saved << "\n";
  }
  if (absl::Status trace = WriteTraceIfRequested(measurement, std::cout); !trace.ok()) {
    return trace;
  }
  if (absl::GetFlag(FLAGS_html)) {
    const std::string report = *saved + ".html";
    if (absl::Status written = WriteHtmlReport(measurement, report); !written.ok()) {
      return written;
    }
    std::cout << "HTML report written to " << report << "\n";
  }
  return saved;
}

absl::StatusOr<std::string> Finish(const OutputPlan& plan, MeasurementSession& session,
                                   const v1::Measurement& measurement,
                                   const std::string& extra_output) {
  return FinishSaving(
      plan, measurement, extra_output,
      [&session](const v1::Measurement& m) { return session.Save(m); }, &session);
}

// A run on a cluster: the backend tracks while `command` runs (or for --duration, or until
// Ctrl-C). Exit status: 0; 3 when the measurement is partial (the backend lost sight of the
// engine for a while); 4 when the command failed; 130 when interrupted; the measurement is saved
// in every case.
ExitCode RunExternal(const OutputPlan& plan, SessionOptions session_options,
                     AbstractMetricsBackend& backend, const std::vector<std::string>& command) {
  const double duration = absl::GetFlag(FLAGS_duration);
  ExternalRunOptions options;
  options.command = command;
  options.duration = absl::Seconds(duration);
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["backend"] = std::string(backend.name());
  if (!command.empty()) configuration["command"] = absl::StrJoin(command, " ");
  const char* search_path = std::getenv("PATH");
  absl::StatusOr<std::string> executable =
      command.empty() ? absl::NotFoundError("no command")
                      : FindExecutable(command.front(), search_path == nullptr ? "" : search_path);
  RecordCodeIdentity(executable.ok() ? *executable : "", &configuration);
  options.session = std::move(session_options);
  if (backend.ReadsFinishedRun() && command.empty()) {
    // Nothing to wait for: the logs of a finished run are read and measured at once.
    std::cerr << "collect: reading the run's record with the " << backend.name() << " backend\n";
  } else {
    std::cerr << "collect: tracking with the " << backend.name() << " backend "
              << (command.empty() ? (duration > 0 ? absl::StrCat("for ", duration, " s")
                                                  : std::string("until Ctrl-C"))
                                  : absl::StrCat("while '", absl::StrJoin(command, " "), "' runs"))
              << "\n";
  }
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, std::move(options));
  if (!result.ok()) return Fail(result.status());
  absl::StatusOr<std::string> saved = Finish(plan, *result->session, result->measurement, "");
  if (!saved.ok()) return Fail(saved.status());
  if (Interrupted(*result->session, result->measurement))
    return WithSaveOutcome(plan, ExitCode::kInterrupted);
  if (result->partial) {
    std::cerr << "collect: the measurement is partial: the backend lost sight of the engine "
                 "for a while (see tracking gaps)\n";
    return WithSaveOutcome(plan, ExitCode::kPartial);
  }
  if (result->command_exit_code != 0) {
    std::cerr << "collect: the command exited with status " << result->command_exit_code << "\n";
    return WithSaveOutcome(plan, ExitCode::kCommandFailed);
  }
  return WithSaveOutcome(plan, ExitCode::kOk);
}

// When a chunk of the sample analysis failed on damaged data in collect's own cache (a file
// changed after it was generated, or the storage failed), the way out: regenerate it.
std::string SampleCacheHint(const v1::ChunkRecord& failed, absl::string_view cache_dir) {
  if (cache_dir.empty()) return "";
  const std::string root = absl::StrCat(absl::StripSuffix(cache_dir, "/"), "/");
  const absl::string_view file = failed.file();
  if (!absl::StartsWith(file, root)) return "";
  if (!absl::StrContains(failed.error_text(), "CRC mismatch") &&
      !absl::StrContains(failed.error_text(), "columnar file")) {
    return "";
  }
  const absl::string_view rest = file.substr(root.size());
  const std::string dataset_dir = absl::StrCat(root, rest.substr(0, rest.find('/')));
  return absl::StrCat("collect: the sample dataset in ", dataset_dir,
                      " is damaged; to regenerate it, delete it (rm -r ", dataset_dir,
                      ") and run again\n");
}

// A run whose chunks failed exits 1, naming how many and the first failure (and, for the sample
// analysis, how to mend a damaged cache).
ExitCode ReportFailedChunks(const v1::Measurement& measurement,
                            absl::string_view sample_cache_dir = "") {
  int64_t failed = 0;
  const v1::ChunkRecord* first = nullptr;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.status() != v1::CHUNK_STATUS_FAILED) continue;
    if (failed++ == 0) first = &chunk;
  }
  if (first == nullptr) return ExitCode::kOk;
  std::cerr << "collect: " << failed << " of " << measurement.chunks_size()
            << " chunks failed; first failure: " << first->file() << " entries ["
            << first->entry_start() << ", " << first->entry_stop() << "): " << first->error_text()
            << "\n"
            << SampleCacheHint(*first, sample_cache_dir);
  return ExitCode::kFailure;
}

// The sample analysis as Work Queue tasks. Exit status as Run's; 3 when chunks never came back
// (the measurement is saved without them).
ExitCode RunWorkQueue(int argc, char** argv) {
  if (absl::Status status = ValidateRunFlags(); !status.ok()) return Fail(status);
  bool temporary = false;
  absl::StatusOr<workqueue::WorkQueueRunOptions> options = workqueue::WorkQueueOptionsFromFlags(
      [](const std::string& path) { return ResolveUserPath(path); }, &temporary);
  if (!options.ok()) {
    // InvalidArgument: the flags' values (see workqueue_flags.h); anything else: the system.
    return Fail(absl::IsInvalidArgument(options.status()) ? AsUsageError(options.status())
                                                          : options.status());
  }
  struct RemoveTemporary {
    std::string path;
    bool keep = false;
    ~RemoveTemporary() {
      std::error_code ignored;
      if (!path.empty() && !keep) std::filesystem::remove_all(path, ignored);
    }
  } remove{temporary ? options->work_directory : ""};
  absl::StatusOr<OutputPlan> plan = PlanOutput();
  if (!plan.ok()) return Fail(plan.status());
  options->dataset.events_per_file = absl::GetFlag(FLAGS_events_per_file);
  options->dataset.files_per_dataset = absl::GetFlag(FLAGS_files_per_dataset);
  options->dataset.seed = absl::GetFlag(FLAGS_seed);
  const std::string cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options->cache_dir =
      cache_dir.empty() ? sample_analysis::DefaultCacheDirectory() : ResolveUserPath(cache_dir);
  options->chunk_size = absl::GetFlag(FLAGS_chunk_size);
  options->interval = absl::Seconds(absl::GetFlag(FLAGS_interval));
  options->grace_period = absl::Seconds(absl::GetFlag(FLAGS_grace_period));
  const int local = options->local_workers;
  const std::string password = options->password_file;
  options->on_listening = [local, password](int port) {
    if (local > 0) {
      std::cerr << "collect: Work Queue manager on port " << port << ", " << local
                << " local worker" << (local == 1 ? "" : "s") << " ("
                << workqueue::WorkerCommand("127.0.0.1", port, password) << " --cores=1)\n";
    } else {
      std::cerr << "collect: Work Queue manager on port " << port
                << ", waiting for workers; start them with:\n  "
                << workqueue::WorkerCommand(HostName(), port, password) << "\n";
    }
  };
  std::cerr << "collect: the sample analysis as Work Queue tasks of " << options->chunks_per_task
            << (options->chunks_per_task == 1 ? " chunk" : " chunks")
            << "; datasets are kept under " << options->cache_dir << "\n";
  absl::StatusOr<workqueue::WorkQueueRunResult> result =
      workqueue::RunWorkQueueSampleAnalysis(*options);
  if (!result.ok()) {
    // The local workers' logs explain why they never connected (the error names the directory).
    remove.keep = absl::IsDeadlineExceeded(result.status()) && options->local_workers > 0;
    return Fail(result.status());
  }
  v1::Measurement& measurement = result->measurement;
  auto& configuration = *measurement.mutable_metadata()->mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["backend"] = "workqueue";
  configuration["workers"] = absl::StrCat(options->local_workers);
  configuration["peak_workers"] = absl::StrCat(result->peak_workers);
  configuration["chunks_per_task"] = absl::StrCat(options->chunks_per_task);
  configuration["tasks"] = absl::StrCat(result->tasks);
  configuration["chunk_size"] = absl::StrCat(options->chunk_size);
  configuration["events_per_file"] = absl::StrCat(options->dataset.events_per_file);
  configuration["files_per_dataset"] = absl::StrCat(options->dataset.files_per_dataset);
  configuration["seed"] = absl::StrCat(options->dataset.seed);
  configuration["dataset_directory"] = result->dataset_directory;
  RecordCodeIdentity("/proc/self/exe", &configuration);  // the workers run collect's analysis
  // The measurement is assembled by the run (the manager's logs are read after it ended), so it
  // is saved here rather than through a session.
  measurement.mutable_metadata()->set_tool_version(kToolVersion);
  for (int i = 0; i < argc; ++i) measurement.mutable_metadata()->add_command_line(argv[i]);
  (*measurement.mutable_metadata()->mutable_configuration())["interval_seconds"] =
      absl::StrCat(absl::GetFlag(FLAGS_interval));
  if (!plan->requested_name.empty()) measurement.mutable_metadata()->set_name(plan->requested_name);
  if (measurement.metadata().name().empty()) {
    measurement.mutable_metadata()->set_name(MeasurementDirectoryName(
        absl::FromUnixSeconds(measurement.metadata().start_time().seconds())));
  }
  const std::string directory = plan->directory;
  const bool chosen = !plan->requested_name.empty();
  absl::StatusOr<std::string> saved = FinishSaving(
      *plan, measurement, sample_analysis::SummarizeDijetOutput(result->output),
      [&](const v1::Measurement& m) {
        return chosen ? SaveMeasurement(m, directory, m.metadata().name())
                      : SaveMeasurementUnderFreeName(m, directory, m.metadata().name());
      },
      nullptr);
  if (!saved.ok()) return Fail(saved.status());
  if (absl::Status kept = workqueue::KeepRunFiles(*result, *saved); !kept.ok()) {
    std::cerr << "collect: warning: " << ForTerminal(kept.message()) << "\n";
  } else {
    std::cout << "Work Queue logs (" << result->tasks << " tasks, " << result->lost_attempts
              << " lost attempts, peak " << result->peak_workers << " workers) kept in " << *saved
              << "/workqueue\n";
  }
  if (result->interrupted()) return WithSaveOutcome(*plan, ExitCode::kInterrupted);
  if (result->chunks_given_up > 0) {
    std::cerr << "collect: " << result->chunks_given_up
              << " chunks never came back (see --wq_stall_timeout); the measurement is "
                 "partial\n";
    return WithSaveOutcome(*plan, ExitCode::kPartial);
  }
  return WithSaveOutcome(*plan, ReportFailedChunks(measurement));
}

// The built-in sample analysis on the thread pool. Exit status: 0; 1 when a chunk failed; 130
// when interrupted.
ExitCode RunSample(const OutputPlan& plan, SessionOptions session_options,
                   CollectBackend& backend) {
  SampleRunOptions options;
  options.dataset.events_per_file = absl::GetFlag(FLAGS_events_per_file);
  options.dataset.files_per_dataset = absl::GetFlag(FLAGS_files_per_dataset);
  options.dataset.seed = absl::GetFlag(FLAGS_seed);
  const std::string cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options.cache_dir =
      cache_dir.empty() ? sample_analysis::DefaultCacheDirectory() : ResolveUserPath(cache_dir);
  options.chunk_size = absl::GetFlag(FLAGS_chunk_size);
  const int threads = backend.executor->threads();
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["threads"] = absl::StrCat(threads);
  configuration["chunk_size"] = absl::StrCat(options.chunk_size);
  configuration["events_per_file"] = absl::StrCat(options.dataset.events_per_file);
  configuration["files_per_dataset"] = absl::StrCat(options.dataset.files_per_dataset);
  configuration["seed"] = absl::StrCat(options.dataset.seed);
  if (absl::GetFlag(FLAGS_profile)) {
    configuration["profile_hz"] = absl::StrCat(absl::GetFlag(FLAGS_profile_hz));
  }
  RecordCodeIdentity("/proc/self/exe", &configuration);  // the sample analysis is collect
  options.session = std::move(session_options);
  const std::string sample_cache_dir = options.cache_dir;

  std::cerr << "collect: the sample analysis on " << threads
            << (threads == 1 ? " thread" : " threads") << "; datasets are kept under "
            << options.cache_dir << "\n";
  absl::StatusOr<SampleRunResult> result =
      RunSampleAnalysis(*backend.metrics, backend.executor, std::move(options));
  if (!result.ok()) return Fail(result.status());

  const v1::Measurement& measurement = result->measurement;
  absl::StatusOr<std::string> saved = Finish(plan, *result->session, measurement,
                                             sample_analysis::SummarizeDijetOutput(result->output));
  ExitCode exit_code = ExitCode::kOk;
  if (!saved.ok()) {
    exit_code = Fail(saved.status());
  } else if (Interrupted(*result->session, measurement)) {
    exit_code = ExitCode::kInterrupted;
  } else {
    exit_code = ReportFailedChunks(measurement, sample_cache_dir);
  }
  if (result->chunk_left_running) {
    // A worker thread is still inside a chunk that outlived the grace period: leave without
    // unwinding (destructors would join it or pull its state away).
    std::cout.flush();
    std::cerr.flush();
    // No destructor runs: the claim's lock goes with the process, its file is removed here.
    if (plan.name_claim.has_value()) unlink(plan.name_claim->path().c_str());
    std::_Exit(ToInt(WithSaveOutcome(plan, exit_code)));
  }
  return WithSaveOutcome(plan, exit_code);
}

// `collect [run]` in every backend: flags, output directory, backend, then the mode's run.
ExitCode Run(const Invocation& invocation) {
  const std::string backend_name = absl::GetFlag(FLAGS_backend);
  if (!invocation.command.empty() &&
      (backend_name == "threadpool" || backend_name == "workqueue")) {
    return Fail(UsageError(absl::StrCat("--backend=", backend_name,
                                        " runs the built-in sample analysis; a command to measure "
                                        "needs --backend=dask or --backend=taskvine")));
  }
  if (backend_name == "workqueue") {
    if (!absl::GetFlag(FLAGS_serve).empty()) {
      return Fail(UsageError(
          "--serve is not available with --backend=workqueue yet (it assembles its measurement "
          "from the manager's logs at the end); use it with threadpool, dask or taskvine"));
    }
    return RunWorkQueue(invocation.argc, invocation.argv);
  }
  if (absl::Status status = ValidateRunFlags(); !status.ok()) return Fail(status);
  const double duration = absl::GetFlag(FLAGS_duration);
  if (!(duration >= 0)) {
    return Fail(
        UsageError(absl::StrCat("--duration must be a number of seconds >= 0, got ", duration)));
  }
  absl::StatusOr<OutputPlan> plan = PlanOutput();
  if (!plan.ok()) return Fail(plan.status());
  absl::StatusOr<CollectBackend> backend = MakeBackend(backend_name);
  if (!backend.ok()) {
    // InvalidArgument: the backend's flags (see backend_factory.h); anything else: the system.
    return Fail(absl::IsInvalidArgument(backend.status()) ? AsUsageError(backend.status())
                                                          : backend.status());
  }
  if (absl::Status serving = StartLiveView(); !serving.ok()) return Fail(serving);
  SessionOptions session = MakeSessionOptions(*plan, invocation.argc, invocation.argv);
  const ExitCode exit_code =
      backend->executor != nullptr
          ? RunSample(*plan, std::move(session), *backend)
          : RunExternal(*plan, std::move(session), *backend->metrics, invocation.command);
  if (LiveView() != nullptr) {
    // The final figures stay up a little, so that a scraper's last scrape sees them.
    if (const double linger = absl::GetFlag(FLAGS_serve_linger); linger > 0) {
      std::cerr << "collect: serving the final figures at http://" << LiveView()->address()
                << "/ for " << linger << " s (Ctrl-C ends it)\n";
      ServeUntilSignal(absl::Seconds(linger));
    }
    LiveView()->Stop();
  }
  return exit_code;
}

// Flags of `run` that only some backends read (the others are read by every backend).
std::vector<FlagCondition> RunFlagConditions() {
  const std::vector<std::string> sample = {"threadpool", "workqueue"};
  std::vector<FlagCondition> conditions;
  auto add = [&conditions](std::vector<std::string> flags, std::vector<std::string> backends) {
    for (std::string& flag : flags) {
      conditions.push_back(FlagCondition{std::move(flag), "backend", backends});
    }
  };
  add({"threads", "profile", "profile_hz"}, {"threadpool"});
  add({"events_per_file", "files_per_dataset", "chunk_size", "cache_dir", "seed"}, sample);
  add({"duration"}, {"dask", "taskvine"});
  add({"scheduler", "dask_connect_timeout", "dask_read_timeout", "dask_max_message_mib",
       "dask_task_stream", "dask_occupancy", "dask_profiles", "dask_profile_prefixes",
       "dask_profile_interval", "dask_profile_timeout", "dask_end_timeout",
       "dask_reconnect_max_backoff"},
      {"dask"});
  add({"taskvine_logs", "follow", "taskvine_category"}, {"taskvine"});
  add({"workers", "chunks_per_task", "wq_port", "wq_password_file", "wq_connect_timeout",
       "wq_stall_timeout", "wq_work_dir", "wq_chunk_task", "wq_testing_fault"},
      {"workqueue"});
  return conditions;
}

// collect's modes. A new mode, or a new flag of a mode, is one entry (or one name) here; the
// README's Modes and Flags sections list the same.
std::vector<Command> Commands() {
  std::vector<Command> commands;

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
  run.flags = {"backend", "output_dir", "name", "label", "interval", "grace_period",
               "checkpoint_interval", "tables", "html", "dask_end_timeout", "trace", "serve",
               "serve_linger",
               // threadpool and workqueue: the sample analysis
               "events_per_file", "files_per_dataset", "chunk_size", "cache_dir", "seed", "threads",
               "profile", "profile_hz",
               // dask and taskvine
               "duration", "scheduler", "dask_connect_timeout", "dask_read_timeout",
               "dask_max_message_mib", "dask_task_stream", "dask_occupancy", "dask_profiles",
               "dask_profile_prefixes", "dask_profile_interval", "dask_profile_timeout",
               "dask_reconnect_max_backoff", "taskvine_logs", "follow", "taskvine_category",
               // workqueue
               "workers", "chunks_per_task", "wq_port", "wq_password_file", "wq_connect_timeout",
               "wq_stall_timeout", "wq_work_dir", "wq_chunk_task"};
  run.hidden_flags = {"wq_testing_fault"};  // fault injection for the tests, not for users
  run.exit_codes = {ExitCode::kOk,         ExitCode::kFailure,       ExitCode::kUsage,
                    ExitCode::kPartial,    ExitCode::kCommandFailed, ExitCode::kSavedElsewhere,
                    ExitCode::kInterrupted};
  run.conditions = RunFlagConditions();
  run.accepts_command = true;
  run.run = Run;
  commands.push_back(std::move(run));

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
  show.run = Show;
  commands.push_back(std::move(show));

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
  compare.run = Compare;
  commands.push_back(std::move(compare));

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
  report.run = Report;
  commands.push_back(std::move(report));

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
  profile.run = Profile;
  commands.push_back(std::move(profile));
  return commands;
}

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
  MutableLaunch() = CurrentLaunchContext(argv[0]);
  const std::vector<Command> commands = Commands();
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
  // protobuf logs "[libprotobuf ERROR ...]" lines for corrupt input before collect's own error,
  // which names the file and says what is wrong: keep only what aborts.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* filename,
                                     int line, const std::string& message) {
    if (level < google::protobuf::LOGLEVEL_FATAL) return;
    std::cerr << "[libprotobuf FATAL " << filename << ":" << line << "] " << message << "\n";
  });
  return roastcoffea::Main(argc, argv);
}
