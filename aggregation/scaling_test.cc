#include "aggregation/scaling.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(SummarizeReplicatesTest, MeanAndSampleStandardDeviation) {
  // python3: statistics.mean([2.0, 2.2, 2.4]) = 2.2, statistics.stdev(...) = 0.2
  const ReplicateSummary summary = SummarizeReplicates({2.0, 2.2, 2.4});
  EXPECT_EQ(summary.n, 3u);
  EXPECT_NEAR(summary.mean, 2.2, 1e-12);
  ASSERT_TRUE(summary.stddev.has_value());
  EXPECT_NEAR(*summary.stddev, 0.2, 1e-12);
}

TEST(SummarizeReplicatesTest, OneValueHasNoSpreadAndNaNIsLeftOut) {
  const ReplicateSummary summary = SummarizeReplicates({5.0, std::nan("")});
  EXPECT_EQ(summary.n, 1u);
  EXPECT_DOUBLE_EQ(summary.mean, 5.0);
  EXPECT_FALSE(summary.stddev.has_value());
  EXPECT_EQ(SummarizeReplicates({}).n, 0u);
}

TEST(NoiseTest, TwoCombinedStandardErrors) {
  // a: 10 +- 1 (n=4), b: 11 +- 2 (n=4): noise = 2 sqrt(1/4 + 4/4) = 2.236
  const ReplicateSummary a{4, 10.0, 1.0};
  const ReplicateSummary b{4, 11.0, 2.0};
  ASSERT_TRUE(DifferenceNoise(a, b).has_value());
  EXPECT_NEAR(*DifferenceNoise(a, b), 2.0 * std::sqrt(1.25), 1e-12);
  EXPECT_FALSE(BeyondNoise(a, b));  // |11 - 10| = 1 < 2.236
  const ReplicateSummary c{4, 13.0, 2.0};
  EXPECT_TRUE(BeyondNoise(a, c));  // 3 > 2.236
}

TEST(NoiseTest, SingleRunBorrowsTheOtherSidesSpreadAndUnknownWithoutAny) {
  // a: 10 +- 1 (n=4), b: one run of 11: noise = 2 sqrt(1/4 + 1/1) = 2.236
  const ReplicateSummary a{4, 10.0, 1.0};
  const ReplicateSummary b{1, 11.0, std::nullopt};
  EXPECT_NEAR(*DifferenceNoise(a, b), 2.0 * std::sqrt(1.25), 1e-12);
  EXPECT_FALSE(BeyondNoise(a, b));
  const ReplicateSummary single{1, 10.0, std::nullopt};
  EXPECT_FALSE(DifferenceNoise(single, b).has_value());
  EXPECT_TRUE(BeyondNoise(single, b));  // unknown noise: the threshold alone decides
}

TEST(SpeedupTest, RatioOfMeansWithPropagatedError) {
  // 10 +- 1 s (n=4) -> 5 +- 0.5 s (n=4): 2.0, relative error sqrt(0.01/4 + 0.01/4) = 0.0707107,
  // so 2.0 +- 0.1414214 (python3: 2 * math.sqrt(0.01 / 4 + 0.01 / 4) = 0.1414213562373095).
  const std::optional<Ratio> speedup = Speedup({4, 10.0, 1.0}, {4, 5.0, 0.5});
  ASSERT_TRUE(speedup.has_value());
  EXPECT_DOUBLE_EQ(speedup->value, 2.0);
  EXPECT_NEAR(*speedup->standard_error, 0.1414213562373095, 1e-12);
  EXPECT_FALSE(Speedup({1, 10.0, std::nullopt}, {1, 5.0, std::nullopt})->standard_error);
  EXPECT_FALSE(Speedup({0, 0.0, std::nullopt}, {1, 5.0, std::nullopt}).has_value());
}

