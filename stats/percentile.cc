#include "stats/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace stats {

double PercentileOfSorted(absl::Span<const double> sorted, double q) {
  const double h = q * static_cast<double>(sorted.size() - 1);
  const size_t k = static_cast<size_t>(std::floor(h));
  if (k + 1 >= sorted.size()) return sorted.back();
  return sorted[k] + (h - static_cast<double>(k)) * (sorted[k + 1] - sorted[k]);
}

absl::StatusOr<std::vector<double>> Percentiles(absl::Span<double> values,
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
  // Visit the quantiles in ascending order: after nth_element at rank k, everything before k is
  // <= x[k], so the next (higher) rank only needs to look at [k, n).
  std::vector<size_t> order(quantiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return quantiles[a] < quantiles[b]; });
  const size_t n = values.size();
  std::vector<double> result(quantiles.size());
  size_t first = 0;  // values[0, first) are <= every value of [first, n)
  for (size_t index : order) {
    const double h = quantiles[index] * static_cast<double>(n - 1);
    const size_t k = std::min(static_cast<size_t>(std::floor(h)), n - 1);
    std::nth_element(values.begin() + first, values.begin() + k, values.end());
    first = k;
    const double lower = values[k];
    const double fraction = h - static_cast<double>(k);
    if (k + 1 >= n || fraction == 0) {
      result[index] = lower;
      continue;
    }
    // The next rank is the smallest value after k.
    const double upper = *std::min_element(values.begin() + k + 1, values.end());
    result[index] = lower + fraction * (upper - lower);
  }
  return result;
}

}  // namespace stats
}  // namespace roastcoffea
