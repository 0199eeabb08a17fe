#include "aggregation/series_integral.h"

#include <algorithm>
#include <cstdint>
#include <random>
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

// A step series with two changes at each of 0 s and 2 s, in stored order: 0 then 3 at 0 s,
// 3 then 1 at 2 s, ending at 4 s: 3 holds over [0, 2), 1 over [2, 4).
const std::vector<double> kStepSeconds = {0, 0, 2, 2, 4};
const std::vector<double> kStepValues = {0, 3, 3, 1, 1};

TEST(SeriesIntegralTest, StepHoldsTheLastChangeAtEachInstantInStoredOrder) {
  const std::vector<int64_t> t = Times(kStepSeconds);
  const SortedSeries s(t, kStepValues, v1::SERIES_KIND_STEP);
  EXPECT_EQ(s.times().data(), t.data());  // in order: viewed, not copied
  ASSERT_EQ(s.times().size(), 5u);        // nothing merged
  const WindowIntegral w = IntegrateInsideSamples(s, Window(-10, 10));
  EXPECT_DOUBLE_EQ(w.integral, 3 * 2 + 1 * 2);
  EXPECT_DOUBLE_EQ(w.covered_seconds, 4.0);
  EXPECT_DOUBLE_EQ(s.LastValue(), 1.0);
  // The same points read as SAMPLED: (0+3)/2 = 1.5 at 0 s, 2 at 2 s, 1 at 4 s, trapezoids.
  const SortedSeries sampled(t, kStepValues, v1::SERIES_KIND_SAMPLED);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(sampled, Window(-10, 10)).integral,
                   (1.5 + 2) / 2 * 2 + (2 + 1) / 2.0 * 2);
}

TEST(SeriesIntegralTest, UnspecifiedKindReadsAsSampled) {
  const std::vector<int64_t> t = Times(kStepSeconds);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(SortedSeries(t, kStepValues, v1::SERIES_KIND_UNSPECIFIED),
                                          Window(-10, 10))
                       .integral,
                   IntegrateInsideSamples(SortedSeries(t, kStepValues), Window(-10, 10)).integral);
}

TEST(SeriesIntegralTest, UnsortedStepIsSortedByTimeOnlyKeepingStoredOrderWithinAnInstant) {
  // kStepSeconds/kStepValues shuffled across instants, each instant's changes still in order.
  const std::vector<int64_t> t = Times({2, 0, 4, 2, 0});
  const std::vector<double> v = {3, 0, 1, 1, 3};
  const SortedSeries s(t, v, v1::SERIES_KIND_STEP);
  ASSERT_EQ(s.values().size(), 5u);
  EXPECT_EQ(std::vector<double>(s.values().begin(), s.values().end()), kStepValues);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(-10, 10)).integral, 8.0);
}

TEST(SeriesIntegralTest, StepClippedToTheWindow) {
  const std::vector<int64_t> t = Times(kStepSeconds);
  const SortedSeries s(t, kStepValues, v1::SERIES_KIND_STEP);
  // [1, 3]: 3 x 1 s + 1 x 1 s.
  WindowIntegral w = IntegrateInsideSamples(s, Window(1, 3));
  EXPECT_DOUBLE_EQ(w.integral, 4.0);
  EXPECT_DOUBLE_EQ(w.covered_seconds, 2.0);
  // Starting exactly at a change: the last value of that instant holds.
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(2, 2.5)).integral, 0.5);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(-1, 1)).integral, 3.0);
  EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, Window(-1, 1)).covered_seconds, 1.0);
  // Holding the ends: before the first sample its first value (0, the state before the first
  // change) for 2 s, after the last its last value (1) for 2 s.
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(s, Window(-2, 6)), 0 * 2 + 8 + 1 * 2);
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(s, Window(5, 7)), 2.0);
}

TEST(SeriesIntegralTest, StepSingleInstant) {
  const std::vector<int64_t> one_t = Times({1});
  const std::vector<double> one_v = {5};
  const SortedSeries one(one_t, one_v, v1::SERIES_KIND_STEP);
  EXPECT_EQ(IntegrateInsideSamples(one, Window(0, 2)).covered_seconds, 0.0);
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(one, Window(0, 2)), 10.0);
  // Two changes at one instant: the first value before it, the last after it.
  const std::vector<int64_t> t = Times({1, 1});
  const std::vector<double> v = {2, 5};
  const SortedSeries pair(t, v, v1::SERIES_KIND_STEP);
  EXPECT_EQ(IntegrateInsideSamples(pair, Window(0, 2)).integral, 0.0);
  EXPECT_DOUBLE_EQ(IntegrateHoldingEnds(pair, Window(0, 2)), 2 * 1 + 5 * 1);
}

