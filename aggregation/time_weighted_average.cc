#include "aggregation/time_weighted_average.h"

namespace roastcoffea {
namespace aggregation_internal {

double TimeWeightedAverage(const SortedSeries& series) {
  if (series.empty()) return 0.0;
  const TimeWindow own{series.times().front(), series.times().back()};
  const double seconds = own.Seconds();
  if (seconds <= 0) return series.LastValue();
  return IntegrateInsideSamples(series, own).integral / seconds;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
