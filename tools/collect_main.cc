// collect: run an analysis with performance metrics collected, print the tables, save the
// measurement; or show a saved one.
//
//   collect [flags]            run the built-in sample analysis (threadpool backend)
//   collect show DIR           print the tables of a saved measurement
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "export/measurement_io.h"
#include "export/tables.h"
#include "tools/paths.h"
#include "tools/sample_analysis/sample_dataset.h"
#include "tools/sample_run.h"
#include "tools/trace_flag.h"

namespace {

int AllCores() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace

ABSL_FLAG(int, threads, AllCores(),
          "Worker threads that process chunks (default: all cores of this machine).");
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
          "e.g. 2026-11-22T08-15-03Z). An existing directory is never overwritten.");
ABSL_FLAG(std::string, cache_dir, "",
          "Where the generated sample dataset is kept between runs (default: "
          "$ROASTCOFFEA_CACHE_DIR, else $XDG_CACHE_HOME/roastcoffea, else "
          "~/.cache/roastcoffea).");
ABSL_FLAG(uint64_t, seed, roastcoffea::sample_analysis::SampleDatasetSpec{}.seed, "Sample dataset: random seed of the event generator.");
ABSL_FLAG(std::string, tables, "auto",
          "Table style: auto (Unicode boxes on a terminal unless NO_COLOR is set, else ASCII), "
          "unicode or ascii.");

namespace roastcoffea {
namespace {

constexpr char kToolVersion[] = "0.1.0";

constexpr char kUsage[] = R"(measures the performance of a chunked analysis.

Usage:
  collect [flags]          Run the built-in sample analysis (a dijet analysis over a generated
                           dataset of compressed columnar files) on a thread pool, with every
                           chunk tracked and the worker threads sampled. Prints the tables and
                           saves the measurement under --output_dir.
  collect show DIR         Print the tables of a measurement saved earlier.

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
    return absl::InvalidArgumentError(
        absl::StrCat("--tables must be auto, unicode or ascii, got '", style, "'"));
  }
  return options;
}

