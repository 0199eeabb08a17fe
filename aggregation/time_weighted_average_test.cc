#include "aggregation/time_weighted_average.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

// Reference §4 trapezoid golden cases.
TEST(TimeWeightedAverageTest, RisingThenFlatCountsAverageToThreeAndAHalf) {
  // (2+4)/2*1 + (4+4)/2*1 = 7 over 2 s.
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{0, 2}, {kSecond, 4}, {2 * kSecond, 4}}), 3.5);
}

TEST(TimeWeightedAverageTest, ConstantSeriesAveragesToItsValue) {
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{0, 4}, {kSecond, 4}, {2 * kSecond, 4}}), 4.0);
}

TEST(TimeWeightedAverageTest, SingleSampleIsItsValue) {
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{123, 5}}), 5.0);
}

TEST(TimeWeightedAverageTest, NoSamplesIsZero) { EXPECT_DOUBLE_EQ(TimeWeightedAverage({}), 0.0); }

TEST(TimeWeightedAverageTest, MicrosecondWindowIsResolved) {
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{0, 5}, {1000, 7}}), 6.0);
}

TEST(TimeWeightedAverageTest, UnevenSpacing) {
  // (2+4)/2*1 + (4+4)/2*2 + (4+0)/2*1 = 3 + 8 + 2 = 13 over 4 s.
  EXPECT_DOUBLE_EQ(
      TimeWeightedAverage({{0, 2}, {kSecond, 4}, {3 * kSecond, 4}, {4 * kSecond, 0}}), 3.25);
}

TEST(TimeWeightedAverageTest, UnsortedInputGivesTheSortedResult) {
  EXPECT_DOUBLE_EQ(
      TimeWeightedAverage({{3 * kSecond, 4}, {0, 2}, {4 * kSecond, 0}, {kSecond, 4}}), 3.25);
}

TEST(TimeWeightedAverageTest, WindowStartsAtFirstSampleNotAtZero) {
  const int64_t start = 1'700'000'000 * kSecond;
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{start, 1e9}, {start + kSecond, 2e9}}), 1.5e9);
}

TEST(TimeWeightedAverageTest, SamplesSharingOneInstantGiveTheirMean) {
  // The original divides by a zero window here (nan); we return the samples' mean.
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{7, 1}, {7, 2}, {7, 6}}), 3.0);
}

TEST(TimeWeightedAverageTest, TiesInsideTheWindowDoNotDependOnInputOrder) {
  const std::vector<TimedSample> forward = {{0, 0}, {kSecond, 2}, {kSecond, 8}, {2 * kSecond, 0}};
  const std::vector<TimedSample> backward = {{2 * kSecond, 0}, {kSecond, 8}, {kSecond, 2}, {0, 0}};
  // Sorted by (time, value): (0+2)/2 + 0 + (8+0)/2 = 5 over 2 s.
  EXPECT_DOUBLE_EQ(TimeWeightedAverage(forward), 2.5);
  EXPECT_DOUBLE_EQ(TimeWeightedAverage(backward), 2.5);
}

TEST(TimeWeightedAverageTest, ExtremeInstantsDoNotOverflow) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  EXPECT_DOUBLE_EQ(TimeWeightedAverage({{lo, 3}, {hi, 3}}), 3.0);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
