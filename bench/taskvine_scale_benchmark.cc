// Large-but-plausible TaskVine logs through the backend and //aggregation, as collect runs them
// (without saving): the real LNNI log (testdata) followed by
//   * ManyIdleWorkers/N: N more `WORKER wK CONNECTION` records of workers that never run
//     anything (a flood of pilot connections);
//   * ManySilentWorkers/N: the same N connections, then a MANAGER END 400 s later: every one of
//     them died silently (RunModel::MarkLogComplete);
//   * ManyTinyTasks/N: N more tasks of the chunk category (READY, RUNNING, DONE), all on one of
//     the run's workers.
// Time and peak resident memory must grow linearly with a small constant: the counter
// peak_rss_per_item_bytes is (peak RSS during the iteration - RSS before it) / N, which includes
// the log's own bytes held by nothing (the backend reads it line by line).
//
//   ./bazelw run -c opt //bench:taskvine_scale_benchmark
//
// The logs are generated once into /tmp/roastcoffea-taskvine-scale-<kind>-<N>/.
#include <malloc.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "backends/taskvine/taskvine_backend.h"
#include "backends/taskvine/test_util.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

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
    for (v1::ChunkRecord& record : run.engine_chunks) *m.add_chunks() = std::move(record);
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
