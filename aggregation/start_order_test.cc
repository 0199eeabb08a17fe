// OrderByStart (start_order.h): the stable order by start of every record, whichever path sorts
// (in order already, starts packed with their index, or too far apart to pack), and whether two
// records share an instant.
#include "aggregation/start_order.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

ChunkColumns WithStarts(const std::vector<int64_t>& starts) {
  ChunkColumns columns;
  columns.start_unix_ns = starts;
  columns.duration_seconds.assign(starts.size(), 1.0);  // size() counts these
  return columns;
}

// What OrderByStart must give: std::stable_sort of the indices by start.
std::vector<uint32_t> Expected(const std::vector<int64_t>& starts) {
  std::vector<uint32_t> order(starts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return starts[a] < starts[b]; });
  return order;
}

std::vector<uint32_t> Positions(const StartOrder& order) {
  std::vector<uint32_t> out;
  for (size_t k = 0; k < order.size; ++k) out.push_back(order.at(k));
  return out;
}

void ExpectStableOrder(const std::vector<int64_t>& starts, bool same_start) {
  const StartOrder order = OrderByStart(WithStarts(starts));
  EXPECT_EQ(order.size, starts.size());
  EXPECT_EQ(Positions(order), Expected(starts));
  EXPECT_EQ(order.in_order, std::is_sorted(starts.begin(), starts.end()));
  EXPECT_EQ(order.in_order, order.records.empty());
  EXPECT_EQ(order.any_same_start, same_start);
}

TEST(OrderByStartTest, ShuffledDistinctStartsAreSorted) {
  std::vector<int64_t> starts;
  for (int i = 0; i < 100000; ++i) starts.push_back(1'765'000'000'000'000'000 + i * 3'600'000LL);
  std::shuffle(starts.begin(), starts.end(), std::mt19937_64(1));
  ExpectStableOrder(starts, /*same_start=*/false);
}

TEST(OrderByStartTest, SharedInstantsKeepTheRecordsOrder) {
  std::mt19937_64 rng(2);
  std::vector<int64_t> starts;
  for (int i = 0; i < 50000; ++i) starts.push_back(1'000'000 + static_cast<int64_t>(rng() % 997));
  ExpectStableOrder(starts, /*same_start=*/true);
}

TEST(OrderByStartTest, StartsTooFarApartToPackWithTheirIndex) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> starts;
  for (int i = 0; i < 20000; ++i) starts.push_back(static_cast<int64_t>(rng()));  // negative too
  starts.push_back(starts[5]);
  ExpectStableOrder(starts, /*same_start=*/true);
}

TEST(OrderByStartTest, InOrderAllocatesNothing) {
  ExpectStableOrder({1, 2, 2, 5, 9}, /*same_start=*/true);
  ExpectStableOrder({1, 2, 3}, /*same_start=*/false);
  ExpectStableOrder({}, /*same_start=*/false);
  ExpectStableOrder({7}, /*same_start=*/false);
  ExpectStableOrder({3, 1, 2}, /*same_start=*/false);  // few records
}

// The ends of int64 (zero, negative, INT64_MIN and INT64_MAX starts, out of order), and spreads
// whose bits with the index's fill exactly 64 bits or one more (the packed path's edge).
TEST(OrderByStartTest, ExtremeStartsAndSpreadsAtThePackingEdge) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ExpectStableOrder({kMax, 0, -1, kMin, kMax, 0, 1, kMin}, /*same_start=*/true);
  ExpectStableOrder({0, kMax, -5, 3}, /*same_start=*/false);
  ExpectStableOrder({kMax, kMax - 1}, /*same_start=*/false);
  ExpectStableOrder({kMin + 1, kMin}, /*same_start=*/false);
  std::mt19937_64 rng(4);
  for (const size_t n : {2, 3, 4, 5, 9, 17, 300, 4097}) {
    const int index_bits = n <= 1 ? 0 : 64 - __builtin_clzll(n - 1);
    for (int spread_bits = 62 - index_bits; spread_bits <= 64 - index_bits + 1; ++spread_bits) {
      if (spread_bits <= 0 || spread_bits > 64) continue;
      const uint64_t spread = spread_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << spread_bits) - 1;
      std::vector<int64_t> starts;
      const int64_t base = -static_cast<int64_t>(rng() >> 2);
      for (size_t i = 0; i < n; ++i) {
        // Unsigned arithmetic: wraps as the starts' order-preserving mapping does.
        starts.push_back(
            static_cast<int64_t>(static_cast<uint64_t>(base) + rng() % (spread / 2 + 1) * 2));
      }
      starts[rng() % n] = static_cast<int64_t>(static_cast<uint64_t>(base) + spread - 1);
      starts.push_back(starts[rng() % n]);  // one instant shared
      ExpectStableOrder(starts, /*same_start=*/true);
    }
  }
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
