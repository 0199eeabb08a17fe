// Exact percentiles of a sample, with numpy's default definition.
//
// Definition ("linear", Hyndman & Fan type 7, numpy.percentile's default): for n sorted values
// x[0] <= ... <= x[n-1] and a quantile q in [0, 1], let h = q * (n - 1), k = floor(h);
//   P(q) = x[k] + (h - k) * (x[k+1] - x[k])      (x[k] when k == n - 1).
// So P(0) = min, P(1) = max, P(0.5) of {1, 2, 3, 4} = 2.5.
//
// The ranks and the interpolation are stated once, in stats/percentile_rank.h; the plain
// nth_element selection the tests compare with is stats/percentile_reference.h (testonly).
//
// Thread-safety: pure functions; the values are only read.
#ifndef ROASTCOFFEA_STATS_PERCENTILE_H_
#define ROASTCOFFEA_STATS_PERCENTILE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace stats {

// Percentiles `quantiles` (each in [0, 1], any order) of `values`, in the order asked, without
// reordering `values` (no copy is needed for a read-only column): a radix selection over the
// doubles' order-preserving bit patterns. One pass checks the values and finds their range,
// one makes a histogram of it, then the values of the few buckets that hold the wanted ranks
// are copied and selected (std::nth_element). Returns InvalidArgument for empty `values`, a NaN
// or infinite value (naming its index), or a quantile outside [0, 1] or NaN.
// Cost: O(n) reads, O(n) extra memory only when the wanted ranks fall in one crowded bucket.
absl::StatusOr<std::vector<double>> PercentilesOfConst(absl::Span<const double> values,
                                                       absl::Span<const double> quantiles);

// The same doubles, for a caller that already knows the values are finite and non-empty, the
// quantiles valid, and `min` and `max` of the values (from a pass of its own): one pass fewer,
// and none at all when every value has the same bits (a constant column).
// Cost: O(n) reads, as PercentilesOfConst.
std::vector<double> PercentilesOfFinite(absl::Span<const double> values, double min, double max,
                                        absl::Span<const double> quantiles);

}  // namespace stats
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STATS_PERCENTILE_H_
