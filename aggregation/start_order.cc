#include "aggregation/start_order.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/numeric/bits.h"
#include "aggregation/radix_sort.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Bits that hold the values 0..max.
int BitsFor(uint64_t max) { return max == 0 ? 0 : 64 - absl::countl_zero(max); }

// Sorts `keys` by their bits [low, low + bits), stably: a least-significant-digit radix sort
// whose digit counts are all taken in one pass. Cost: O(n) per digit of at most 11 bits.
void RadixSortBits(std::vector<uint64_t>& keys, int low, int bits) {
  constexpr int kMaxDigitBits = 11;
  constexpr int kMaxPasses = 6;  // 64 bits
  const int passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
  if (passes == 0) return;
  const int digit_bits = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit_bits) - 1;
  std::array<std::vector<size_t>, kMaxPasses> offsets;
  for (int p = 0; p < passes; ++p) offsets[p].assign(size_t{1} << digit_bits, 0);
  for (const uint64_t key : keys) {
    for (int p = 0; p < passes; ++p) ++offsets[p][(key >> (low + p * digit_bits)) & mask];
  }
  std::vector<uint64_t> buffer(keys.size());
  for (int p = 0; p < passes; ++p) {
    size_t sum = 0;
    for (size_t& offset : offsets[p]) sum += std::exchange(offset, sum);
    const int shift = low + p * digit_bits;
    size_t* offset = offsets[p].data();
    for (const uint64_t key : keys) buffer[offset[(key >> shift) & mask]++] = key;
    keys.swap(buffer);
  }
}

// The general case, for starts too far apart to pack with an index into 64 bits: (start, index)
// pairs of 16 bytes.
void SortPairs(const std::vector<int64_t>& start, StartOrder* order) {
  struct Item {
    uint64_t key;    // start_unix_ns, ordered as unsigned
    uint32_t index;  // the record
  };
  std::vector<Item> items, buffer;
  items.reserve(start.size());
  for (size_t i = 0; i < start.size(); ++i) {
    items.push_back({OrderedUnsigned(start[i]), static_cast<uint32_t>(i)});
  }
  RadixSortByKey(items, buffer);
  buffer = std::vector<Item>();
  order->records.reserve(items.size());
  for (size_t k = 0; k < items.size(); ++k) {
    order->records.push_back(items[k].index);
    if (k > 0 && items[k].key == items[k - 1].key) order->any_same_start = true;
  }
}

}  // namespace

StartOrder OrderByStart(const ChunkColumns& chunks) {
  StartOrder order;
  const std::vector<int64_t>& start = chunks.start_unix_ns;
  const size_t n = start.size();
  order.size = n;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = OrderedUnsigned(start[i]);
    lo = std::min(lo, key);
    hi = std::max(hi, key);
    if (i == 0) continue;
    order.in_order = order.in_order && start[i - 1] <= start[i];
    order.any_same_start = order.any_same_start || start[i - 1] == start[i];
  }
  if (order.in_order) return order;
  order.any_same_start = false;
  const int index_bits = BitsFor(n - 1);
  const int start_bits = BitsFor(hi - lo);
  if (index_bits + start_bits > 64) {
    SortPairs(start, &order);
    return order;
  }
  // Each record as one integer, its start (less the earliest) above its index: sorted by the
  // start bits alone, stably, records of one instant keep their order. Half the bytes a
  // (start, index) pair moves in every pass.
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = (OrderedUnsigned(start[i]) - lo) << index_bits | i;
  }
  RadixSortBits(keys, index_bits, start_bits);
  const uint64_t index_mask = (uint64_t{1} << index_bits) - 1;  // index_bits <= 32
  order.records.resize(n);
  for (size_t k = 0; k < n; ++k) {
    order.records[k] = static_cast<uint32_t>(keys[k] & index_mask);
    if (k > 0 && keys[k] >> index_bits == keys[k - 1] >> index_bits) order.any_same_start = true;
  }
  return order;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
