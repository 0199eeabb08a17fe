// Worker metrics from tracking data (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "aggregation/series_integral.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's parse_tracking_data (reference §2.2):
//   avg_workers: trapezoid time average of worker_count over its own sample window
//                (no samples -> 0, one sample -> its value);
//   peak_workers: max of worker_count (0 without samples);
//   total_cores: sum over every worker series of its last `cores` sample (by time); unset when
//                no series has cores or they sum to 0. cores_per_worker: mean of those last
//                values, unset together with total_cores. Series with an empty `cores` column
//                do not count (the backend did not measure them);
//   peak_memory_bytes: max single memory_bytes sample of any worker (0 when none);
//   avg_memory_per_worker_bytes: per worker, the trapezoid time average of memory_bytes over
//                its own window; then the unweighted mean over workers with memory samples.
// Columns must already be validated (each empty or as long as its time column).
// Cost: O(n log n) in the number of samples.
v1::WorkerMetrics ComputeWorkerMetrics(const v1::TrackingData& tracking);

// The fixes (reference §6.5, §6.9) over `window`, added to `metrics` (which must already hold
// the original's keys): window_seconds; avg_workers_over_window = integral of worker_count with
// its first/last sample held outside the samples, / window_seconds (the original's avg_workers
// when the window has zero length); per worker series, cores and memory_bytes are integrated
// over the window only between the series' first and last sample (IntegrateInsideSamples):
//   core_seconds = sum of the cores integrals (set when any series has cores),
//   avg_cores_over_window = core_seconds / window_seconds (window > 0),
//   cores_per_worker_time_weighted = core_seconds / sum of the covered seconds of the series
//     with cores (> 0),
//   avg_memory_per_worker_time_weighted_bytes = memory-seconds / covered seconds of the
//     series with memory (> 0), avg_cluster_memory_bytes = memory-seconds / window_seconds.
// Divisions by zero leave the field unset. Returns each worker's core-seconds by name.
// Samples must already be validated (finite). Cost: O(samples) for time-ordered series.
absl::flat_hash_map<std::string, double> AddWindowedWorkerMetrics(
    const v1::TrackingData& tracking, const TimeWindow& window, v1::WorkerMetrics* metrics);

// The span of every timestamp in `tracking` (worker count and worker series): the window used
// when the run's own is unknown. {0, 0} without samples. Cost: O(samples).
TimeWindow SampleWindow(const v1::TrackingData& tracking);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
