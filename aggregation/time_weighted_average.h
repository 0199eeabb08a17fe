// Trapezoid time average of a sampled series (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_
#define ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_

#include <cstdint>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {

struct TimedSample {
  int64_t time_unix_ns = 0;
  double value = 0;
};

// Time-weighted average of `samples` over their own window (first to last sample):
//   sum_i (v_i + v_{i+1}) / 2 * (t_{i+1} - t_i) / (t_last - t_first)
// after sorting by (time, value), so the input order does not matter.
// Edge cases: no samples -> 0.0; one sample -> its value; several samples that all share one
// timestamp (zero-length window) -> the mean of those samples.
// Cost: O(n log n).
double TimeWeightedAverage(std::vector<TimedSample> samples);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_
