#include "aggregation/worker_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "aggregation/distribution_stats.h"
#include "aggregation/time_weighted_average.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Sum of `values` in ascending order, so the result does not depend on the worker order.
double SortedSum(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  return sum;
}

std::vector<double> Doubles(const google::protobuf::RepeatedField<int32_t>& values) {
  return std::vector<double>(values.begin(), values.end());
}

// The resident memory of the one process whose threads the worker series are
// (TrackingData.workers_share_process): every series' memory samples as one series. Threads
// sampled at one instant repeat the same reading, which the merge (SAMPLED: mean of the samples
// sharing an instant) counts once. STEP only when every series is.
struct ProcessMemory {
  std::vector<int64_t> times;
  std::vector<double> values;
  v1::SeriesKind kind = v1::SERIES_KIND_STEP;
};

ProcessMemory MergedProcessMemory(const v1::TrackingData& tracking) {
  ProcessMemory memory;
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (worker.memory_bytes_size() == 0) continue;
    if (worker.kind() != v1::SERIES_KIND_STEP) memory.kind = v1::SERIES_KIND_SAMPLED;
    memory.times.insert(memory.times.end(), worker.time_unix_ns().begin(),
                        worker.time_unix_ns().end());
    memory.values.insert(memory.values.end(), worker.memory_bytes().begin(),
                         worker.memory_bytes().end());
  }
  return memory;
}

}  // namespace

v1::WorkerMetrics ComputeWorkerMetrics(const v1::TrackingData& tracking) {
  v1::WorkerMetrics metrics;

  const std::vector<double> counts = Doubles(tracking.worker_count());
  metrics.set_avg_workers(TimeWeightedAverage(
      SortedSeries(tracking.worker_count_time_unix_ns(), counts, tracking.worker_count_kind())));
  int32_t peak_workers = 0;
  for (int32_t count : tracking.worker_count()) peak_workers = std::max(peak_workers, count);
  metrics.set_peak_workers(peak_workers);

  std::vector<double> last_cores;
  std::vector<double> memory_averages;
  double peak_memory = 0;  // every sample counts, even one held for no time
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (worker.cores_size() > 0) {
      last_cores.push_back(
          SortedSeries(worker.time_unix_ns(), worker.cores(), worker.kind()).LastValue());
    }
    if (worker.memory_bytes_size() > 0) {
      for (double bytes : worker.memory_bytes()) peak_memory = std::max(peak_memory, bytes);
      // A reduced series keeps its peak apart (series_reduction.h).
      peak_memory = std::max(peak_memory, worker.max_memory_bytes());
      if (!tracking.workers_share_process()) {
        memory_averages.push_back(TimeWeightedAverage(
            SortedSeries(worker.time_unix_ns(), worker.memory_bytes(), worker.kind())));
      }
    }
  }
  if (tracking.workers_share_process()) {
    metrics.set_memory_is_process_wide(true);
    metrics.set_threads_sharing_memory(tracking.workers_size());
    const ProcessMemory memory = MergedProcessMemory(tracking);
    if (!memory.times.empty()) {
      memory_averages.push_back(
          TimeWeightedAverage(SortedSeries(memory.times, memory.values, memory.kind)));
    }
  }

  // Counts every worker ever seen, as the original (it overstates capacity under churn).
  const double total_cores = SortedSum(last_cores);
  if (total_cores != 0) {
    metrics.set_total_cores(total_cores);
    metrics.set_cores_per_worker(total_cores / static_cast<double>(last_cores.size()));
  }
  metrics.set_peak_memory_bytes(peak_memory);
  if (!memory_averages.empty()) {
    metrics.set_avg_memory_per_worker_bytes(SortedSum(memory_averages) /
                                            static_cast<double>(memory_averages.size()));
  }
  return metrics;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea

