// Exact percentiles of a sample, with numpy's default definition.
//
// Definition ("linear", Hyndman & Fan type 7, numpy.percentile's default): for n sorted values
// x[0] <= ... <= x[n-1] and a quantile q in [0, 1], let h = q * (n - 1), k = floor(h);
//   P(q) = x[k] + (h - k) * (x[k+1] - x[k])      (x[k] when k == n - 1).
// So P(0) = min, P(1) = max, P(0.5) of {1, 2, 3, 4} = 2.5.
//
// Thread-safety: pure functions; the span passed to Percentiles is reordered and must not be
// shared with other threads during the call.
#ifndef ROASTCOFFEA_STATS_PERCENTILE_H_
#define ROASTCOFFEA_STATS_PERCENTILE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace stats {

// Percentile q (0..1) of values that are already sorted ascending. Does not check the order.
// Requires !sorted.empty() and 0 <= q <= 1 (checked by Percentiles; here the caller's duty).
// Cost: O(1).
double PercentileOfSorted(absl::Span<const double> sorted, double q);

// Percentiles `quantiles` (each in [0, 1], any order) of `values`, in the order asked.
// `values` is reordered in place (std::nth_element; no copy, no full sort), which is why it is a
// mutable span: reuse one buffer for many calls. Returns InvalidArgument for empty `values`, a
// NaN or infinite value (naming its index), or a quantile outside [0, 1] or NaN.
// Cost: O(n * number of distinct quantiles) worst case, O(n) typical for a few quantiles.
absl::StatusOr<std::vector<double>> Percentiles(absl::Span<double> values,
                                                absl::Span<const double> quantiles);

// The same percentiles (the same doubles: a percentile depends only on the values, not on how
// they are selected) without reordering `values`, so that no copy is needed for a read-only
// column: a radix selection over the doubles' order-preserving bit patterns. One pass for the
// range, one for a histogram of it, then the values of the few buckets that hold the wanted
// ranks are copied and selected (std::nth_element). Same errors as Percentiles.
// Cost: O(n) reads, O(n) extra memory only when the wanted ranks fall in one crowded bucket.
absl::StatusOr<std::vector<double>> PercentilesOfConst(absl::Span<const double> values,
                                                       absl::Span<const double> quantiles);

}  // namespace stats
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STATS_PERCENTILE_H_
