#include "stats/percentile_reference.h"

#include <algorithm>
#include <numeric>

#include "stats/percentile_rank.h"

namespace roastcoffea {
namespace stats {

absl::StatusOr<std::vector<double>> ReferencePercentiles(absl::Span<double> values,
                                                         absl::Span<const double> quantiles) {
  if (absl::Status input = CheckPercentileInput(values, quantiles); !input.ok()) return input;
  // Visit the quantiles in ascending order: after nth_element at rank k, everything before k is
  // <= x[k], so the next (higher) rank only needs to look at [k, n).
  std::vector<size_t> order(quantiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return quantiles[a] < quantiles[b]; });
  std::vector<double> result(quantiles.size());
  size_t first = 0;  // values[0, first) are <= every value of [first, n)
  for (size_t index : order) {
    const QuantileRank rank = RankOfQuantile(quantiles[index], values.size());
    std::nth_element(values.begin() + first, values.begin() + rank.lower, values.end());
    first = rank.lower;
    const double lower = values[rank.lower];
    // The next rank is the smallest value after `lower`.
    const double upper = rank.upper() == rank.lower
                             ? lower
                             : *std::min_element(values.begin() + rank.lower + 1, values.end());
    result[index] = Interpolate(rank, lower, upper);
  }
  return result;
}

}  // namespace stats
}  // namespace roastcoffea
