// Worker metrics from tracking data (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "aggregation/series_integral.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Every series is read by its kind (TrackingData.worker_count_kind, WorkerSeries.kind; see
// SortedSeries): SAMPLED interpolates linearly between samples, STEP holds each value until the
// next sample, several STEP samples at one instant being successive changes in stored order.
//
// The original's parse_tracking_data (docs/reference.md §2.2):
//   avg_workers: time average of worker_count over its own sample window (TimeWeightedAverage:
//                the original's trapezoid for SAMPLED, exact for STEP; no samples -> 0, one
//                instant -> the value held there);
//   peak_workers: max of every worker_count sample, zero-length STEP values included (0 without
//                samples);
//   total_cores: sum over every worker series of the `cores` it holds at its last instant
//                (SortedSeries::LastValue: SAMPLED the mean of the samples there, STEP the last
//                stored); unset when no series has cores or they sum to 0. cores_per_worker: mean
//                of those values, unset together with total_cores. Series with an empty `cores`
//                column do not count (the backend did not measure them);
//   peak_memory_bytes: max single memory_bytes sample of any worker, or its max_memory_bytes when
//                reduced (series_reduction.h) (0 when none);
//   avg_memory_per_worker_bytes: per worker, the time average of memory_bytes over its own
//                window; then the unweighted mean over workers with memory samples.
// When tracking.workers_share_process (threads of one process, each series repeating the
// process's resident memory): memory_is_process_wide = true, threads_sharing_memory = number of
// worker series, and the memory figures are the process's, counted once: the peak of its
// samples, and avg_memory_per_worker_bytes = the time average of the series merged from every
// thread's samples (MergedProcessMemory in the .cc).
// Columns must already be validated (each empty or as long as its time column).
// Cost: O(n) in the number of samples for time-ordered series, O(n log n) otherwise.
v1::WorkerMetrics ComputeWorkerMetrics(const v1::TrackingData& tracking);

// The fixes (docs/reference.md §6.5, §6.9) over `window`, added to `metrics` (which must already
// hold the original's keys), each series integrated by its kind (series_integral.h):
// window_seconds; avg_workers_over_window = integral of worker_count with its first/last value held
// outside the samples (IntegrateHoldingEnds), / window_seconds (the original's avg_workers when the
// window has zero length); per worker series, cores and memory_bytes are integrated over the window
// only between the series' first and last sample (IntegrateInsideSamples; a STEP series' last
// sample, e.g. its disconnection, ends its coverage), except that a SAMPLED series whose first
// (last) sample lies within 1.5 x tracking.interval_seconds of the window's start (end) holds that
// value to the edge (a poller sees a worker that was there from the start only at its first
// poll):
//   core_seconds = sum of the cores integrals (set when any series has cores),
//   avg_cores_over_window = core_seconds / window_seconds (window > 0),
//   cores_per_worker_time_weighted = core_seconds / sum of the covered seconds of the series
//     with cores (> 0),
//   avg_memory_per_worker_time_weighted_bytes = memory-seconds / covered seconds of the
//     series with memory (> 0), avg_cluster_memory_bytes = memory-seconds / window_seconds.
// With tracking.workers_share_process the memory-seconds and covered seconds are the process's
// (the merged series, once), so both memory figures are its time average, never a sum over
// threads.
// Divisions by zero leave the field unset. Returns each worker's core-seconds by name.
// Samples must already be validated (finite). Cost: O(samples) for time-ordered series.
absl::flat_hash_map<std::string, double> AddWindowedWorkerMetrics(const v1::TrackingData& tracking,
                                                                  const TimeWindow& window,
                                                                  v1::WorkerMetrics* metrics);

// ComputeWorkerMetrics followed by AddWindowedWorkerMetrics over `window`, the same figures bit
// for bit, with each series read once (one order check of a worker's times for its memory and
// cores; a memory series' integral shared by its own-window average and the window's figures
// when the window holds all its samples). What Aggregate uses.
struct WorkerMetricsOverWindow {
  v1::WorkerMetrics metrics;
  absl::flat_hash_map<std::string, double> core_seconds_by_worker;
};
WorkerMetricsOverWindow ComputeWorkerMetricsOverWindow(const v1::TrackingData& tracking,
                                                       const TimeWindow& window);

// The span of every timestamp in `tracking` (worker count and worker series): the window used
// when the run's own is unknown. {0, 0} without samples. Cost: O(samples).
TimeWindow SampleWindow(const v1::TrackingData& tracking);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
