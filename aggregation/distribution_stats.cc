#include "aggregation/distribution_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {

v1::DistributionStats ComputeDistributionStats(std::vector<double> values) {
  v1::DistributionStats stats;
  if (values.empty()) return stats;
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / n;
  stats.set_count(static_cast<int64_t>(values.size()));
  stats.set_mean(mean);
  stats.set_min(values.front());
  stats.set_max(values.back());
  if (values.size() > 1) {
    double squared_deviations = 0;
    for (double v : values) squared_deviations += (v - mean) * (v - mean);
    stats.set_std(std::sqrt(squared_deviations / (n - 1)));
  }
  return stats;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