std::vector<ScalingPoint> Points() {
  return {{"r1", 1, 10.0e-6, "w"},
          {"r2", 2, 6.2e-6, "w"},
          {"r4a", 4, 3.9e-6, "w"},
          {"r4b", 4, 4.1e-6, "w"},
          {"r8", 8, 3.1e-6, "w"}};
}

TEST(MannWhitneyTest, AgreesWithABruteForcePairCount) {
  // python3: U = sum over pairs of [a > b] + 0.5 [a == b] = 15, sigma = sqrt(10 * 10 * 21 / 12),
  // z = (15 - 50) / sigma = -2.6458, p = erfc(|z| / sqrt(2)) = 0.008151.
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<double> b = {5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5};
  const std::optional<RankTest> test = MannWhitney(a, b);
  ASSERT_TRUE(test.has_value());
  EXPECT_DOUBLE_EQ(test->u, 15.0);
  EXPECT_NEAR(test->z, -2.6457513, 1e-6);
  EXPECT_NEAR(test->p_two_sided, 0.0081509716, 1e-9);
  EXPECT_EQ(test->n_a, 10u);
  // Swapped samples: the same p, the opposite sign.
  EXPECT_NEAR(MannWhitney(b, a)->z, 2.6457513, 1e-6);
}

TEST(MannWhitneyTest, TiesGetMidRanksAndTheTieCorrection) {
  // python3: U = 18; the value counts {1: 2, 2: 4, 3: 4, 4: 4, 5: 2} give the tie term
  // T = sum(t^3 - t) = 192; var = 64 / 12 (17 - T / (16 * 15)); z = -1.50616, p = 0.132026.
  const std::optional<RankTest> test =
      MannWhitney({1, 1, 2, 2, 3, 3, 4, 4}, {2, 2, 3, 3, 4, 4, 5, 5});
  ASSERT_TRUE(test.has_value());
  EXPECT_DOUBLE_EQ(test->u, 18.0);
  EXPECT_NEAR(test->z, -1.5061602, 1e-6);
  EXPECT_NEAR(test->p_two_sided, 0.13202605, 1e-7);
}

TEST(MannWhitneyTest, TooFewValuesOrAllEqualHaveNoTest) {
  EXPECT_FALSE(MannWhitney({1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 8}).has_value());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(MannWhitney({1, 2, 3, 4, 5, 6, 7, nan}, {1, 2, 3, 4, 5, 6, 7, 8}).has_value());
  EXPECT_FALSE(MannWhitney(std::vector<double>(8, 2.0), std::vector<double>(9, 2.0)).has_value());
}

TEST(FitAmdahlTest, AgreesWithAnIndependentComputation) {
  // Computed with python3 from the closed-form least squares of y = a + b / n over the five
  // points above: a = 2.073076923076922e-06, b = 7.969230769230772e-06,
  // s = a / (a + b) = 0.20643431635388723, t1 = 1.0042307692307695e-05,
  // R^2 = 0.9983381122940004, speedup at 16 cores 1 / (s + (1 - s) / 16) = 3.9057591623036676.
  const absl::StatusOr<AmdahlFit> fit = FitAmdahl(Points());
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->serial_fraction, 0.20643431635388723, 1e-12);
  EXPECT_NEAR(fit->single_core_seconds_per_event, 1.0042307692307695e-05, 1e-18);
  EXPECT_NEAR(fit->r_squared, 0.9983381122940004, 1e-12);
  EXPECT_NEAR(fit->predicted_speedup_at_double, 3.9057591623036676, 1e-12);
  EXPECT_EQ(fit->points_used, 5u);
  EXPECT_EQ(fit->core_counts, 4u);
  EXPECT_EQ(fit->max_cores, 8.0);
  EXPECT_TRUE(fit->excluded.empty());
}

