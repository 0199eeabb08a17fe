// The one statement of numpy's "linear" percentile (see stats/percentile.h) that every
// percentile function of //stats uses: which ranks a quantile reads, how the two values are
// interpolated, and which inputs are rejected.
#ifndef ROASTCOFFEA_STATS_PERCENTILE_RANK_H_
#define ROASTCOFFEA_STATS_PERCENTILE_RANK_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace stats {

// Quantile q of n sorted values: the value at rank `lower`, moved `fraction` of the way to the
// value at rank lower + 1 (fraction is 0 when no second value is read).
struct QuantileRank {
  size_t lower;
  double fraction;
  size_t upper() const { return fraction == 0 ? lower : lower + 1; }
};

// h = q * (n - 1), lower = floor(h), fraction = h - lower (0 at the last rank). Requires n > 0
// and 0 <= q <= 1. Cost: O(1).
QuantileRank RankOfQuantile(double q, size_t n);

// The percentile from the values at rank.lower and rank.upper(). Cost: O(1).
double Interpolate(const QuantileRank& rank, double lower_value, double upper_value);

// InvalidArgument naming the first bad input: empty `values`, a NaN or infinite value, or a
// quantile outside [0, 1] or NaN. Cost: O(values + quantiles).
absl::Status CheckPercentileInput(absl::Span<const double> values,
                                  absl::Span<const double> quantiles);

}  // namespace stats
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STATS_PERCENTILE_RANK_H_
