// Worker metrics from tracking data (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_

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

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_WORKER_METRICS_H_
