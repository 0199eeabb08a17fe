// Large-but-plausible TaskVine logs through the backend and //aggregation, as collect runs them
// (without saving): the real LNNI log (testdata) followed by
//   * ManyIdleWorkers/N: N more `WORKER wK CONNECTION` records of workers that never run
//     anything (a flood of pilot connections);
//   * ManySilentWorkers/N: the same N connections, then a MANAGER END 400 s later: every one of
//     them died silently (RunModel::MarkLogComplete);
//   * ManyTinyTasks/N: N more tasks of the chunk category (READY, RUNNING, DONE), all on one of
//     the run's workers.
// and, from files to a measurement as `collect --backend=taskvine --taskvine_logs=DIR` makes it
// (ReadFinishedTaskVineRun, then Measure or MeasureRun, then the save):
//   * LogOnlyRun/N: a run of N tasks of category "processing" on 100 one-core workers, 0.5 s
//     each, back to back (READY, RUNNING, WAITING_RETRIEVAL, RETRIEVED with the resource
//     monitor's figures, DONE: ~660 B of log per task), as the issue #25 report measured it.
// Time and peak resident memory must grow linearly with a small constant: the counter
// peak_rss_per_item_bytes is (peak RSS during the iteration - RSS before it) / N, which includes
// the log's own bytes held by nothing (the backend reads it line by line).
//
//   ./bazelw run -c opt //bench:taskvine_scale_benchmark
//
// The logs are generated once into /tmp/roastcoffea-taskvine-scale-<kind>-<N>/.
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "aggregation/measure.h"
#include "backends/taskvine/taskvine_backend.h"
#include "backends/taskvine/test_util.h"
#include "bench/gen_taskvine_log.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "ingest/taskvine_run.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

const char kData[] = "backends/taskvine/testdata/";

std::string ReadTestdata(const std::string& name) {
  // Under `bazel run` the working directory is the runfiles tree.
  std::string contents;
  if (!taskvine::ReadWholeFile(std::string(kData) + name, &contents).ok()) {
    fprintf(stderr, "cannot read %s from the runfiles\n", name.c_str());
    exit(1);
  }
  return contents;
}

// The time (first field) of the log's last record.
int64_t LastTime(const std::string& log) {
  int64_t last = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    int64_t t = 0;
    if (!line.empty() && line.front() != '#' &&
        absl::SimpleAtoi(line.substr(0, line.find(' ')), &t)) {
      last = t;
    }
  }
  return last;
}

// The run directory of `kind` ("workers", "silent" or "tasks") with `n` extra records' worth,
// made once.
std::string RunDir(const std::string& kind, int64_t n) {
  const std::string dir = absl::StrCat("/tmp/roastcoffea-taskvine-scale-", kind, "-", n);
  struct stat info;
  if (stat((dir + "/transactions").c_str(), &info) == 0) return dir;
  mkdir(dir.c_str(), 0755);
  std::string log = ReadTestdata("lnni-2025-03-transactions.gz");
  if (!log.empty() && log.back() != '\n') log.push_back('\n');
  const int64_t t = LastTime(log);
  for (int64_t k = 0; k < n; ++k) {
    if (kind == "workers" || kind == "silent") {
      absl::StrAppend(&log, t + k, " 318561 WORKER w", k, " CONNECTION 10.0.", k / 256 % 256, ".",
                      k % 256, ":", 9000 + k % 1000, "\n");
    } else {
      const int64_t id = 100000 + k;
      absl::StrAppend(&log, t + k, " 318561 TASK ", id,
                      " READY parsl-default FIRST_RESOURCES 1 {}\n", t + k + 1, " 318561 TASK ", id,
                      " RUNNING worker-9e7ddf02827779a66bdb73ce0f09285f FIRST_RESOURCES {}\n",
                      t + k + 2, " 318561 TASK ", id, " DONE SUCCESS 0\n");
    }
  }
  if (kind == "silent") {
    absl::StrAppend(&log, t + n + 400'000'000, " 318561 MANAGER 318561 END 0\n");
  }
  std::ofstream(dir + "/performance", std::ios::binary)
      << ReadTestdata("lnni-2025-03-performance.gz");
  const std::string tmp = dir + "/transactions.tmp";
  std::ofstream(tmp, std::ios::binary) << log;
  rename(tmp.c_str(), (dir + "/transactions").c_str());
  return dir;
}

