#include "stats/log_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace stats {
namespace {

// The exact "lower" sample quantile the histogram's bound is stated against.
double LowerQuantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(std::floor(q * static_cast<double>(values.size() - 1)))];
}

void ExpectWithinRelativeError(const std::vector<double>& values, double accuracy) {
  LogHistogram histogram(LogHistogramOptions{accuracy});
  for (double v : values) histogram.Add(v);
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    const double exact = LowerQuantile(values, q);
    const double approx = histogram.Quantile(q);
    EXPECT_LE(std::abs(approx - exact), accuracy * std::abs(exact) * (1 + 1e-12))
        << "q=" << q << " exact=" << exact << " approx=" << approx;
  }
}

TEST(LogHistogramTest, LogNormalWithinOnePercent) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(0.0, 2.0);
  std::vector<double> values(100000);
  for (double& v : values) v = dist(rng);
  ExpectWithinRelativeError(values, 0.01);
}

TEST(LogHistogramTest, ParetoWithinOnePercentAndTighterAccuracy) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> values(100000);
  // Pareto(alpha = 1.2, x_m = 1e-3): heavy tail over many decades.
  for (double& v : values) v = 1e-3 / std::pow(1.0 - uniform(rng), 1.0 / 1.2);
  ExpectWithinRelativeError(values, 0.01);
  ExpectWithinRelativeError(values, 0.001);
}

TEST(LogHistogramTest, SignedValuesAndZeros) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> dist(0.0, 1e6);  // memory deltas: either sign
  std::vector<double> values(20000);
  for (double& v : values) v = dist(rng);
  for (int i = 0; i < 500; ++i) values.push_back(0.0);
  ExpectWithinRelativeError(values, 0.01);
}

TEST(LogHistogramTest, ExactCountSumMinMax) {
  LogHistogram h;
  EXPECT_EQ(h.count(), 0);
  EXPECT_EQ(h.Quantile(0.5), 0.0);
  EXPECT_EQ(h.min(), 0.0);
  for (double v : {3.0, -2.0, 0.0, 10.5}) h.Add(v);
  EXPECT_EQ(h.count(), 4);
  EXPECT_DOUBLE_EQ(h.sum(), 11.5);
  EXPECT_DOUBLE_EQ(h.mean(), 2.875);
  EXPECT_EQ(h.min(), -2.0);
  EXPECT_EQ(h.max(), 10.5);
  EXPECT_EQ(h.zero_count(), 1);
  EXPECT_EQ(h.Quantile(0), -2.0);
  EXPECT_EQ(h.Quantile(1), 10.5);
}

TEST(LogHistogramTest, NonFiniteValuesAreCountedApart) {
  LogHistogram h;
  h.Add(std::nan(""));
  h.Add(std::numeric_limits<double>::infinity());
  h.Add(1.0);
  EXPECT_EQ(h.count(), 1);
  EXPECT_EQ(h.nonfinite_count(), 2);
  EXPECT_EQ(h.sum(), 1.0);
  EXPECT_FALSE(std::isnan(h.Quantile(0.5)));
}

TEST(LogHistogramTest, MergeEqualsAddingEverything) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(3.0, 1.5);
  LogHistogram whole, first, second;
  for (int i = 0; i < 10000; ++i) {
    // Integers keep the sum exact whatever the order of addition.
    const double v = std::round(dist(rng)) * (i % 7 == 0 ? -1 : 1);
    whole.Add(v);
    (i < 4000 ? first : second).Add(v);
  }
  LogHistogram merged = second;
  ASSERT_TRUE(merged.Merge(first).ok());
  EXPECT_TRUE(merged == whole);
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(merged.Quantile(q), whole.Quantile(q));

  LogHistogram empty;
  ASSERT_TRUE(empty.Merge(whole).ok());
  EXPECT_TRUE(empty == whole);
  ASSERT_TRUE(whole.Merge(LogHistogram()).ok());
  EXPECT_TRUE(empty == whole);
}

TEST(LogHistogramTest, MergeOfDifferentAccuraciesIsRejected) {
  LogHistogram coarse(LogHistogramOptions{0.02});
  LogHistogram fine;
  fine.Add(1);
  const absl::Status status = coarse.Merge(fine);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("relative_accuracy 0.01"), absl::string_view::npos);
  EXPECT_EQ(coarse.count(), 0);
}

TEST(LogHistogramTest, InvalidAccuracyFallsBackToDefault) {
  EXPECT_EQ(LogHistogram(LogHistogramOptions{0.0}).relative_accuracy(), 0.01);
  EXPECT_EQ(LogHistogram(LogHistogramOptions{std::nan("")}).relative_accuracy(), 0.01);
  EXPECT_EQ(LogHistogram(LogHistogramOptions{0.005}).relative_accuracy(), 0.005);
}

}  // namespace
}  // namespace stats
}  // namespace roastcoffea
