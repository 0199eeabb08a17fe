#include "aggregation/worker_metrics.h"

#include <algorithm>
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

// The value of the latest sample; among samples at the latest instant, the largest (any fixed
// choice would do; this one is order-independent).
double LastByTime(const google::protobuf::RepeatedField<int64_t>& times,
                  const google::protobuf::RepeatedField<double>& values) {
  int latest = 0;
  for (int i = 1; i < values.size(); ++i) {
    if (times[i] > times[latest] || (times[i] == times[latest] && values[i] > values[latest])) {
      latest = i;
    }
  }
  return values[latest];
}

}  // namespace

v1::WorkerMetrics ComputeWorkerMetrics(const v1::TrackingData& tracking) {
  v1::WorkerMetrics metrics;

  std::vector<TimedSample> counts;
  counts.reserve(tracking.worker_count_size());
  int32_t peak_workers = 0;
  for (int i = 0; i < tracking.worker_count_size(); ++i) {
    counts.push_back({tracking.worker_count_time_unix_ns(i),
                      static_cast<double>(tracking.worker_count(i))});
    peak_workers = std::max(peak_workers, tracking.worker_count(i));
  }
  metrics.set_avg_workers(TimeWeightedAverage(std::move(counts)));
  metrics.set_peak_workers(peak_workers);

  std::vector<double> last_cores;
  std::vector<double> memory_averages;
  double peak_memory = 0;
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (worker.cores_size() > 0) {
      last_cores.push_back(LastByTime(worker.time_unix_ns(), worker.cores()));
    }
    if (worker.memory_bytes_size() > 0) {
      std::vector<TimedSample> memory;
      memory.reserve(worker.memory_bytes_size());
      for (int i = 0; i < worker.memory_bytes_size(); ++i) {
        memory.push_back({worker.time_unix_ns(i), worker.memory_bytes(i)});
        peak_memory = std::max(peak_memory, worker.memory_bytes(i));
      }
      memory_averages.push_back(TimeWeightedAverage(std::move(memory)));
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

absl::flat_hash_map<std::string, double> AddWindowedWorkerMetrics(
    const v1::TrackingData& tracking, const TimeWindow& window, v1::WorkerMetrics* metrics) {
  const double window_seconds = window.Seconds();
  metrics->set_window_seconds(window_seconds);

  const std::vector<double> counts(tracking.worker_count().begin(),
                                   tracking.worker_count().end());
  const SortedSeries count_series(tracking.worker_count_time_unix_ns(), counts);
  metrics->set_avg_workers_over_window(
      window_seconds > 0 ? IntegrateHoldingEnds(count_series, window) / window_seconds
                         : metrics->avg_workers());

  absl::flat_hash_map<std::string, double> core_seconds_by_worker;
  std::vector<double> core_integrals, core_covered, memory_integrals, memory_covered;
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    if (worker.cores_size() > 0) {
      const WindowIntegral cores =
          IntegrateInsideSamples(SortedSeries(worker.time_unix_ns(), worker.cores()), window);
      core_integrals.push_back(cores.integral);
      core_covered.push_back(cores.covered_seconds);
      core_seconds_by_worker[worker.worker()] += cores.integral;
    }
    if (worker.memory_bytes_size() > 0) {
      const WindowIntegral memory = IntegrateInsideSamples(
          SortedSeries(worker.time_unix_ns(), worker.memory_bytes()), window);
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