int Fail(const absl::Status& status) {
  std::cerr << "collect: " << status.message() << "\n";
  return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

int Show(const std::vector<std::string>& arguments) {
  if (arguments.size() != 1) {
    return Fail(absl::InvalidArgumentError("usage: collect show DIR (one measurement directory)"));
  }
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return Fail(tables.status());
  absl::StatusOr<v1::Measurement> measurement =
      LoadMeasurement(ResolveUserPath(arguments.front()));
  if (!measurement.ok()) return Fail(measurement.status());
  std::cout << FormatSummaryTables(*measurement, *tables);
  if (absl::Status trace = WriteTraceIfRequested(*measurement, std::cout); !trace.ok()) {
    return Fail(trace);
  }
  return 0;
}

// Every flag problem at once, each naming its flag, before anything runs.
absl::Status ValidateRunFlags() {
  std::vector<std::string> problems;
  if (absl::GetFlag(FLAGS_threads) < 1) {
    problems.push_back(absl::StrCat("--threads must be at least 1, got ",
                                    absl::GetFlag(FLAGS_threads)));
  }
  const double interval = absl::GetFlag(FLAGS_interval);
  if (!(interval > 0) || interval > 3600) {
    problems.push_back(
        absl::StrCat("--interval must be a number of seconds in (0, 3600], got ", interval));
  }
  if (absl::GetFlag(FLAGS_chunk_size) < 1) {
    problems.push_back(absl::StrCat("--chunk_size must be at least 1, got ",
                                    absl::GetFlag(FLAGS_chunk_size)));
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
  if (name.find('/') != std::string::npos || name == "." || name == "..") {
    problems.push_back(absl::StrCat("--name must be a plain directory name, got '", name, "'"));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

int Run(int argc, char** argv) {
  if (absl::Status status = ValidateRunFlags(); !status.ok()) return Fail(status);
  absl::StatusOr<TableOptions> tables = TableStyle();
  if (!tables.ok()) return Fail(tables.status());
  const std::string output_dir = ResolveUserPath(absl::GetFlag(FLAGS_output_dir));
  // Fail now, not after the run, if the results could not be saved.
  if (absl::Status status = EnsureWritableDirectory(output_dir); !status.ok()) {
    return Fail(absl::Status(status.code(),
                             absl::StrCat("--output_dir: ", status.message())));
  }

  const std::string requested_name = absl::GetFlag(FLAGS_name);
  if (!requested_name.empty()) {
    const std::string target = absl::StrCat(output_dir, "/", requested_name);
    struct stat info;
    if (stat(target.c_str(), &info) == 0) {
      return Fail(absl::AlreadyExistsError(absl::StrCat(
          "measurement directory '", target,
          "' already exists and is never overwritten; choose another --name")));
    }
  }

  SampleRunOptions options;
  options.dataset.events_per_file = absl::GetFlag(FLAGS_events_per_file);
  options.dataset.files_per_dataset = absl::GetFlag(FLAGS_files_per_dataset);
  options.dataset.seed = absl::GetFlag(FLAGS_seed);
  const std::string cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options.cache_dir = cache_dir.empty() ? sample_analysis::DefaultCacheDirectory()
                                        : ResolveUserPath(cache_dir);
  options.chunk_size = absl::GetFlag(FLAGS_chunk_size);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.interval = absl::Seconds(absl::GetFlag(FLAGS_interval));

  std::cerr << "collect: sample dataset in " << options.cache_dir
            << " (generated on first use), " << options.threads << " threads\n";
  absl::StatusOr<SampleRunResult> result = RunSampleAnalysis(options);
  if (!result.ok()) return Fail(result.status());

  v1::Measurement& measurement = result->measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
  const absl::Time start = absl::FromUnixSeconds(metadata.start_time().seconds());
  const std::string name =
      requested_name.empty() ? MeasurementDirectoryName(start) : requested_name;
  metadata.set_name(name);
  metadata.set_tool_version(kToolVersion);
  for (int i = 0; i < argc; ++i) metadata.add_command_line(argv[i]);
  auto& configuration = *metadata.mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["threads"] = absl::StrCat(options.threads);
  configuration["chunk_size"] = absl::StrCat(options.chunk_size);
  configuration["interval_seconds"] = absl::StrCat(absl::GetFlag(FLAGS_interval));
  configuration["events_per_file"] = absl::StrCat(options.dataset.events_per_file);
  configuration["files_per_dataset"] = absl::StrCat(options.dataset.files_per_dataset);
  configuration["seed"] = absl::StrCat(options.dataset.seed);
  configuration["dataset_directory"] = result->dataset_directory;

  std::cout << FormatSummaryTables(measurement, *tables);
  std::cout << "\n" << sample_analysis::SummarizeDijetOutput(result->output) << "\n";

  absl::StatusOr<std::string> saved = SaveMeasurement(measurement, output_dir, name);
  if (!saved.ok()) return Fail(saved.status());
  std::cout << "\nMeasurement saved to " << *saved << "\n"
            << "Show it again with: ./bazelw run //tools:collect -- show " << *saved << "\n";
  if (absl::Status trace = WriteTraceIfRequested(measurement, std::cout); !trace.ok()) {
    return Fail(trace);
  }

  const int64_t failed = measurement.metrics().has_chunks()
                             ? measurement.metrics().chunks().num_failed_chunks()
                             : 0;
  if (failed > 0) {
    for (const v1::ChunkRecord& chunk : measurement.chunks()) {
      if (chunk.status() != v1::CHUNK_STATUS_FAILED) continue;
      std::cerr << "collect: " << failed << " of " << measurement.chunks_size()
                << " chunks failed; first failure: " << chunk.file() << " entries ["
                << chunk.entry_start() << ", " << chunk.entry_stop()
                << "): " << chunk.error_text() << "\n";
      break;
    }
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace roastcoffea

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(roastcoffea::kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> arguments(positional.begin() + 1, positional.end());
  if (arguments.empty() || arguments.front() == "run") {
    if (arguments.size() > 1) {
      std::cerr << "collect: unexpected arguments after 'run'\n";
      return 2;
    }
    return roastcoffea::Run(argc, argv);
  }
  if (arguments.front() == "show") {
    return roastcoffea::Show({arguments.begin() + 1, arguments.end()});
  }
  std::cerr << "collect: unknown mode '" << arguments.front()
            << "' (modes: run, show DIR; see --help)\n";
  return 2;
}