TEST(SeriesIntegralTest, StepLastSampleEndsTheCoverageWhateverItsValue) {
  // A worker of 4 cores, its disconnection at 10 s recorded as 0 cores: 40 core-seconds over
  // its 10 s (a trapezoid would say 20).
  const std::vector<int64_t> t = Times({0, 10});
  const std::vector<double> v = {4, 0};
  const WindowIntegral w =
      IntegrateInsideSamples(SortedSeries(t, v, v1::SERIES_KIND_STEP), Window(-5, 20));
  EXPECT_DOUBLE_EQ(w.integral, 40.0);
  EXPECT_DOUBLE_EQ(w.covered_seconds, 10.0);
}

// InOrder checks in blocks: a pair out of order (or, for SAMPLED, sharing an instant) is found
// wherever it lies, block edges included, as a plain pass over every pair finds it.
TEST(SeriesIntegralTest, InOrderFindsEveryPairOutOfOrder) {
  auto naive = [](const std::vector<int64_t>& t, bool step) {
    for (size_t i = 1; i < t.size(); ++i) {
      if (step ? t[i - 1] > t[i] : t[i - 1] >= t[i]) return false;
    }
    return true;
  };
  std::mt19937_64 rng(5);
  for (size_t n : {0, 1, 2, 255, 256, 257, 513, 1000}) {
    std::vector<int64_t> sorted(n);
    for (size_t i = 0; i < n; ++i) sorted[i] = kT0 + static_cast<int64_t>(i) * kS;
    for (size_t at = 1; at < n; at += at < 300 ? 1 : 97) {
      for (int64_t delta : {int64_t{0}, int64_t{-1}, int64_t{-kS}}) {
        std::vector<int64_t> t = sorted;
        t[at] = t[at - 1] + delta;  // equal or earlier than its predecessor
        for (v1::SeriesKind kind : {v1::SERIES_KIND_SAMPLED, v1::SERIES_KIND_STEP}) {
          const bool step = kind == v1::SERIES_KIND_STEP;
          EXPECT_EQ(SortedSeries::InOrder(t, kind), naive(t, step)) << n << " " << at;
        }
      }
    }
    EXPECT_TRUE(SortedSeries::InOrder(sorted, v1::SERIES_KIND_SAMPLED));
    std::shuffle(sorted.begin(), sorted.end(), rng);
    EXPECT_EQ(SortedSeries::InOrder(sorted, v1::SERIES_KIND_STEP), naive(sorted, true));
  }
}

// The trapezoid against a plain long double sum of its definition, for ordinary series (the
// time steps converted from signed differences) and one spanning more than 2^63 ns (unsigned).
TEST(SeriesIntegralTest, TrapezoidMatchesItsDefinitionForAnySpan) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> value(0, 1e9);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> t;
    std::vector<double> v;
    int64_t at = kT0;
    for (int i = 0; i < 1000 + trial; ++i) {
      at += 1 + static_cast<int64_t>(rng() % (10 * kS));
      t.push_back(at);
      v.push_back(value(rng));
    }
    long double reference = 0;
    for (size_t k = 0; k + 1 < t.size(); ++k) {
      reference += (static_cast<long double>(v[k]) + v[k + 1]) / 2 *
                   (static_cast<long double>(t[k + 1] - t[k]) * 1e-9L);
    }
    const SortedSeries s(t, v);
    EXPECT_DOUBLE_EQ(IntegrateInsideSamples(s, {t.front(), t.back()}).integral,
                     static_cast<double>(reference));
  }
  const std::vector<int64_t> huge = {-6'000'000'000'000'000'000, 0, 6'000'000'000'000'000'000};
  const std::vector<double> v = {1, 3, 5};
  const SortedSeries s(huge, v);
  EXPECT_EQ(IntegrateInsideSamples(s, {huge.front(), huge.back()}).integral, 3.6e10);
}

// Time steps kept for the next column of the same times give the same integrals as computing
// them each time, whatever window comes next (a different one computes them again).
TEST(SeriesIntegralTest, SharedTimeStepsGiveTheSameIntegrals) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> value(0, 1e9);
  std::vector<int64_t> t;
  std::vector<double> memory, cores;
  for (int i = 0; i < 500; ++i) {
    t.push_back(kT0 + i * kS + static_cast<int64_t>(rng() % 1000));
    memory.push_back(value(rng));
    cores.push_back(static_cast<double>(1 + rng() % 8));
  }
  const SortedSeries a(t, memory);
  const SortedSeries b(t, cores);
  TimeSteps steps;
  for (const TimeWindow& window :
       {Window(-1, 600), Window(-1, 600), Window(10.5, 300), Window(10.5, 300), Window(0, 499),
        Window(-1, 600), Window(200, 200.5)}) {
    for (const SortedSeries* series : {&a, &b}) {
      const WindowIntegral plain = IntegrateInsideSamples(*series, window);
      const WindowIntegral shared = IntegrateInsideSamples(*series, window, &steps);
      EXPECT_EQ(shared.integral, plain.integral);
      EXPECT_EQ(shared.covered_seconds, plain.covered_seconds);
    }
  }
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