// The directory of a LogOnlyRun of `n` tasks, made once.
std::string LogOnlyRunDir(int64_t n) {
  const std::string dir = absl::StrCat("/tmp/roastcoffea-taskvine-scale-log-only-", n);
  struct stat info;
  if (stat((dir + "/transactions").c_str(), &info) == 0) return dir;
  mkdir(dir.c_str(), 0755);
  const std::string tmp = dir + "/transactions.tmp";
  std::ofstream out(tmp, std::ios::binary);
  WriteGenTaskLog(n, /*workers=*/100, out);
  out.close();
  rename(tmp.c_str(), (dir + "/transactions").c_str());
  return dir;
}

// From the log to a saved measurement, as collect does it, in one of two ways (the second arg):
//   0: Measure, the records materialized into the measurement, saved as one message (collect
//      before #25's session step);
//   1: MeasureRun, the records kept as a ChunkTable beside the measurement and saved through
//      SaveMeasurement's table overload (MeasurementSession::FinishRun + Save(MeasuredRun)).
// Peak memory per task and time per task (the counters; the time is the process's CPU):
// peak_rss_per_task_bytes over the steps, and each step's own (read_: ReadFinishedTaskVineRun,
// from the log to the RawRun; measure_: Measure or MeasureRun, with the RawRun it is handed;
// save_: the save, with the measurement it is handed), all over the RSS before the read, so
// that they compare.
void BM_LogOnlyRun(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool as_table = state.range(1) != 0;
  const std::string dir = LogOnlyRunDir(n);
  const std::string saves = absl::StrCat("/tmp/roastcoffea-taskvine-scale-saves-", getpid());
  for (auto _ : state) {
    malloc_trim(0);
    ResetPeakRss();
    const int64_t rss_before = ProcStatusBytes("VmRSS");
    TaskVineRunOptions options;
    options.logs = dir + "/transactions";
    absl::StatusOr<RawRun> run = ReadFinishedTaskVineRun(options);
    if (!run.ok()) {
      state.SkipWithError("cannot read the logs");
      break;
    }
    const int64_t read_peak = ProcStatusBytes("VmHWM");
    // What the read's result itself holds (its floor): the chunk table and the tracking series.
    const double table_bytes = static_cast<double>(run->engine_chunks.MemoryBytes());
    const double tracking_bytes =
        run->tracking.has_value() ? static_cast<double>(run->tracking->SpaceUsedLong()) : 0.0;
    ResetPeakRss();
    MeasuredRun measured;
    if (as_table) {
      absl::StatusOr<MeasuredRun> m = MeasureRun(*std::move(run), MeasureOptions());
      if (m.ok()) measured = *std::move(m);
      if (!m.ok()) state.SkipWithError("MeasureRun failed");
    } else {
      absl::StatusOr<v1::Measurement> m = Measure(*std::move(run), MeasureOptions());
      if (m.ok()) measured.measurement = *std::move(m);
      if (!m.ok()) state.SkipWithError("Measure failed");
    }
    const int64_t measure_peak = ProcStatusBytes("VmHWM");
    ResetPeakRss();
    std::filesystem::remove_all(saves);
    const absl::StatusOr<std::string> saved =
        as_table ? SaveMeasurement(measured.measurement, measured.chunks, saves, "run")
                 : SaveMeasurement(measured.measurement, saves, "run");
    if (!saved.ok()) state.SkipWithError("the save failed");
    const int64_t save_peak = ProcStatusBytes("VmHWM");
    const int64_t peak = std::max({read_peak, measure_peak, save_peak});
    const auto per_task = [&](int64_t bytes) {
      return static_cast<double>(bytes - rss_before) / n;
    };
    state.counters["chunks"] =
        static_cast<double>(as_table ? measured.chunks.size() : measured.measurement.chunks_size());
    state.counters["peak_rss_growth_MiB"] = static_cast<double>(peak - rss_before) / (1 << 20);
    state.counters["peak_rss_per_task_bytes"] = per_task(peak);
    state.counters["read_peak_per_task_bytes"] = per_task(read_peak);
    state.counters["measure_peak_per_task_bytes"] = per_task(measure_peak);
    state.counters["read_table_per_task_bytes"] = table_bytes / n;
    state.counters["read_tracking_per_task_bytes"] = tracking_bytes / n;
    state.counters["save_peak_per_task_bytes"] = per_task(save_peak);
    benchmark::DoNotOptimize(measured);
  }
  std::filesystem::remove_all(saves);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_LogOnlyRun)
    ->ArgNames({"tasks", "table"})
    ->Args({100'000, 0})
    ->Args({100'000, 1})
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->Iterations(1);

void RunCollectPath(benchmark::State& state, const std::string& kind) {
  const int64_t n = state.range(0);
  const std::string dir = RunDir(kind, n);
  for (auto _ : state) {
    malloc_trim(0);  // what earlier benchmarks freed would hide this one's growth
    ResetPeakRss();
    const int64_t rss_before = ProcStatusBytes("VmRSS");
    TaskVineBackendOptions options;
    options.logs = dir;
    options.chunk_category = "parsl-default";
    TaskVineMetricsBackend backend(options);
    if (!backend.StartTracking(absl::Seconds(1)).ok()) state.SkipWithError("cannot read logs");
    absl::StatusOr<SpanId> id = backend.CreateSpan("run");
    if (!id.ok() || !backend.EndSpan(*id).ok()) state.SkipWithError("span");
    v1::Measurement m;
    absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
    if (!tracking.ok()) state.SkipWithError("StopTracking failed");
    *m.mutable_tracking() = *std::move(tracking);
    absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*id);
    if (!span.ok()) state.SkipWithError("GetSpanMetrics failed");
    *m.add_spans() = *std::move(span);
    RawRun run;
    backend.Contribute(run);
    for (size_t i = 0; i < run.engine_chunks.size(); ++i) {
      run.engine_chunks.ReadRecord(i, m.add_chunks());
    }
    for (v1::Warning& warning : run.warnings) *m.add_warnings() = std::move(warning);
    AggregationInput input;
    input.tracking = &m.tracking();
    input.chunks = &m.chunks();
    input.spans = &m.spans();
    if (const auto window = backend.RecordedRunWindow(); window.has_value()) {
      input.window_start_unix_ns = absl::ToUnixNanos(window->start);
      input.window_end_unix_ns = absl::ToUnixNanos(window->end);
      input.elapsed_seconds = absl::ToDoubleSeconds(window->end - window->start);
    }
    absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
    if (!metrics.ok()) state.SkipWithError("Aggregate failed");
    const int64_t peak = ProcStatusBytes("VmHWM");
    state.counters["peak_rss_growth_MiB"] = static_cast<double>(peak - rss_before) / (1 << 20);
    state.counters["peak_rss_per_item_bytes"] = static_cast<double>(peak - rss_before) / n;
    state.counters["span_rows"] = m.spans(0).metrics_size();
    state.counters["by_worker_rows"] = metrics->fine().by_worker_size();
    state.counters["chunks"] = m.chunks_size();
    state.counters["avg_workers"] = metrics->workers().avg_workers();
    state.counters["warnings"] = m.warnings_size();
    benchmark::DoNotOptimize(metrics);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_ManyIdleWorkers(benchmark::State& state) { RunCollectPath(state, "workers"); }
BENCHMARK(BM_ManyIdleWorkers)
    ->Arg(25'000)
    ->Arg(200'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_ManySilentWorkers(benchmark::State& state) { RunCollectPath(state, "silent"); }
BENCHMARK(BM_ManySilentWorkers)
    ->Arg(25'000)
    ->Arg(200'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_ManyTinyTasks(benchmark::State& state) { RunCollectPath(state, "tasks"); }
BENCHMARK(BM_ManyTinyTasks)
    ->Arg(30'000)
    ->Arg(300'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace roastcoffea
