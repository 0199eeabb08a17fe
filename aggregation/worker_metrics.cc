#include "aggregation/worker_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "aggregation/distribution_stats.h"
#include "aggregation/time_weighted_average.h"
#include "schema/worker_series_columns.h"

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

// The largest of `values` and `at_least`, in four independent lanes (one chain of maxima through
// memory was the tracking figures' costliest loop). Values are finite; every lane starts at
// `at_least`, so equal zeros of both signs give what one chain from `at_least` gives.
double MaxOf(absl::Span<const double> values, double at_least) {
  double lane[4] = {at_least, at_least, at_least, at_least};
  size_t i = 0;
  for (; i + 4 <= values.size(); i += 4) {
    for (size_t k = 0; k < 4; ++k) lane[k] = std::max(lane[k], values[i + k]);
  }
  for (; i < values.size(); ++i) lane[0] = std::max(lane[0], values[i]);
  return std::max(std::max(lane[0], lane[1]), std::max(lane[2], lane[3]));
}

// IntegrateWorkerSeries given its IntegrateInsideSamples part `inside`: for a SAMPLED series,
// its first (last) value held back to the window's start (on to its end) when that sample lies
// within `edge_ns` of the edge: a poller sees a worker that was there all along only at its
// first poll, up to one interval after the run began, and last at its final poll. Without this,
// core-seconds miss up to an interval at each end and disagree with the worker count (whose
// ends are held). A STEP series has exact change points and is never extended.
WindowIntegral HoldWorkerSeriesEdges(const SortedSeries& series, const TimeWindow& window,
                                     int64_t edge_ns, WindowIntegral inside) {
  WindowIntegral result = inside;
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

WindowIntegral IntegrateWorkerSeries(const SortedSeries& series, const TimeWindow& window,
                                     int64_t edge_ns, TimeSteps* steps) {
  return HoldWorkerSeriesEdges(series, window, edge_ns,
                               IntegrateInsideSamples(series, window, steps));
}

// One and a half polling intervals: a poll that came a little late still counts as the edge.
int64_t EdgeNanos(const v1::TrackingData& tracking) {
  return tracking.interval_seconds() > 0 && std::isfinite(tracking.interval_seconds())
             ? static_cast<int64_t>(tracking.interval_seconds() * 1.5e9)
             : 0;
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

// What to compute of the series: the original's keys (ComputeWorkerMetrics) and/or the ones over
// a window (AddWindowedWorkerMetrics).
struct Wanted {
  bool original = false;
  const TimeWindow* window = nullptr;  // null: no windowed figures
  int64_t edge_ns = 0;
};

// The time average of a memory series over its own window (for the original's key) and its
// integral over the window, sharing the integral when the window holds every sample.
struct MemoryFigures {
  double average = 0;
  WindowIntegral in_window;
};

// `steps`: see IntegrateInsideSamples (null for a series that is not a view of its column).
MemoryFigures MeasureMemory(const SortedSeries& memory, const Wanted& wanted, TimeSteps* steps) {
  MemoryFigures figures;
  if (memory.empty()) return figures;
  std::optional<WindowIntegral> own;
  if (wanted.original) {
    own = IntegrateInsideSamples(memory, OwnWindow(memory), steps);
    figures.average = TimeWeightedAverageOf(memory, own->integral);
  }
  if (wanted.window != nullptr) {
    const TimeWindow& window = *wanted.window;
    // The same arithmetic: IntegrateInsideSamples clips the window to the samples.
    const bool holds_every_sample = window.start_unix_ns <= memory.times().front() &&
                                    memory.times().back() <= window.end_unix_ns;
    figures.in_window = HoldWorkerSeriesEdges(memory, window, wanted.edge_ns,
                                              own.has_value() && holds_every_sample
                                                  ? *own
                                                  : IntegrateInsideSamples(memory, window, steps));
  }
  return figures;
}

// What the metrics read of one worker series, each computed once: its time column is checked
// for order once for both value columns.
struct WorkerFigures {
  std::optional<double> last_cores;  // set when the series has cores
  WindowIntegral cores_in_window;
  bool has_memory = false;
  double peak_memory = 0;  // of its samples and its max_memory_bytes, at least 0
  MemoryFigures memory;    // unless the workers share a process
};

// `steps`: a buffer for the time steps, kept across workers (a fresh 29 KB allocation per worker
// made malloc consolidate its free lists: a third of this pass).
WorkerFigures MeasureWorker(const v1::WorkerSeries& worker, bool share_process,
                            const Wanted& wanted, TimeSteps* steps_buffer) {
  WorkerFigures figures;
  const absl::Span<const int64_t> times = worker.time_unix_ns();
  const bool in_order = SortedSeries::InOrder(times, worker.kind());
  // In order, both series view `times`: the memory's integral reuses the cores' time steps.
  TimeSteps* steps = in_order ? steps_buffer : nullptr;
  if (worker.cores_size() > 0) {
    // Cores stored once for the series: its value at each point, so that the integral adds the
    // same terms in the same order as over a column of one value per point.
    std::vector<double> cores_at_points;
    if (StoredOnce(worker.cores(), worker.time_unix_ns_size())) {
      cores_at_points = ValuesAtPoints(worker.cores(), worker.time_unix_ns_size());
    }
    const SortedSeries cores(times,
                             cores_at_points.empty() ? absl::MakeConstSpan(worker.cores())
                                                     : absl::MakeConstSpan(cores_at_points),
                             worker.kind(), in_order);
    figures.last_cores = cores.LastValue();
    if (wanted.window != nullptr) {
      figures.cores_in_window = IntegrateWorkerSeries(cores, *wanted.window, wanted.edge_ns, steps);
    }
  }
  if (worker.memory_bytes_size() > 0) {
    figures.has_memory = true;
    // A reduced series keeps its peak apart (series_reduction.h).
    figures.peak_memory = std::max(MaxOf(worker.memory_bytes(), 0.0), worker.max_memory_bytes());
    if (!share_process) {
      figures.memory = MeasureMemory(
          SortedSeries(times, worker.memory_bytes(), worker.kind(), in_order), wanted, steps);
    }
  }
  return figures;
}

// Every series' figures, in the workers' order; `process` is the merged process memory's when
// the workers share a process and any has memory.
struct TrackingSeriesFigures {
  std::vector<WorkerFigures> workers;
  std::optional<MemoryFigures> process;
};

TrackingSeriesFigures MeasureSeries(const v1::TrackingData& tracking, const Wanted& wanted) {
  TrackingSeriesFigures figures;
  figures.workers.reserve(static_cast<size_t>(tracking.workers_size()));
  TimeSteps steps;  // keyed by the column: each worker's own columns compute their steps anew
  for (const v1::WorkerSeries& worker : tracking.workers()) {
    figures.workers.push_back(
        MeasureWorker(worker, tracking.workers_share_process(), wanted, &steps));
  }
  if (tracking.workers_share_process()) {
    // One process: its memory counts once, over the time it was sampled.
    const ProcessMemory memory = MergedProcessMemory(tracking);
    if (!memory.times.empty()) {
      figures.process =
          MeasureMemory(SortedSeries(memory.times, memory.values, memory.kind), wanted,
                        /*steps=*/nullptr);
    }
  }
  return figures;
}

// The original's keys (see ComputeWorkerMetrics), from figures measured with wanted.original.
v1::WorkerMetrics OriginalKeys(const v1::TrackingData& tracking,
                               const TrackingSeriesFigures& figures) {
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
  for (const WorkerFigures& worker : figures.workers) {
    if (worker.last_cores.has_value()) last_cores.push_back(*worker.last_cores);
    if (worker.has_memory) {
      peak_memory = std::max(peak_memory, worker.peak_memory);
      if (!tracking.workers_share_process()) memory_averages.push_back(worker.memory.average);
    }
  }
  if (tracking.workers_share_process()) {
    metrics.set_memory_is_process_wide(true);
    metrics.set_threads_sharing_memory(tracking.workers_size());
    if (figures.process.has_value()) memory_averages.push_back(figures.process->average);
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

// The keys over the window (see AddWindowedWorkerMetrics), from figures measured over it.
absl::flat_hash_map<std::string, double> AddWindowedKeys(const v1::TrackingData& tracking,
                                                         const TrackingSeriesFigures& figures,
                                                         const TimeWindow& window,
                                                         v1::WorkerMetrics* metrics) {
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
  for (int i = 0; i < tracking.workers_size(); ++i) {
    const WorkerFigures& worker = figures.workers[static_cast<size_t>(i)];
    if (worker.last_cores.has_value()) {
      core_integrals.push_back(worker.cores_in_window.integral);
      core_covered.push_back(worker.cores_in_window.covered_seconds);
      core_seconds_by_worker[tracking.workers(i).worker()] += worker.cores_in_window.integral;
    }
    if (worker.has_memory && !tracking.workers_share_process()) {
      memory_integrals.push_back(worker.memory.in_window.integral);
      memory_covered.push_back(worker.memory.in_window.covered_seconds);
    }
  }
  if (figures.process.has_value()) {
    memory_integrals.push_back(figures.process->in_window.integral);
    memory_covered.push_back(figures.process->in_window.covered_seconds);
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

}  // namespace

v1::WorkerMetrics ComputeWorkerMetrics(const v1::TrackingData& tracking) {
  Wanted wanted;
  wanted.original = true;
  return OriginalKeys(tracking, MeasureSeries(tracking, wanted));
}

absl::flat_hash_map<std::string, double> AddWindowedWorkerMetrics(const v1::TrackingData& tracking,
                                                                  const TimeWindow& window,
                                                                  v1::WorkerMetrics* metrics) {
  Wanted wanted;
  wanted.window = &window;
  wanted.edge_ns = EdgeNanos(tracking);
  return AddWindowedKeys(tracking, MeasureSeries(tracking, wanted), window, metrics);
}

WorkerMetricsOverWindow ComputeWorkerMetricsOverWindow(const v1::TrackingData& tracking,
                                                       const TimeWindow& window) {
  Wanted wanted;
  wanted.original = true;
  wanted.window = &window;
  wanted.edge_ns = EdgeNanos(tracking);
  const TrackingSeriesFigures figures = MeasureSeries(tracking, wanted);
  WorkerMetricsOverWindow result;
  result.metrics = OriginalKeys(tracking, figures);
  result.core_seconds_by_worker = AddWindowedKeys(tracking, figures, window, &result.metrics);
  return result;
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
