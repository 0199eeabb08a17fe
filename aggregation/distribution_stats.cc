#include "aggregation/distribution_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/numeric/int128.h"
#include "stats/percentile.h"

namespace roastcoffea {
namespace aggregation_internal {

namespace {

struct SumAndRange {
  double sum = 0;  // CompensatedSum's result
  double min = 0;  // first of equal minima, as std::min in order gives
  double max = 0;
};

// Neumaier's sum in long double, and the range, in one pass.
SumAndRange LongDoubleSumAndRange(absl::Span<const double> values) {
  SumAndRange result;
  if (!values.empty()) result.min = result.max = values[0];
  long double sum = 0;
  long double compensation = 0;
  for (double v : values) {
    const long double x = v;
    const long double t = sum + x;
    compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
    result.min = std::min(result.min, v);
    result.max = std::max(result.max, v);
  }
  result.sum = static_cast<double>(sum + compensation);
  return result;
}

// The same sum for values that are all integers of at most 2^53 in size (events, bytes), in
// integers: exact, and several times faster than the long double loop. The same double: every
// partial sum of that loop is at most `magnitude` (the sum of the sizes) in size; below 2^64 it
// is an integer long double holds exactly, so that loop's result is the exact sum rounded once
// to double, as here. False (and nothing set) when a value is not such an integer or the sizes
// reach 2^64.
bool IntegerSumAndRange(absl::Span<const double> values, SumAndRange* out) {
  constexpr double kExactLimit = 9007199254740992.0;  // 2^53
  constexpr size_t kBlock = 512;  // 512 values of at most 2^53: a block's sums fit in int64
  absl::int128 sum = 0;
  absl::int128 magnitude = 0;
  double min = values.empty() ? 0 : values[0];
  double max = min;
  for (size_t first = 0; first < values.size(); first += kBlock) {
    const size_t last = std::min(values.size(), first + kBlock);
    int64_t block_sum = 0;
    int64_t block_magnitude = 0;
    bool integers = true;
    for (size_t i = first; i < last; ++i) {
      const double v = values[i];
      const bool in_range = std::fabs(v) <= kExactLimit;
      const int64_t k = in_range ? static_cast<int64_t>(v) : 0;
      integers &= in_range & (static_cast<double>(k) == v);
      block_sum += k;
      block_magnitude += k < 0 ? -k : k;
      min = std::min(min, v);
      max = std::max(max, v);
    }
    if (!integers) return false;
    sum += block_sum;
    magnitude += block_magnitude;
  }
  if (magnitude >= absl::MakeInt128(1, 0)) return false;  // 2^64
  out->sum = static_cast<double>(sum);
  out->min = min;
  out->max = max;
  return true;
}

SumAndRange SumWithRange(absl::Span<const double> values) {
  SumAndRange result;
  if (IntegerSumAndRange(values, &result)) return result;
  return LongDoubleSumAndRange(values);
}

// Sum of (v - mean)^2 in long double, in two independent lanes (even and odd positions): one
// chain of long double additions was the pass's cost. The lanes change the long double sum only
// in its last bits, 11 below the double the deviation is rounded to.
long double SquaredDeviations(absl::Span<const double> values, double mean) {
  long double even = 0;
  long double odd = 0;
  size_t i = 0;
  for (; i + 2 <= values.size(); i += 2) {
    const long double d0 = static_cast<long double>(values[i]) - mean;
    const long double d1 = static_cast<long double>(values[i + 1]) - mean;
    even += d0 * d0;
    odd += d1 * d1;
  }
  if (i < values.size()) {
    const long double d = static_cast<long double>(values[i]) - mean;
    even += d * d;
  }
  return even + odd;
}

}  // namespace

double CompensatedSum(absl::Span<const double> values) { return SumWithRange(values).sum; }

v1::DistributionStats ComputeDistributionStatsOf(absl::Span<const double> values,
                                                 bool with_percentiles, double* sum) {
  v1::DistributionStats stats;
  const SumAndRange total = SumWithRange(values);
  if (sum != nullptr) *sum = total.sum;
  if (values.empty()) return stats;
  const double n = static_cast<double>(values.size());
  const double mean = total.sum / n;
  // Every value with the same bits as the mean (a constant column: events of equal chunks, a
  // fixed bytes_read): every deviation is exactly 0, no pass needed.
  const bool all_the_mean = std::memcmp(&total.min, &total.max, sizeof(double)) == 0 &&
                            std::memcmp(&total.min, &mean, sizeof(double)) == 0;
  const long double squared_deviations = all_the_mean ? 0 : SquaredDeviations(values, mean);
  stats.set_count(static_cast<int64_t>(values.size()));
  stats.set_mean(mean);
  stats.set_min(total.min);
  stats.set_max(total.max);
  if (values.size() > 1) {
    stats.set_std(static_cast<double>(std::sqrt(squared_deviations / (n - 1))));
  }
  if (with_percentiles) {
    // The values are finite (validated by the callers) and their range is known.
    const std::vector<double> p =
        stats::PercentilesOfFinite(values, total.min, total.max, {0.5, 0.9, 0.95, 0.99});
    v1::Percentiles* out = stats.mutable_percentiles();
    out->set_p50(p[0]);
    out->set_p90(p[1]);
    out->set_p95(p[2]);
    out->set_p99(p[3]);
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
