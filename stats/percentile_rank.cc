#include "stats/percentile_rank.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace stats {

QuantileRank RankOfQuantile(double q, size_t n) {
  const double h = q * static_cast<double>(n - 1);
  const size_t lower = std::min(static_cast<size_t>(std::floor(h)), n - 1);
  return {lower, lower + 1 >= n ? 0.0 : h - static_cast<double>(lower)};
}

double Interpolate(const QuantileRank& rank, double lower_value, double upper_value) {
  return rank.fraction == 0 ? lower_value
                            : lower_value + rank.fraction * (upper_value - lower_value);
}

absl::Status CheckPercentileInput(absl::Span<const double> values,
                                  absl::Span<const double> quantiles) {
  if (values.empty()) return absl::InvalidArgumentError("Percentiles: values is empty");
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("Percentiles: values[", i, "] is ", values[i], "; expected finite"));
    }
  }
  for (size_t i = 0; i < quantiles.size(); ++i) {
    if (!(quantiles[i] >= 0 && quantiles[i] <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat("Percentiles: quantiles[", i, "] is ",
                                                     quantiles[i], "; expected 0 <= q <= 1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace stats
}  // namespace roastcoffea
