#include "tools/collect_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "sample_analysis/sample_dataset.h"
#include "tools/collect_commands.h"
#include "tools/dask_collect.h"
#include "tools/taskvine_collect.h"
#include "tools/threadpool_collect.h"
#include "tools/trace_flag.h"
#include "tools/workqueue/workqueue_flags.h"

ABSL_FLAG(int64_t, events_per_file,
          roastcoffea::sample_analysis::SampleDatasetSpec{}.events_per_file,
          "Sample dataset: events in each generated file.");
ABSL_FLAG(int, files_per_dataset,
          roastcoffea::sample_analysis::SampleDatasetSpec{}.files_per_dataset,
          "Sample dataset: files in each of its datasets (two QCD-like backgrounds and one "
          "dijet-resonance signal).");
ABSL_FLAG(int64_t, chunk_size, 25000, "Events per chunk (chunks are entry ranges of one file).");
ABSL_FLAG(double, interval, 0.25, "Seconds between two samples of the workers (0.001 to 3600).");
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

// The flags of every backend (and --dask_end_timeout, listed with them).
std::vector<RunFlag> EveryBackendsFlags() {
  const std::vector<std::string> every;
  const std::vector<std::string> dask = {"dask"};
  using C = RunConfig;
  return {
      {"backend", every, [](C& c) { c.backend = absl::GetFlag(FLAGS_backend); }},
      {"output_dir", every, [](C& c) { c.output_dir = absl::GetFlag(FLAGS_output_dir); }},
      {"name", every, [](C& c) { c.name = absl::GetFlag(FLAGS_name); }},
      {"label", every, [](C& c) { c.label = absl::GetFlag(FLAGS_label); }},
      {"interval", every, [](C& c) { c.interval = absl::GetFlag(FLAGS_interval); }},
      {"grace_period", every, [](C& c) { c.grace_period = absl::GetFlag(FLAGS_grace_period); }},
      {"checkpoint_interval", every,
       [](C& c) { c.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval); }},
      {"tables", every, [](C& c) { c.tables = absl::GetFlag(FLAGS_tables); }},
      {"html", every, [](C& c) { c.html = absl::GetFlag(FLAGS_html); }},
      {"dask_end_timeout", dask,
       [](C& c) { c.dask.end_timeout = absl::GetFlag(FLAGS_dask_end_timeout); }},
      {"trace", every, [](C& c) { c.trace = absl::GetFlag(FLAGS_trace); }},
      {"serve", every, [](C& c) { c.serve = absl::GetFlag(FLAGS_serve); }},
      {"serve_linger", every, [](C& c) { c.serve_linger = absl::GetFlag(FLAGS_serve_linger); }},
  };
}

// threadpool and workqueue: the sample analysis.
std::vector<RunFlag> SampleAnalysisFlags() {
  const std::vector<std::string> threadpool = {"threadpool"};
  const std::vector<std::string> sample = {"threadpool", "workqueue"};
  using C = RunConfig;
  return {
      {"events_per_file", sample,
       [](C& c) { c.events_per_file = absl::GetFlag(FLAGS_events_per_file); }},
      {"files_per_dataset", sample,
       [](C& c) { c.files_per_dataset = absl::GetFlag(FLAGS_files_per_dataset); }},
      {"chunk_size", sample, [](C& c) { c.chunk_size = absl::GetFlag(FLAGS_chunk_size); }},
      {"cache_dir", sample, [](C& c) { c.cache_dir = absl::GetFlag(FLAGS_cache_dir); }},
      {"seed", sample, [](C& c) { c.seed = absl::GetFlag(FLAGS_seed); }},
      {"threads", threadpool, [](C& c) { c.threadpool.threads = absl::GetFlag(FLAGS_threads); }},
      {"profile", threadpool, [](C& c) { c.threadpool.profile = absl::GetFlag(FLAGS_profile); }},
      {"profile_hz", threadpool,
       [](C& c) { c.threadpool.profile_hz = absl::GetFlag(FLAGS_profile_hz); }},
  };
}

