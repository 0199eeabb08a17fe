// OrderByStart (start_order.h): the stable order by start of every record, whichever path sorts
// (in order already, starts packed with their index, or too far apart to pack), and whether two
// records share an instant.
#include "aggregation/start_order.h"

#include <algorithm>
#include <cstdint>
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

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
