// Bounded tracking (#25): a facility run's worker samples through the checkpoint join, and the
// per-worker plots of 10^4 workers.
//   ./bazelw run -c opt //bench:tracking_benchmark
//   ./bazelw run -c opt //bench:tracking_benchmark -- --benchmark_filter=Join/1000/480
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/series_reduction.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "export/report_plots.h"
#include "schema/measurement.pb.h"
#include "store/tracking_segments.h"

namespace roastcoffea {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;
constexpr int64_t kIntervalNs = kSecond / 4;  // --interval's default, 0.25 s
constexpr int kSamplesPerCheckpoint = 120;    // --checkpoint_interval's default, 30 s

// One checkpoint's segment as the Dask backend hands it out (UntakenSamples): per worker the
// columns it polls, 120 samples each.
v1::TrackingData DaskSegment(int workers, int checkpoint) {
  v1::TrackingData segment;
  segment.set_backend("dask");
  segment.set_interval_seconds(0.25);
  segment.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
  const int64_t first = kStart + int64_t{checkpoint} * kSamplesPerCheckpoint * kIntervalNs;
  for (int i = 0; i < kSamplesPerCheckpoint; ++i) {
    segment.add_worker_count_time_unix_ns(first + i * kIntervalNs);
    segment.add_worker_count(workers);
  }
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries& series = *segment.add_workers();
    series.set_worker(absl::StrCat("tcp://10.1.", w / 250, ".", w % 250, ":40000"));
    series.set_kind(v1::SERIES_KIND_SAMPLED);
    for (int i = 0; i < kSamplesPerCheckpoint; ++i) {
      const int64_t t = first + i * kIntervalNs + w * 1000;  // polls land a little apart
      const double phase = static_cast<double>((checkpoint * 131 + i * 7 + w) % 997);
      series.add_time_unix_ns(t);
      series.add_memory_bytes(2e9 + 1e6 * phase);
      series.add_memory_limit_bytes(8e9);
      series.add_cores(4);
      series.add_active_tasks(phase / 100);
      series.add_executing_tasks(std::min(4.0, phase / 100));
      series.add_managed_bytes(1e8 + phase);
      series.add_occupancy_seconds(phase / 10);
      series.add_cpu_percent(phase / 3);
      series.add_last_seen_unix_seconds(static_cast<double>(t) * 1e-9);
      series.add_network_read_bytes_per_second(phase * 1e3);
      series.add_network_write_bytes_per_second(phase * 2e3);
    }
  }
  return segment;
}

// `workers` x `checkpoints` x 30 s of samples joined as the session joins its checkpoint's
// segments (MergeTrackingSegment per segment), then reduced over the run's window as Finish
// does. Budget 0: every sample kept (the join before #25). Reports the join's peak RSS.
void BM_TrackingCheckpointJoin(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const int checkpoints = static_cast<int>(state.range(1));
  const int budget = static_cast<int>(state.range(2));
  int64_t extra = 0;
  int64_t kept_samples = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ResetPeakRss();
    const int64_t before = ProcStatusBytes("VmRSS");
    state.ResumeTiming();
    v1::TrackingData joined;
    for (int c = 0; c < checkpoints; ++c) {
      state.PauseTiming();  // the backend's part: polling the scheduler
      v1::TrackingData segment = DaskSegment(workers, c);
      state.ResumeTiming();
      MergeTrackingSegment(std::move(segment), &joined, budget);
    }
    const int64_t end = kStart + int64_t{checkpoints} * kSamplesPerCheckpoint * kIntervalNs;
    ReduceTracking(budget, {kStart, end}, &joined);
    state.PauseTiming();
    extra = std::max(extra, ProcStatusBytes("VmHWM") - before);
    kept_samples = 0;
    for (const v1::WorkerSeries& series : joined.workers()) {
      kept_samples += series.time_unix_ns_size();
    }
    joined = v1::TrackingData();
    state.ResumeTiming();
  }
  const double samples = double{1} * workers * checkpoints * kSamplesPerCheckpoint;
  state.counters["worker_samples"] = samples;
  state.counters["kept_samples"] = static_cast<double>(kept_samples);
  state.counters["extra_rss_bytes"] = static_cast<double>(extra);
  state.counters["rss_bytes_per_worker"] = static_cast<double>(extra) / workers;
  state.counters["ns_per_sample"] = benchmark::Counter(
      samples, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
// 1,000 workers: 30 min (60 checkpoints) unbounded and bounded; 8 h (960) bounded only (every
// sample kept would need ~12 GB: 108 B per worker-sample).
BENCHMARK(BM_TrackingCheckpointJoin)
    ->Args({1000, 60, 0})
    ->Args({1000, 60, kDefaultMaxSamplesPerWorker})
    ->Args({1000, 960, kDefaultMaxSamplesPerWorker})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// The report's per-worker plots with `workers` distinct memory series of 60 samples (the
// identical-series merge was pairwise: quadratic in workers).
void BM_ReportPlotsPerWorker(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  v1::Measurement measurement;
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(kStart / kSecond);
  measurement.mutable_metadata()->mutable_end_time()->set_seconds(kStart / kSecond + 60);
  v1::TrackingData& tracking = *measurement.mutable_tracking();
  tracking.set_backend("dask");
  tracking.set_interval_seconds(1);
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(absl::StrCat("tcp://10.2.", w / 250, ".", w % 250, ":40000"));
    series.set_kind(v1::SERIES_KIND_SAMPLED);
    for (int i = 0; i < 60; ++i) {
      series.add_time_unix_ns(kStart + i * kSecond);
      series.add_memory_bytes(1e9 + 1e3 * w + i);
      series.add_cpu_percent(w % 100);
      series.add_cores(4);
    }
  }
  for (auto _ : state) {
    std::vector<ReportPlot> plots = BuildReportPlots(measurement);
    benchmark::DoNotOptimize(plots);
  }
  state.counters["workers"] = workers;
}
BENCHMARK(BM_ReportPlotsPerWorker)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
