#include "stats/percentile.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "stats/percentile_rank.h"

namespace roastcoffea {
namespace stats {

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
  if (absl::Status input = CheckPercentileInput(values, quantiles); !input.ok()) return input;
  const auto [min, max] = std::minmax_element(values.begin(), values.end());
  return PercentilesOfFinite(values, *min, *max, quantiles);
}

std::vector<double> PercentilesOfFinite(absl::Span<const double> values, double min, double max,
                                        absl::Span<const double> quantiles) {
  // A zero of either sign may be the minimum or maximum: the key range covers both zeros.
  const uint64_t min_key = OrderKey(min == 0 ? -0.0 : min);
  const uint64_t max_key = OrderKey(max == 0 ? 0.0 : max);
  // Per quantile: its lower rank, then its upper rank (the same when nothing is interpolated).
  std::vector<QuantileRank> ranks;
  std::vector<size_t> wanted;
  for (double q : quantiles) {
    const QuantileRank& rank = ranks.emplace_back(RankOfQuantile(q, values.size()));
    wanted.push_back(rank.lower);
    wanted.push_back(rank.upper());
  }
  const std::vector<double> at = ValuesOfRanks(values, min_key, max_key, wanted);
  std::vector<double> result(quantiles.size());
  for (size_t i = 0; i < quantiles.size(); ++i) {
    result[i] = Interpolate(ranks[i], at[2 * i], at[2 * i + 1]);
  }
  return result;
}

}  // namespace stats
}  // namespace roastcoffea
