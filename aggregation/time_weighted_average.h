// The original's time average of a series over its own sample window (internal to
// //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_
#define ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_

#include "aggregation/series_integral.h"

namespace roastcoffea {
namespace aggregation_internal {

// Time-weighted average of `series` over its own window (first to last sample): its integral
// by kind (IntegrateInsideSamples: trapezoid for SAMPLED, held values for STEP) divided by
// t_last - t_first. For SAMPLED series this is the original's
//   sum_i (v_i + v_{i+1}) / 2 * (t_{i+1} - t_i) / (t_last - t_first).
// Edge cases: no samples -> 0.0; one sample -> its value; samples all at one instant
// (zero-length window, where the original divides by zero) -> the value held there
// (SortedSeries::LastValue: SAMPLED the mean of those samples, STEP the last stored).
// Cost: O(n), plus the sort SortedSeries may have done.
double TimeWeightedAverage(const SortedSeries& series);

// The window TimeWeightedAverage averages over: the series' first to last instant. The series
// must not be empty.
TimeWindow OwnWindow(const SortedSeries& series);

// TimeWeightedAverage(series), given `own_integral` = IntegrateInsideSamples(series,
// OwnWindow(series)).integral, which a caller that needs it for another figure computed once.
double TimeWeightedAverageOf(const SortedSeries& series, double own_integral);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_TIME_WEIGHTED_AVERAGE_H_
