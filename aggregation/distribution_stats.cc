#include "aggregation/distribution_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/percentile.h"

namespace roastcoffea {
namespace aggregation_internal {

double CompensatedSum(absl::Span<const double> values) {
  long double sum = 0;
  long double compensation = 0;
  for (double v : values) {
    const long double x = v;
    const long double t = sum + x;
    compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  return static_cast<double>(sum + compensation);
}

v1::DistributionStats ComputeDistributionStatsOf(absl::Span<const double> values,
                                                 bool with_percentiles, double* sum) {
  v1::DistributionStats stats;
  const double total = CompensatedSum(values);
  if (sum != nullptr) *sum = total;
  if (values.empty()) return stats;
  const double n = static_cast<double>(values.size());
  const double mean = total / n;
  double min = values[0];
  double max = values[0];
  long double squared_deviations = 0;
  for (double v : values) {
    min = std::min(min, v);
    max = std::max(max, v);
    const long double d = static_cast<long double>(v) - mean;
    squared_deviations += d * d;
  }
  stats.set_count(static_cast<int64_t>(values.size()));
  stats.set_mean(mean);
  stats.set_min(min);
  stats.set_max(max);
  if (values.size() > 1) {
    stats.set_std(static_cast<double>(std::sqrt(squared_deviations / (n - 1))));
  }
  if (with_percentiles) {
    // Values are finite (validated by the callers), so this cannot fail.
    const auto p = stats::PercentilesOfConst(values, {0.5, 0.9, 0.95, 0.99});
    if (p.ok()) {
      v1::Percentiles* out = stats.mutable_percentiles();
      out->set_p50((*p)[0]);
      out->set_p90((*p)[1]);
      out->set_p95((*p)[2]);
      out->set_p99((*p)[3]);
    }
  }
  return stats;
}

v1::DistributionStats ComputeDistributionStatsInPlace(absl::Span<double> values,
                                                      bool with_percentiles) {
  return ComputeDistributionStatsOf(values, with_percentiles);
}

v1::DistributionStats ComputeDistributionStats(std::vector<double> values) {
  return ComputeDistributionStatsOf(values, /*with_percentiles=*/false);
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
