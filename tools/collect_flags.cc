#include "tools/collect_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "sample_analysis/sample_dataset.h"
#include "tools/collect_commands.h"
#include "tools/threadpool_collect.h"
#include "tools/trace_flag.h"

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

RunConfig RunConfigFromFlags() {
  RunConfig config;
  config.backend = absl::GetFlag(FLAGS_backend);
  config.output_dir = absl::GetFlag(FLAGS_output_dir);
  config.name = absl::GetFlag(FLAGS_name);
  config.label = absl::GetFlag(FLAGS_label);
  config.tables = absl::GetFlag(FLAGS_tables);
  config.trace = absl::GetFlag(FLAGS_trace);
  config.serve = absl::GetFlag(FLAGS_serve);
  config.html = absl::GetFlag(FLAGS_html);
  config.interval = absl::GetFlag(FLAGS_interval);
  config.grace_period = absl::GetFlag(FLAGS_grace_period);
  config.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval);
  config.duration = absl::GetFlag(FLAGS_duration);
  config.serve_linger = absl::GetFlag(FLAGS_serve_linger);
  config.events_per_file = absl::GetFlag(FLAGS_events_per_file);
  config.files_per_dataset = absl::GetFlag(FLAGS_files_per_dataset);
  config.seed = absl::GetFlag(FLAGS_seed);
  config.chunk_size = absl::GetFlag(FLAGS_chunk_size);
  config.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  config.threadpool = ThreadPoolEngineOptionsFromFlags();
  return config;
}

ShowConfig ShowConfigFromFlags() {
  ShowConfig config;
  config.tables = absl::GetFlag(FLAGS_tables);
  config.format = absl::GetFlag(FLAGS_format);
  config.trace = absl::GetFlag(FLAGS_trace);
  config.serve = absl::GetFlag(FLAGS_serve);
  return config;
}

ReportConfig ReportConfigFromFlags() {
  ReportConfig config;
  config.html_output = absl::GetFlag(FLAGS_html_output);
  return config;
}

ProfileConfig ProfileConfigFromFlags() {
  ProfileConfig config;
  config.tables = absl::GetFlag(FLAGS_tables);
  config.top = absl::GetFlag(FLAGS_top);
  config.output = absl::GetFlag(FLAGS_output);
  config.wrapper_frames = absl::GetFlag(FLAGS_wrapper_frames);
  return config;
}

CompareConfig CompareConfigFromFlags(int argc, char** argv) {
  CompareConfig config;
  config.tables = absl::GetFlag(FLAGS_tables);
  config.format = absl::GetFlag(FLAGS_format);
  config.regression_threshold = absl::GetFlag(FLAGS_regression_threshold);
  config.fail_on_regression = absl::GetFlag(FLAGS_fail_on_regression);
  config.html_output = absl::GetFlag(FLAGS_html_output);
  // Given explicitly (on the command line or in a --flagfile), the threshold alone gates where
  // no noise estimate exists.
  if (absl::StatusOr<ScannedCommandLine> line = ScanCommandLine(argc, argv); line.ok()) {
    config.threshold_given =
        std::count(line->flags.begin(), line->flags.end(), std::string("regression_threshold")) > 0;
  }
  return config;
}

}  // namespace roastcoffea
