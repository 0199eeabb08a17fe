#include "aggregation/time_weighted_average.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

double Average(const std::vector<std::pair<int64_t, double>>& samples,
               v1::SeriesKind kind = v1::SERIES_KIND_SAMPLED) {
  std::vector<int64_t> times;
  std::vector<double> values;
  for (const auto& [t, v] : samples) {
    times.push_back(t);
    values.push_back(v);
  }
  return TimeWeightedAverage(SortedSeries(times, values, kind));
}

// docs/reference.md §4 trapezoid golden cases.
TEST(TimeWeightedAverageTest, RisingThenFlatCountsAverageToThreeAndAHalf) {
  // (2+4)/2*1 + (4+4)/2*1 = 7 over 2 s.
  EXPECT_DOUBLE_EQ(Average({{0, 2}, {kSecond, 4}, {2 * kSecond, 4}}), 3.5);
}

TEST(TimeWeightedAverageTest, ConstantSeriesAveragesToItsValue) {
  EXPECT_DOUBLE_EQ(Average({{0, 4}, {kSecond, 4}, {2 * kSecond, 4}}), 4.0);
}

TEST(TimeWeightedAverageTest, SingleSampleIsItsValue) {
  EXPECT_DOUBLE_EQ(Average({{123, 5}}), 5.0);
  EXPECT_DOUBLE_EQ(Average({{123, 5}}, v1::SERIES_KIND_STEP), 5.0);
}

TEST(TimeWeightedAverageTest, NoSamplesIsZero) {
  EXPECT_DOUBLE_EQ(Average({}), 0.0);
  EXPECT_DOUBLE_EQ(Average({}, v1::SERIES_KIND_STEP), 0.0);
}

TEST(TimeWeightedAverageTest, MicrosecondWindowIsResolved) {
  EXPECT_DOUBLE_EQ(Average({{0, 5}, {1000, 7}}), 6.0);
}

TEST(TimeWeightedAverageTest, UnevenSpacing) {
  // (2+4)/2*1 + (4+4)/2*2 + (4+0)/2*1 = 3 + 8 + 2 = 13 over 4 s.
  EXPECT_DOUBLE_EQ(Average({{0, 2}, {kSecond, 4}, {3 * kSecond, 4}, {4 * kSecond, 0}}), 3.25);
}

TEST(TimeWeightedAverageTest, UnsortedInputGivesTheSortedResult) {
  EXPECT_DOUBLE_EQ(Average({{3 * kSecond, 4}, {0, 2}, {4 * kSecond, 0}, {kSecond, 4}}), 3.25);
}

TEST(TimeWeightedAverageTest, WindowStartsAtFirstSampleNotAtZero) {
  const int64_t start = 1'700'000'000 * kSecond;
  EXPECT_DOUBLE_EQ(Average({{start, 1e9}, {start + kSecond, 2e9}}), 1.5e9);
}

TEST(TimeWeightedAverageTest, SamplesSharingOneInstantGiveTheirMean) {
  // The original divides by a zero window here (nan); we return the samples' mean.
  EXPECT_DOUBLE_EQ(Average({{7, 1}, {7, 2}, {7, 6}}), 3.0);
}

TEST(TimeWeightedAverageTest, StepChangesAtOneInstantGiveTheLastOne) {
  // Successive changes at one instant: the last one is the state there.
  EXPECT_DOUBLE_EQ(Average({{7, 1}, {7, 2}, {7, 6}}, v1::SERIES_KIND_STEP), 6.0);
}

TEST(TimeWeightedAverageTest, SampledTiesInsideTheWindowAreAveragedWhateverTheOrder) {
  const std::vector<std::pair<int64_t, double>> forward = {
      {0, 0}, {kSecond, 2}, {kSecond, 8}, {2 * kSecond, 0}};
  const std::vector<std::pair<int64_t, double>> backward = {
      {2 * kSecond, 0}, {kSecond, 8}, {kSecond, 2}, {0, 0}};
  // At 1 s: mean(2, 8) = 5; (0+5)/2 + (5+0)/2 = 5 over 2 s.
  EXPECT_DOUBLE_EQ(Average(forward), 2.5);
  EXPECT_DOUBLE_EQ(Average(backward), 2.5);
}

// A worker count 0 -> 1 at 0 s, 1 -> 2 at 1 s, 2 -> 1 at 3 s, ending at 4 s, as TaskVine's
// logs give it: before and after samples at each change.
TEST(TimeWeightedAverageTest, StepHoldsEachValueUntilTheNextChange) {
  const std::vector<std::pair<int64_t, double>> count = {
      {0, 0},           {0, 1},           {kSecond, 1},    {kSecond, 2},
      {3 * kSecond, 2}, {3 * kSecond, 1}, {4 * kSecond, 1}};
  // 1 x 1 s + 2 x 2 s + 1 x 1 s = 6 worker-seconds over 4 s.
  EXPECT_DOUBLE_EQ(Average(count, v1::SERIES_KIND_STEP), 1.5);
  // Read as SAMPLED, the pairs are averaged (0.5, 1.5, 1.5 at 0, 1, 3 s; 1 at 4 s):
  // (0.5+1.5)/2 x 1 + 1.5 x 2 + (1.5+1)/2 x 1 = 1 + 3 + 1.25 over 4 s, the old wrong figure.
  EXPECT_DOUBLE_EQ(Average(count), (1.0 + 3.0 + 1.25) / 4);
}

TEST(TimeWeightedAverageTest, ExtremeInstantsDoNotOverflow) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  EXPECT_DOUBLE_EQ(Average({{lo, 3}, {hi, 3}}), 3.0);
  EXPECT_DOUBLE_EQ(Average({{lo, 3}, {hi, 3}}, v1::SERIES_KIND_STEP), 3.0);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
