// A stable radix sort of items by a 64-bit integer key, for the orders aggregation makes of 10^6
// chunk records (chunk_info's, the findings'): a comparison sort of that many costs ~20
// comparisons a record, this a few passes over the keys. Internal to //aggregation.
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_AGGREGATION_RADIX_SORT_H_
#define ROASTCOFFEA_AGGREGATION_RADIX_SORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/numeric/bits.h"

namespace roastcoffea {
namespace aggregation_internal {

// The order of int64 values as unsigned integers (a key for RadixSortByKey).
inline uint64_t OrderedUnsigned(int64_t value) {
  return static_cast<uint64_t>(value) ^ (uint64_t{1} << 63);
}

// Sorts `items` (each with a `uint64_t key` member) by key, stably: a least-significant-digit
// radix sort over only the bits in which the keys differ (a run of one hour in nanoseconds
// differs in 42 bits: four passes of 11 bits). Small inputs go to std::stable_sort. `buffer`:
// scratch space, reusable across calls. Cost: O(items) per pass.
template <typename Item>
void RadixSortByKey(std::vector<Item>& items, std::vector<Item>& buffer) {
  if (items.size() < 256) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& c) { return a.key < c.key; });
    return;
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Item& item : items) {
    lo = std::min(lo, item.key);
    hi = std::max(hi, item.key);
  }
  if (lo == hi) return;
  const int bits = 64 - absl::countl_zero(hi - lo);
  const int passes = (bits + 10) / 11;
  const int digit_bits = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit_bits) - 1;
  buffer.resize(items.size());
  std::vector<size_t> offsets(size_t{1} << digit_bits);
  for (int shift = 0; shift < bits; shift += digit_bits) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (const Item& item : items) ++offsets[((item.key - lo) >> shift) & mask];
    size_t sum = 0;
    for (size_t& offset : offsets) sum += std::exchange(offset, sum);
    for (const Item& item : items) buffer[offsets[((item.key - lo) >> shift) & mask]++] = item;
    items.swap(buffer);
  }
}

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_RADIX_SORT_H_
