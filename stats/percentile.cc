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

// PercentilesOfFinite's selection: Add every value (the histogram), then Percentiles picks them
// in one more pass. (Adding in a caller's deviation pass instead made gcc keep the long double
// sum in memory: slower than a pass of its own.)
class RankHistogram {
 public:
  // `min`, `max`: of the finite values that will be added.
  RankHistogram(double min, double max);

  bool one_value() const { return one_value_; }
  void Add(double value) { ++counts_[(OrderKey(value) - min_key_) >> shift_]; }

  // After every value of `values` (and no other) was added. Cost: O(n) reads.
  std::vector<double> Percentiles(absl::Span<const double> values,
                                  absl::Span<const double> quantiles) const;

  // An unsigned key with the doubles' order: key(a) < key(b) iff a < b for finite a, b (and
  // -0.0 just below +0.0, which compare equal: either is a right answer for their rank).
  static uint64_t OrderKey(double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    constexpr uint64_t kSign = uint64_t{1} << 63;
    return (bits & kSign) != 0 ? ~bits : bits | kSign;
  }

 private:
  std::vector<double> ValuesOfRanks(absl::Span<const double> values,
                                    const std::vector<size_t>& ranks) const;

  double min_;
  uint64_t min_key_;
  int shift_ = 0;
  bool one_value_;  // min and max have the same bits: every percentile is that value
  std::vector<uint32_t> counts_;
};

double FromOrderKey(uint64_t key) {
  constexpr uint64_t kSign = uint64_t{1} << 63;
  const uint64_t bits = (key & kSign) != 0 ? key & ~kSign : ~key;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

RankHistogram::RankHistogram(double min, double max)
    // A zero of either sign may be the minimum or maximum: the key range covers both zeros.
    : min_(min),
      min_key_(OrderKey(min == 0 ? -0.0 : min)),
      one_value_(std::memcmp(&min, &max, sizeof(double)) == 0) {
  // A histogram over the key range: 2^14 counts stay in the L1/L2 cache.
  constexpr size_t kBuckets = size_t{1} << 14;
  const uint64_t range = OrderKey(max == 0 ? 0.0 : max) - min_key_;
  while (shift_ < 63 && (range >> shift_) >= kBuckets) ++shift_;
  counts_.assign(static_cast<size_t>(range >> shift_) + 1, 0);
}

// The values of ranks `ranks` (0-based positions in sorted order) of `values`, which is not
// modified.
std::vector<double> RankHistogram::ValuesOfRanks(absl::Span<const double> values,
                                                 const std::vector<size_t>& ranks) const {
  const size_t buckets = counts_.size();
  // For each rank, its bucket and its rank among the bucket's values.
  std::vector<size_t> below(buckets + 1, 0);
  for (size_t b = 0; b < buckets; ++b) below[b + 1] = below[b] + counts_[b];
  std::vector<std::pair<size_t, size_t>> where(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    const size_t b = static_cast<size_t>(std::upper_bound(below.begin(), below.end(), ranks[i]) -
                                         below.begin()) -
                     1;
    where[i] = {b, ranks[i] - below[b]};
  }
  std::vector<double> result(ranks.size());
  if (shift_ == 0) {
    // Each bucket is one key, so one value.
    for (size_t i = 0; i < ranks.size(); ++i) result[i] = FromOrderKey(min_key_ + where[i].first);
    return result;
  }
  // Copy out the values of the buckets that hold a wanted rank, then select in each.
  constexpr uint32_t kUnwanted = UINT32_MAX;
  std::vector<uint32_t> slot(buckets, kUnwanted);
  std::vector<std::vector<double>> picked;
  for (const auto& [bucket, rank] : where) {
    if (slot[bucket] != kUnwanted) continue;
    slot[bucket] = static_cast<uint32_t>(picked.size());
    picked.emplace_back().reserve(counts_[bucket]);
  }
  for (double v : values) {
    const uint32_t s = slot[(OrderKey(v) - min_key_) >> shift_];
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

std::vector<double> RankHistogram::Percentiles(absl::Span<const double> values,
                                               absl::Span<const double> quantiles) const {
  // Per quantile: its lower rank, then its upper rank (the same when nothing is interpolated).
  std::vector<QuantileRank> ranks;
  std::vector<size_t> wanted;
  for (double q : quantiles) {
    const QuantileRank& rank = ranks.emplace_back(RankOfQuantile(q, values.size()));
    wanted.push_back(rank.lower);
    wanted.push_back(rank.upper());
  }
  // One value (every value has the same bits): no pass needed.
  const std::vector<double> at =
      one_value_ ? std::vector<double>(wanted.size(), min_) : ValuesOfRanks(values, wanted);
  std::vector<double> result(quantiles.size());
  for (size_t i = 0; i < quantiles.size(); ++i) {
    result[i] = Interpolate(ranks[i], at[2 * i], at[2 * i + 1]);
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
  RankHistogram histogram(min, max);
  if (!histogram.one_value()) {
    for (double v : values) histogram.Add(v);
  }
  return histogram.Percentiles(values, quantiles);
}

}  // namespace stats
}  // namespace roastcoffea
