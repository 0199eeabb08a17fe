// Mean, min, max, sample standard deviation and exact percentiles of a set of values
// (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_
#define ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_

#include <vector>

#include "absl/types/span.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Sum with Neumaier compensation in long double: the order of `values` can change at most the
// last bit (in practice none). Values that are all integers (events, bytes) are summed in
// integers instead: the same double (the long double sum of such values is exact until the sum
// of their sizes reaches 2^64, where the long double loop takes over), several times faster.
// Cost: O(n).
double CompensatedSum(absl::Span<const double> values);

// Running form of CompensatedSum, for sums that are never stored as a column.
class CompensatedAccumulator {
 public:
  void Add(double value) { AddExtended(value); }
  void Merge(const CompensatedAccumulator& other) {
    AddExtended(other.sum_);
    compensation_ += other.compensation_;
  }
  double Sum() const { return static_cast<double>(sum_ + compensation_); }

 private:
  void AddExtended(long double x) {
    const long double t = sum_ + x;
    compensation_ +=
        (sum_ >= 0 ? sum_ : -sum_) >= (x >= 0 ? x : -x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  long double sum_ = 0;
  long double compensation_ = 0;
};

// count, mean, min, max and the sample standard deviation (n-1 in the denominator; 0 for a
// single value), as the original's chunk statistics; with `with_percentiles`, also p50, p90,
// p95, p99 (numpy "linear", see stats/percentile.h). `values` must be finite; they are only
// read (percentiles by a radix selection, stats::PercentilesOfFinite given the range found by
// the sum's pass), so a column shared by several readers needs no copy. Empty input gives an
// all-zero message (no percentiles). `sum`, if not null, receives CompensatedSum(values)
// (computed for the mean anyway). Cost: O(n): four passes (sum and range, deviations, the
// percentiles' histogram and their pick).
v1::DistributionStats ComputeDistributionStatsOf(absl::Span<const double> values,
                                                 bool with_percentiles, double* sum = nullptr);

// The same; kept for callers that hand a scratch buffer (no longer reordered). Cost: O(n).
v1::DistributionStats ComputeDistributionStatsInPlace(absl::Span<double> values,
                                                      bool with_percentiles);

// The original's statistics without percentiles, on a copy. Cost: O(n).
v1::DistributionStats ComputeDistributionStats(std::vector<double> values);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_
