#include "aggregation/distribution_stats.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "stats/percentile.h"

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

// What CompensatedSum computed for every input before its integer path: Neumaier's sum in long
// double. The integer path must give these doubles bit for bit.
double LongDoubleNeumaier(const std::vector<double>& values) {
  long double sum = 0;
  long double compensation = 0;
  for (double v : values) {
    const long double x = v;
    const long double t = sum + x;
    compensation += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  return static_cast<double>(sum + compensation);
}

void ExpectSameBits(double a, double b, const char* what) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(double)), 0) << what << ": " << a << " vs " << b;
}

TEST(DistributionStatsTest, IntegerSumsAreTheLongDoubleSumsBitForBit) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> bytes(-50'000'000, 200'000'000);
  std::uniform_int_distribution<int64_t> huge(-(int64_t{1} << 53), int64_t{1} << 53);
  std::vector<double> small, large, positive_large, mixed_tail, with_fraction_late;
  for (int i = 0; i < 100'003; ++i) {
    small.push_back(static_cast<double>(bytes(rng)));
    large.push_back(static_cast<double>(huge(rng)));
    positive_large.push_back(static_cast<double>(huge(rng) & ((int64_t{1} << 53) - 1)));
  }
  // Sums of sizes past 2^64 (2^12 values near 2^53): the long double loop takes over.
  for (int i = 0; i < 5000; ++i) mixed_tail.push_back(9007199254740992.0 - 2.0 * i);
  // Integers for many blocks, then one fraction: no half-integer sum.
  with_fraction_late = small;
  with_fraction_late.push_back(0.25);
  std::vector<double> zeros = {-0.0, 0.0, -0.0};
  std::vector<double> one_negative_zero = {-0.0};
  std::vector<double> beyond_exact = {9007199254740994.0, 1.0, 3.0};  // 2^53 + 2
  for (const auto& [values, what] :
       {std::pair{&small, "bytes"}, std::pair{&large, "up to 2^53, both signs"},
        std::pair{&positive_large, "up to 2^53, positive"}, std::pair{&mixed_tail, "past 2^64"},
        std::pair{&with_fraction_late, "a fraction at the end"}, std::pair{&zeros, "zeros"},
        std::pair{&one_negative_zero, "-0.0"}, std::pair{&beyond_exact, "beyond 2^53"}}) {
    ExpectSameBits(CompensatedSum(*values), LongDoubleNeumaier(*values), what);
    double sum = 0;
    const v1::DistributionStats stats = ComputeDistributionStatsOf(*values, true, &sum);
    ExpectSameBits(sum, LongDoubleNeumaier(*values), what);
    ExpectSameBits(stats.mean(), LongDoubleNeumaier(*values) / static_cast<double>(values->size()),
                   what);
  }
}

TEST(DistributionStatsTest, RangeAndPercentilesFromTheSumPass) {
  for (const std::vector<double>& values :
       {std::vector<double>{5, -3, 8, 8, 1}, std::vector<double>{2.5, -0.25, 7.75},
        std::vector<double>{0.0, -0.0, 4}, std::vector<double>{-1e300, 1e-300, 3}}) {
    const v1::DistributionStats stats = ComputeDistributionStatsOf(values, true);
    double min = values[0];
    double max = values[0];
    for (double v : values) {
      min = std::min(min, v);
      max = std::max(max, v);
    }
    ExpectSameBits(stats.min(), min, "min");
    ExpectSameBits(stats.max(), max, "max");
    const auto p = stats::PercentilesOfConst(values, {0.5, 0.9, 0.95, 0.99});
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(stats.percentiles().p50(), (*p)[0]);
    EXPECT_EQ(stats.percentiles().p90(), (*p)[1]);
    EXPECT_EQ(stats.percentiles().p95(), (*p)[2]);
    EXPECT_EQ(stats.percentiles().p99(), (*p)[3]);
  }
}

// The standard deviation against its definition: exactly for small integers, and within 4 ulp
// of a single long double chain over random values of every shape the chunks give.
TEST(DistributionStatsTest, StdMatchesItsDefinition) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations 32, sample variance 32 / 7.
  EXPECT_EQ(ComputeDistributionStats({2, 4, 4, 4, 5, 5, 7, 9}).std(), std::sqrt(32.0 / 7.0));
  // 1, 2, 3, 4, 10 (odd count: one value left for the even lane): mean 4, squared deviations
  // 50, sample variance 12.5.
  EXPECT_EQ(ComputeDistributionStats({1, 2, 3, 4, 10}).std(), std::sqrt(12.5));
  std::mt19937_64 rng(13);
  std::lognormal_distribution<double> duration(0.0, 0.7);
  std::uniform_int_distribution<int64_t> bytes(-50'000'000, 200'000'000);
  for (int n : {2, 3, 1001, 100'000}) {
    std::vector<double> durations, deltas;
    for (int i = 0; i < n; ++i) {
      durations.push_back(duration(rng));
      deltas.push_back(static_cast<double>(bytes(rng)));
    }
    for (const std::vector<double>* values : {&durations, &deltas}) {
      const v1::DistributionStats stats = ComputeDistributionStats(*values);
      long double squared = 0;
      for (double v : *values) {
        const long double d = static_cast<long double>(v) - stats.mean();
        squared += d * d;
      }
      EXPECT_DOUBLE_EQ(stats.std(), static_cast<double>(std::sqrt(squared / (n - 1)))) << n;
    }
  }
}

// A constant column skips the deviations' pass: its std is 0 only when every value has the
// mean's bits; a column of equal magnitudes with both zeros, or values of one bit apart, still
// gets the pass.
TEST(DistributionStatsTest, ConstantColumnsHaveZeroStd) {
  EXPECT_EQ(ComputeDistributionStats(std::vector<double>(1000, 100000.0)).std(), 0.0);
  EXPECT_EQ(ComputeDistributionStats(std::vector<double>(999, 0.1)).std(), 0.0);
  EXPECT_EQ(ComputeDistributionStats({0.0, -0.0, 0.0}).std(), 0.0);
  const double above = std::nextafter(0.1, 1.0);
  const v1::DistributionStats near = ComputeDistributionStats({0.1, above, 0.1, above});
  EXPECT_GT(near.std(), 0.0);
  long double squared = 0;
  for (double v : {0.1, above, 0.1, above}) {
    squared +=
        (static_cast<long double>(v) - near.mean()) * (static_cast<long double>(v) - near.mean());
  }
  EXPECT_DOUBLE_EQ(near.std(), static_cast<double>(std::sqrt(squared / 3)));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