namespace roastcoffea {
namespace aggregation_internal {

// IntegrateInsideSamples, plus, for a SAMPLED series, its first (last) value held back to the
// window's start (on to its end) when that sample lies within `edge_ns` of the edge: a poller
// sees a worker that was there all along only at its first poll, up to one interval after the
// run began, and last at its final poll. Without this, core-seconds miss up to an interval at
// each end and disagree with the worker count (whose ends are held). A STEP series has exact
// change points and is never extended.
WindowIntegral IntegrateWorkerSeries(const SortedSeries& series, const TimeWindow& window,
                                     int64_t edge_ns) {
  WindowIntegral result = IntegrateInsideSamples(series, window);
  if (series.empty() || edge_ns <= 0 || series.step()) return result;
  const int64_t first = series.times().front();
  const int64_t last = series.times().back();
  if (first > window.start_unix_ns && first <= window.end_unix_ns &&
      first - window.start_unix_ns <= edge_ns) {
    const double seconds = SecondsBetween(window.start_unix_ns, first);
    result.integral += series.values().front() * seconds;
    result.covered_seconds += seconds;
  }
  if (last < window.end_unix_ns && last >= window.start_unix_ns &&
      window.end_unix_ns - last <= edge_ns) {
    const double seconds = SecondsBetween(last, window.end_unix_ns);
    result.integral += series.LastValue() * seconds;
    result.covered_seconds += seconds;
  }
  return result;
}

absl::flat_hash_map<std::string, double> AddWindowedWorkerMetrics(const v1::TrackingData& tracking,
                                                                  const TimeWindow& window,
                                                                  v1::WorkerMetrics* metrics) {
  // One and a half polling intervals: a poll that came a little late still counts as the edge.
  const int64_t edge_ns =
      tracking.interval_seconds() > 0 && std::isfinite(tracking.interval_seconds())
          ? static_cast<int64_t>(tracking.interval_seconds() * 1.5e9)
          : 0;
  const double window_seconds = window.Seconds();
  metrics->set_window_seconds(window_seconds);

  const std::vector<double> counts = Doubles(tracking.worker_count());
  const SortedSeries count_series(tracking.worker_count_time_unix_ns(), counts,
                                  tracking.worker_count_kind());
  metrics->set_avg_workers_over_window(
      window_seconds > 0 ? IntegrateHoldingEnds(count_series, window) / window_seconds
                         : metrics->avg_workers());

  absl::flat_hash_map<std::string, double> core_seconds_by_worker;
  std::vector<double> core_integrals, core_covered, memory_integrals, memory_covered;
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (worker.cores_size() > 0) {
      const WindowIntegral cores = IntegrateWorkerSeries(
          SortedSeries(worker.time_unix_ns(), worker.cores(), worker.kind()), window, edge_ns);
      core_integrals.push_back(cores.integral);
      core_covered.push_back(cores.covered_seconds);
      core_seconds_by_worker[worker.worker()] += cores.integral;
    }
    if (worker.memory_bytes_size() > 0 && !tracking.workers_share_process()) {
      const WindowIntegral memory = IntegrateWorkerSeries(
          SortedSeries(worker.time_unix_ns(), worker.memory_bytes(), worker.kind()), window,
          edge_ns);
      memory_integrals.push_back(memory.integral);
      memory_covered.push_back(memory.covered_seconds);
    }
  }
  if (tracking.workers_share_process()) {
    // One process: its memory counts once, over the time it was sampled.
    const ProcessMemory process = MergedProcessMemory(tracking);
    if (!process.times.empty()) {
      const WindowIntegral memory = IntegrateWorkerSeries(
          SortedSeries(process.times, process.values, process.kind), window, edge_ns);
      memory_integrals.push_back(memory.integral);
      memory_covered.push_back(memory.covered_seconds);
    }
  }
  if (!core_integrals.empty()) {
    const double core_seconds = CompensatedSum(core_integrals);
    const double covered = CompensatedSum(core_covered);
    metrics->set_core_seconds(core_seconds);
    if (window_seconds > 0) metrics->set_avg_cores_over_window(core_seconds / window_seconds);
    if (covered > 0) metrics->set_cores_per_worker_time_weighted(core_seconds / covered);
  }
  if (!memory_integrals.empty()) {
    const double memory_seconds = CompensatedSum(memory_integrals);
    const double covered = CompensatedSum(memory_covered);
    if (covered > 0) {
      metrics->set_avg_memory_per_worker_time_weighted_bytes(memory_seconds / covered);
    }
    if (window_seconds > 0) metrics->set_avg_cluster_memory_bytes(memory_seconds / window_seconds);
  }
  return core_seconds_by_worker;
}

TimeWindow SampleWindow(const v1::TrackingData& tracking) {
  bool any = false;
  TimeWindow window;
  auto see = [&](int64_t t) {
    if (!any) {
      window = {t, t};
      any = true;
    }
    window.start_unix_ns = std::min(window.start_unix_ns, t);
    window.end_unix_ns = std::max(window.end_unix_ns, t);
  };
  for (int64_t t : tracking.worker_count_time_unix_ns()) see(t);
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    for (int64_t t : worker.time_unix_ns()) see(t);
  }
  return window;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
