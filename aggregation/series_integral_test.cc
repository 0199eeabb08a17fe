#include "aggregation/series_integral.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kT0 = 1'765'000'000 * kS;

TimeWindow Window(double from_s, double to_s) {
  return {kT0 + static_cast<int64_t>(from_s * kS), kT0 + static_cast<int64_t>(to_s * kS)};
}

std::vector<int64_t> Times(std::vector<double> seconds) {
  std::vector<int64_t> t;
  for (double s : seconds) t.push_back(kT0 + static_cast<int64_t>(s * kS));
  return t;
}

TEST(SeriesIntegralTest, WholeSeriesInsideWindow) {
  const std::vector<int64_t> t = Times({0, 1, 3, 4});
  const std::vector<double> v = {2, 4, 4, 0};
  const SortedSeries s(t, v);
  const WindowIntegral w = IntegrateInsideSamples(s, Window(-10, 10));
  EXPECT_DOUBLE_EQ(w.integral, 13.0);  // 3 + 8 + 2: the reference's 3.25 average x 4 s
  EXPECT_DOUBLE_EQ(w.covered_seconds, 4.0);
}

TEST(SeriesIntegralTest, CutAtWindowEdgesByInterpolation) {
  const std::vector<int64_t> t = Times({0, 2});
  const std::vector<double> v = {0, 4};  // v(t) = 2t
  const SortedSeries s(t, v);
  // [0.5, 1.5]: integral of 2t = 1.5^2 - 0.5^2 = 2.
  const WindowIntegral inside = IntegrateInsideSamples(s, Window(0.5, 1.5));
  EXPECT_DOUBLE_EQ(inside.integral, 2.0);
  EXPECT_DOUBLE_EQ(inside.covered_seconds, 1.0);
  // [1, 5]: samples end at 2 s; integral 4 - 1 = 3 over 1 s covered.
  const WindowIntegral right = IntegrateInsideSamples(s, Window(1, 5));
  EXPECT_DOUBLE_EQ(right.integral, 3.0);
  EXPECT_DOUBLE_EQ(right.covered_seconds, 1.0);
  // Holding the last value (4) for the 3 s after the samples adds 12.
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(s, Window(1, 5)), 15.0);
  // Entirely outside: nothing inside; held: 0 x 1 s before.
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(-2, -1)).integral, 0.0);
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(s, Window(3, 4)), 4.0);
}

TEST(SeriesIntegralTest, SingleAndNoSamples) {
  const std::vector<int64_t> t = Times({1});
  const std::vector<double> v = {5};
  const SortedSeries one(t, v);
  EXPECT_EQ(IntegrateInsideSamples(one, Window(0, 2)).covered_seconds, 0.0);
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(one, Window(0, 2)), 10.0);
  const SortedSeries none({}, {});
  EXPECT_EQ(IntegrateHoldingEnds(none, Window(0, 2)), 0.0);
}

TEST(SeriesIntegralTest, UnsortedAndDuplicateTimestampsAreSortedAndAveraged) {
  const std::vector<int64_t> t = Times({2, 0, 2});
  const std::vector<double> v = {6, 0, 2};  // at 2 s: mean(6, 2) = 4
  const SortedSeries s(t, v);
  ASSERT_EQ(s.times().size(), 2u);
  EXPECT_DOUBLE_EQ(s.values()[1], 4.0);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(0, 2)).integral, 4.0);
  const std::vector<int64_t> t2 = Times({2, 2, 0});
  const std::vector<double> v2 = {2, 6, 0};
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(SortedSeries(t2, v2), Window(0, 2)).integral, 4.0);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
