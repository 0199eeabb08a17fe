#include "aggregation/time_weighted_average.h"

namespace roastcoffea {
namespace aggregation_internal {

TimeWindow OwnWindow(const SortedSeries& series) {
  return {series.times().front(), series.times().back()};
}

double TimeWeightedAverageOf(const SortedSeries& series, double own_integral) {
  if (series.empty()) return 0.0;
  const double seconds = OwnWindow(series).Seconds();
  if (seconds <= 0) return series.LastValue();
  return own_integral / seconds;
}

double TimeWeightedAverage(const SortedSeries& series) {
  if (series.empty()) return 0.0;
  return TimeWeightedAverageOf(series, IntegrateInsideSamples(series, OwnWindow(series)).integral);
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