TEST(FitAmdahlTest, ExactAmdahlDataGivesItsSerialFractionAndRSquaredOne) {
  std::vector<ScalingPoint> points;
  for (double n : {1.0, 2.0, 3.0}) points.push_back({"r", n, 1e-6 * (0.1 + 0.9 / n), "w"});
  const absl::StatusOr<AmdahlFit> fit = FitAmdahl(points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->serial_fraction, 0.1, 1e-9);
  EXPECT_NEAR(fit->r_squared, 1.0, 1e-9);
  EXPECT_NEAR(AmdahlSpeedup(0.1, 2), 1.0 / 0.55, 1e-12);
}

TEST(FitAmdahlTest, RefusesTwoCoreCounts) {
  const absl::StatusOr<AmdahlFit> fit =
      FitAmdahl({{"a", 1, 2e-6, "w"}, {"b", 2, 1.2e-6, "w"}, {"c", 2, 1.1e-6, "w"}});
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(fit.status().message(), "at least 3 distinct core counts"))
      << fit.status();
  EXPECT_TRUE(absl::StrContains(fit.status().message(), "have 2 (1, 2)")) << fit.status();
}

// The reliability study's D19: cores +Inf (a damaged measurement) gave a fit of "-nan".
TEST(FitAmdahlTest, NonFiniteCoresOrTimesAreRefusedNamingTheRun) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [cores, seconds] : std::vector<std::pair<double, double>>{
           {inf, 1e-6}, {std::nan(""), 1e-6}, {4, inf}, {4, std::nan("")}, {-4, 1e-6}}) {
    const absl::StatusOr<AmdahlFit> fit =
        FitAmdahl({{"a", 1, 2e-6, "w"}, {"b", 2, 1.2e-6, "w"}, {"bad", cores, seconds, "w"}});
    EXPECT_EQ(fit.status().code(), absl::StatusCode::kInvalidArgument) << cores << " " << seconds;
    EXPECT_TRUE(absl::StrContains(fit.status().message(), "run bad has no positive cores"))
        << fit.status();
  }
}

TEST(FitAmdahlTest, RefusesMixedWorkloads) {
  std::vector<ScalingPoint> points = Points();
  points[2].workload = "other";
  const absl::StatusOr<AmdahlFit> fit = FitAmdahl(points);
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(fit.status().message(), "runs r1 and r4a measure different"))
      << fit.status();
}

TEST(FitAmdahlTest, LeavesOutOversubscribedPointsAndSaysSo) {
  std::vector<ScalingPoint> points = Points();
  points.push_back({"r16", 16, 9e-6, "w", /*oversubscribed=*/true});
  const absl::StatusOr<AmdahlFit> fit = FitAmdahl(points);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->serial_fraction, 0.20643431635388723, 1e-12);  // as without r16
  EXPECT_EQ(fit->excluded, std::vector<std::string>{"r16"});
  // Without it only 2 core counts would remain: refused, naming the left-out run.
  const absl::StatusOr<AmdahlFit> refused =
      FitAmdahl({{"a", 1, 2e-6, "w"}, {"b", 2, 1.2e-6, "w"}, {"c", 4, 3e-6, "w", true}});
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "oversubscribed c"))
      << refused.status();
}

TEST(FitAmdahlTest, SuperlinearGivesSerialFractionZeroAndGrowingTimeIsRefused) {
  const absl::StatusOr<AmdahlFit> superlinear =
      FitAmdahl({{"a", 1, 1.0, "w"}, {"b", 2, 0.45, "w"}, {"c", 4, 0.2, "w"}});
  ASSERT_TRUE(superlinear.ok()) << superlinear.status();
  EXPECT_EQ(superlinear->serial_fraction, 0.0);
  EXPECT_LE(superlinear->r_squared, 1.0);
  const absl::StatusOr<AmdahlFit> growing =
      FitAmdahl({{"a", 1, 1.0, "w"}, {"b", 2, 1.5, "w"}, {"c", 4, 2.0, "w"}});
  EXPECT_EQ(growing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FitAmdahl({{"a", 0, 1.0, "w"}}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace roastcoffea