// dask and taskvine: the engines collect tracks.
std::vector<RunFlag> EngineFlags() {
  const std::vector<std::string> engines = {"dask", "taskvine"};
  const std::vector<std::string> dask = {"dask"};
  const std::vector<std::string> taskvine = {"taskvine"};
  using C = RunConfig;
  return {
      {"duration", engines, [](C& c) { c.duration = absl::GetFlag(FLAGS_duration); }},
      {"scheduler", dask, [](C& c) { c.dask.scheduler = absl::GetFlag(FLAGS_scheduler); }},
      {"dask_connect_timeout", dask,
       [](C& c) { c.dask.connect_timeout = absl::GetFlag(FLAGS_dask_connect_timeout); }},
      {"dask_read_timeout", dask,
       [](C& c) { c.dask.read_timeout = absl::GetFlag(FLAGS_dask_read_timeout); }},
      {"dask_max_message_mib", dask,
       [](C& c) { c.dask.max_message_mib = absl::GetFlag(FLAGS_dask_max_message_mib); }},
      {"dask_task_stream", dask,
       [](C& c) { c.dask.task_stream = absl::GetFlag(FLAGS_dask_task_stream); }},
      {"dask_occupancy", dask,
       [](C& c) { c.dask.occupancy = absl::GetFlag(FLAGS_dask_occupancy); }},
      {"dask_profiles", dask, [](C& c) { c.dask.profiles = absl::GetFlag(FLAGS_dask_profiles); }},
      {"dask_profile_prefixes", dask,
       [](C& c) { c.dask.profile_prefixes = absl::GetFlag(FLAGS_dask_profile_prefixes); }},
      {"dask_profile_interval", dask,
       [](C& c) { c.dask.profile_interval = absl::GetFlag(FLAGS_dask_profile_interval); }},
      {"dask_profile_timeout", dask,
       [](C& c) { c.dask.profile_timeout = absl::GetFlag(FLAGS_dask_profile_timeout); }},
      {"dask_reconnect_max_backoff", dask,
       [](C& c) {
         c.dask.reconnect_max_backoff = absl::GetFlag(FLAGS_dask_reconnect_max_backoff);
       }},
      {"taskvine_logs", taskvine,
       [](C& c) { c.taskvine.logs = absl::GetFlag(FLAGS_taskvine_logs); }},
      {"follow", taskvine, [](C& c) { c.taskvine.follow = absl::GetFlag(FLAGS_follow); }},
      {"taskvine_category", taskvine,
       [](C& c) { c.taskvine.chunk_category = absl::GetFlag(FLAGS_taskvine_category); }},
  };
}

// workqueue: the sample analysis as Work Queue tasks.
std::vector<RunFlag> WorkQueueFlags() {
  const std::vector<std::string> workqueue = {"workqueue"};
  using C = RunConfig;
  return {
      {"workers", workqueue, [](C& c) { c.workqueue.workers = absl::GetFlag(FLAGS_workers); }},
      {"chunks_per_task", workqueue,
       [](C& c) { c.workqueue.chunks_per_task = absl::GetFlag(FLAGS_chunks_per_task); }},
      {"wq_port", workqueue, [](C& c) { c.workqueue.port = absl::GetFlag(FLAGS_wq_port); }},
      {"wq_password_file", workqueue,
       [](C& c) { c.workqueue.password_file = absl::GetFlag(FLAGS_wq_password_file); }},
      {"wq_connect_timeout", workqueue,
       [](C& c) { c.workqueue.connect_timeout = absl::GetFlag(FLAGS_wq_connect_timeout); }},
      {"wq_stall_timeout", workqueue,
       [](C& c) { c.workqueue.stall_timeout = absl::GetFlag(FLAGS_wq_stall_timeout); }},
      {"wq_work_dir", workqueue,
       [](C& c) { c.workqueue.work_dir = absl::GetFlag(FLAGS_wq_work_dir); }},
      {"wq_chunk_task", workqueue,
       [](C& c) { c.workqueue.chunk_task = absl::GetFlag(FLAGS_wq_chunk_task); }},
      {"wq_testing_fault", workqueue,
       [](C& c) { c.workqueue.testing_fault = absl::GetFlag(FLAGS_wq_testing_fault); },
       /*hidden=*/true},
  };
}

}  // namespace

const std::vector<RunFlag>& RunFlags() {
  static const auto* const kFlags = [] {
    auto* flags = new std::vector<RunFlag>();
    for (auto group : {EveryBackendsFlags, SampleAnalysisFlags, EngineFlags, WorkQueueFlags}) {
      std::vector<RunFlag> more = group();
      flags->insert(flags->end(), more.begin(), more.end());
    }
    return flags;
  }();
  return *kFlags;
}

RunConfig RunConfigFromFlags() {
  RunConfig config;
  for (const RunFlag& flag : RunFlags()) flag.read(config);
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
