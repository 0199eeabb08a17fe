#include "stats/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

namespace {

// An unsigned key with the doubles' order: key(a) < key(b) iff a < b for finite a, b (and
// -0.0 just below +0.0, which compare equal: either is a right answer for their rank).
uint64_t OrderKey(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  constexpr uint64_t kSign = uint64_t{1} << 63;
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

double FromOrderKey(uint64_t key) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  const uint64_t bits = (key & kSign) != 0 ? key & ~kSign : ~key;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The values of ranks `ranks` (0-based positions in sorted order) of `values`, which is not
// modified. `min_key`/`max_key`: the smallest and largest OrderKey of the values.
std::vector<double> ValuesOfRanks(absl::Span<const double> values, uint64_t min_key,
                                  uint64_t max_key, const std::vector<size_t>& ranks) {
  // A histogram over the key range: 2^14 counts stay in the L1/L2 cache.
  constexpr size_t kBuckets = size_t{1} << 14;
  const uint64_t range = max_key - min_key;
  int shift = 0;
  while (shift < 63 && (range >> shift) >= kBuckets) ++shift;
  const size_t buckets = static_cast<size_t>(range >> shift) + 1;
  std::vector<uint32_t> count(buckets, 0);
  for (double v : values) ++count[(OrderKey(v) - min_key) >> shift];
  // For each rank, its bucket and its rank among the bucket's values.
  std::vector<size_t> below(buckets + 1, 0);
  for (size_t b = 0; b < buckets; ++b) below[b + 1] = below[b] + count[b];
  std::vector<std::pair<size_t, size_t>> where(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    const size_t b = static_cast<size_t>(std::upper_bound(below.begin(), below.end(), ranks[i]) -
                                         below.begin()) -
                     1;
    where[i] = {b, ranks[i] - below[b]};
  }
  std::vector<double> result(ranks.size());
  if (shift == 0) {
    // Each bucket is one key, so one value.
    for (size_t i = 0; i < ranks.size(); ++i) result[i] = FromOrderKey(min_key + where[i].first);
    return result;
  }
  // Copy out the values of the buckets that hold a wanted rank, then select in each.
  constexpr uint32_t kUnwanted = UINT32_MAX;
  std::vector<uint32_t> slot(buckets, kUnwanted);
  std::vector<std::vector<double>> picked;
  for (const auto& [bucket, rank] : where) {
    if (slot[bucket] != kUnwanted) continue;
    slot[bucket] = static_cast<uint32_t>(picked.size());
    picked.emplace_back().reserve(count[bucket]);
  }
  for (double v : values) {
    const uint32_t s = slot[(OrderKey(v) - min_key) >> shift];
    if (s != kUnwanted) picked[s].push_back(v);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    std::vector<double>& bucket = picked[slot[where[i].first]];
    const auto nth = bucket.begin() + static_cast<std::ptrdiff_t>(where[i].second);
    std::nth_element(bucket.begin(), nth, bucket.end());
    result[i] = *nth;
  }
  return result;
}

}  // namespace

absl::StatusOr<std::vector<double>> PercentilesOfConst(absl::Span<const double> values,
                                                       absl::Span<const double> quantiles) {
  if (values.empty()) return absl::InvalidArgumentError("Percentiles: values is empty");
  uint64_t min_key = UINT64_MAX;
  uint64_t max_key = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("Percentiles: values[", i, "] is ", values[i], "; expected finite"));
    }
    const uint64_t key = OrderKey(values[i]);
    min_key = std::min(min_key, key);
    max_key = std::max(max_key, key);
  }
  const size_t n = values.size();
  // Per quantile: rank k, and k + 1 when the percentile lies between two values.
  std::vector<size_t> ranks;
  std::vector<double> fractions(quantiles.size());
  for (size_t i = 0; i < quantiles.size(); ++i) {
    if (!(quantiles[i] >= 0 && quantiles[i] <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat("Percentiles: quantiles[", i, "] is ",
                                                     quantiles[i], "; expected 0 <= q <= 1"));
    }
    const double h = quantiles[i] * static_cast<double>(n - 1);
    const size_t k = std::min(static_cast<size_t>(std::floor(h)), n - 1);
    fractions[i] = k + 1 >= n ? 0.0 : h - static_cast<double>(k);
    ranks.push_back(k);
    ranks.push_back(fractions[i] == 0 ? k : k + 1);
  }
  const std::vector<double> at = ValuesOfRanks(values, min_key, max_key, ranks);
  std::vector<double> result(quantiles.size());
  for (size_t i = 0; i < quantiles.size(); ++i) {
    const double lower = at[2 * i];
    result[i] = fractions[i] == 0 ? lower : lower + fractions[i] * (at[2 * i + 1] - lower);
  }
  return result;
}

}  // namespace stats
}  // namespace roastcoffea
