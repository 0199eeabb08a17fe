#include "aggregation/distribution_stats.h"

#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

TEST(DistributionStatsTest, SampleStdOfOneToFour) {
  // docs/reference.md §4: durations [1,2,3,4] -> mean 2.5, sample std sqrt(5/3) = 1.29099.
  const v1::DistributionStats stats = ComputeDistributionStats({3, 1, 4, 2});
  EXPECT_EQ(stats.count(), 4);
  EXPECT_DOUBLE_EQ(stats.mean(), 2.5);
  EXPECT_DOUBLE_EQ(stats.min(), 1);
  EXPECT_DOUBLE_EQ(stats.max(), 4);
  EXPECT_NEAR(stats.std(), 1.29099, 1e-5);
}

TEST(DistributionStatsTest, TenTwentyThirty) {
  const v1::DistributionStats stats = ComputeDistributionStats({10, 20, 30});
  EXPECT_DOUBLE_EQ(stats.mean(), 20);
  EXPECT_DOUBLE_EQ(stats.std(), 10);
}

TEST(DistributionStatsTest, OneValueHasZeroStd) {
  const v1::DistributionStats stats = ComputeDistributionStats({-7.5});
  EXPECT_EQ(stats.count(), 1);
  EXPECT_DOUBLE_EQ(stats.mean(), -7.5);
  EXPECT_DOUBLE_EQ(stats.min(), -7.5);
  EXPECT_DOUBLE_EQ(stats.max(), -7.5);
  EXPECT_DOUBLE_EQ(stats.std(), 0);
}

TEST(DistributionStatsTest, EmptyInputIsAllZero) {
  const v1::DistributionStats stats = ComputeDistributionStats({});
  EXPECT_EQ(stats.count(), 0);
  EXPECT_DOUBLE_EQ(stats.mean(), 0);
  EXPECT_DOUBLE_EQ(stats.std(), 0);
}

TEST(DistributionStatsTest, OrderDoesNotChangeAnyBit) {
  const v1::DistributionStats a = ComputeDistributionStats({0.1, 0.2, 0.3, 1e16, -1e16});
  const v1::DistributionStats b = ComputeDistributionStats({-1e16, 0.3, 1e16, 0.1, 0.2});
  EXPECT_EQ(a.mean(), b.mean());
  EXPECT_EQ(a.std(), b.std());
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea

namespace roastcoffea {
namespace aggregation_internal {
namespace {

TEST(DistributionStatsTest, PercentilesMatchNumpyHandValues) {
  // numpy.percentile([1..10], [50, 90, 95, 99]) = [5.5, 9.1, 9.55, 9.91].
  std::vector<double> values = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  const v1::DistributionStats stats = ComputeDistributionStatsInPlace(absl::MakeSpan(values), true);
  ASSERT_TRUE(stats.has_percentiles());
  EXPECT_DOUBLE_EQ(stats.percentiles().p50(), 5.5);
  EXPECT_DOUBLE_EQ(stats.percentiles().p90(), 9.1);
  EXPECT_DOUBLE_EQ(stats.percentiles().p95(), 9.55);
  EXPECT_DOUBLE_EQ(stats.percentiles().p99(), 9.91);
  EXPECT_DOUBLE_EQ(stats.mean(), 5.5);
}

TEST(DistributionStatsTest, CompensatedSumIsOrderIndependent) {
  EXPECT_EQ(CompensatedSum({1e16, 0.1, -1e16, 0.2}), CompensatedSum({0.2, 0.1, 1e16, -1e16}));
  EXPECT_DOUBLE_EQ(CompensatedSum({1e16, 0.5, -1e16}), 0.5);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
