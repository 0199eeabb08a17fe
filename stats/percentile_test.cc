#include "stats/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "stats/percentile_rank.h"
#include "stats/percentile_reference.h"

namespace roastcoffea {
namespace stats {
namespace {

TEST(PercentileTest, HandValuesOfNumpyLinearDefinition) {
  // numpy.percentile([1, 2, 3, 4], [50, 90, 95, 99]) = [2.5, 3.7, 3.85, 3.97].
  std::vector<double> values = {4, 1, 3, 2};
  const auto p = ReferencePercentiles(absl::MakeSpan(values), {0.5, 0.9, 0.95, 0.99});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ((*p)[0], 2.5);
  EXPECT_DOUBLE_EQ((*p)[1], 3.7);
  EXPECT_DOUBLE_EQ((*p)[2], 3.85);
  EXPECT_DOUBLE_EQ((*p)[3], 3.97);
}

TEST(PercentileTest, QuantilesInAnyOrderAndExtremes) {
  // numpy.percentile([10, 20, 30, 40, 50], [99, 0, 100, 25]) = [49.6, 10, 50, 20].
  std::vector<double> values = {50, 10, 40, 20, 30};
  const auto p = ReferencePercentiles(absl::MakeSpan(values), {0.99, 0.0, 1.0, 0.25});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ((*p)[0], 49.6);
  EXPECT_DOUBLE_EQ((*p)[1], 10);
  EXPECT_DOUBLE_EQ((*p)[2], 50);
  EXPECT_DOUBLE_EQ((*p)[3], 20);
}

TEST(PercentileTest, SingleValueAndDuplicates) {
  std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ((*ReferencePercentiles(absl::MakeSpan(one), {0.5, 0.99}))[1], 7);
  std::vector<double> same = {2, 2, 2, 5};
  // h = 0.9 * 3 = 2.7: 2 + 0.7 * 3 = 4.1.
  EXPECT_DOUBLE_EQ((*ReferencePercentiles(absl::MakeSpan(same), {0.9}))[0], 4.1);
}

TEST(PercentileTest, RankOfQuantileIsTheOneDefinition) {
  // n = 4: h = q * 3.
  EXPECT_EQ(RankOfQuantile(0.5, 4).lower, 1u);
  EXPECT_DOUBLE_EQ(RankOfQuantile(0.5, 4).fraction, 0.5);
  EXPECT_EQ(RankOfQuantile(0.5, 4).upper(), 2u);
  EXPECT_EQ(RankOfQuantile(1.0, 4).lower, 3u);
  EXPECT_EQ(RankOfQuantile(1.0, 4).fraction, 0.0);  // the last rank reads one value
  EXPECT_EQ(RankOfQuantile(1.0, 4).upper(), 3u);
  EXPECT_EQ(RankOfQuantile(0.0, 1).upper(), 0u);
  EXPECT_DOUBLE_EQ(Interpolate(RankOfQuantile(0.5, 4), 2, 3), 2.5);
  // No interpolation keeps the value's bits (a -0.0 stays -0.0).
  EXPECT_TRUE(std::signbit(Interpolate(RankOfQuantile(1.0, 4), -0.0, 5)));
}

TEST(PercentileTest, BadInputNamesTheProblem) {
  std::vector<double> empty;
  EXPECT_EQ(ReferencePercentiles(absl::MakeSpan(empty), {0.5}).status().message(),
            "Percentiles: values is empty");
  std::vector<double> with_nan = {1, std::nan("")};
  EXPECT_EQ(ReferencePercentiles(absl::MakeSpan(with_nan), {0.5}).status().message(),
            "Percentiles: values[1] is nan; expected finite");
  std::vector<double> ok = {1, 2};
  EXPECT_EQ(ReferencePercentiles(absl::MakeSpan(ok), {1.5}).status().message(),
            "Percentiles: quantiles[0] is 1.5; expected 0 <= q <= 1");
  EXPECT_FALSE(ReferencePercentiles(absl::MakeSpan(ok), {std::nan("")}).ok());
}

// PercentilesOfConst (and PercentilesOfFinite) give exactly the reference's doubles (bit for bit)
// and leaves its input as is. `bitwise` false: equal as doubles only (with zeros of both signs
// either zero is a right answer for their ranks).
void ExpectSameAsPercentiles(const std::vector<double>& values, const char* what,
                             bool bitwise = true) {
  const std::vector<double> quantiles = {0.5, 0.9, 0.95, 0.99, 0.0, 1.0, 0.25, 0.999};
  std::vector<double> scratch = values;
  const auto expected = ReferencePercentiles(absl::MakeSpan(scratch), quantiles);
  const auto got = PercentilesOfConst(values, quantiles);
  ASSERT_TRUE(expected.ok() && got.ok()) << what;
  // PercentilesOfFinite, given the range (min and max as a caller's pass finds them).
  double min = values[0];
  double max = values[0];
  for (double v : values) {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  const std::vector<double> finite = PercentilesOfFinite(values, min, max, quantiles);
  for (size_t i = 0; i < quantiles.size(); ++i) {
    if (!bitwise) {
      EXPECT_EQ((*expected)[i], (*got)[i]) << what << " q=" << quantiles[i];
      EXPECT_EQ((*expected)[i], finite[i]) << what << " (of finite) q=" << quantiles[i];
      continue;
    }
    EXPECT_EQ(std::memcmp(&(*expected)[i], &(*got)[i], sizeof(double)), 0)
        << what << " q=" << quantiles[i] << ": " << (*expected)[i] << " vs " << (*got)[i];
    EXPECT_EQ(std::memcmp(&(*expected)[i], &finite[i], sizeof(double)), 0)
        << what << " (of finite) q=" << quantiles[i] << ": " << (*expected)[i] << " vs "
        << finite[i];
  }
}

TEST(PercentilesOfConstTest, SameDoublesAsReferenceOnManyShapes) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> lognormal(0.0, 0.7);
  std::normal_distribution<double> normal(0.0, 1e8);
  std::uniform_int_distribution<int> small(0, 3);
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{10}, size_t{1000}, size_t{100'003}}) {
    std::vector<double> skewed, signed_values, few_values, equal(n, 100000.0), wide, integers;
    for (size_t i = 0; i < n; ++i) {
      skewed.push_back(lognormal(rng));
      signed_values.push_back(normal(rng));
      few_values.push_back(small(rng) * 1.5);
      wide.push_back(i % 2 == 0 ? 1e-300 * lognormal(rng) : 1e300 * lognormal(rng));
      integers.push_back(static_cast<double>(small(rng) - 1) * 1e6);
    }
    ExpectSameAsPercentiles(skewed, "lognormal");
    ExpectSameAsPercentiles(integers, "integers");
    ExpectSameAsPercentiles(signed_values, "signed");
    ExpectSameAsPercentiles(few_values, "four distinct values");
    ExpectSameAsPercentiles(equal, "all equal");
    ExpectSameAsPercentiles(wide, "1e-300 and 1e300");
  }
  // Values crowded into one bucket of a wide range (one outlier stretches the range).
  std::vector<double> crowded(50'000, 1.0);
  for (size_t i = 0; i < crowded.size(); ++i) crowded[i] += 1e-9 * static_cast<double>(i % 977);
  crowded.push_back(1e12);
  ExpectSameAsPercentiles(crowded, "crowded");
  ExpectSameAsPercentiles({-0.0, -0.0, -0.0}, "negative zeros");
  ExpectSameAsPercentiles({-2.0, -0.5, 0.0, 3.0}, "negatives and zero");
  // Zeros of both signs at the ends of the range (std::min keeps the first of equal zeros).
  ExpectSameAsPercentiles({0.0, -0.0, 1.0}, "zero then negative zero, then one",
                          /*bitwise=*/false);
  ExpectSameAsPercentiles({-1.0, 0.0, -0.0}, "minus one, then both zeros",
                          /*bitwise=*/false);
  ExpectSameAsPercentiles({0.0, -0.0, 0.0, -0.0}, "only zeros", /*bitwise=*/false);
}

TEST(PercentilesOfConstTest, LeavesValuesAndNamesBadInput) {
  const std::vector<double> values = {3, 1, 2};
  EXPECT_DOUBLE_EQ((*PercentilesOfConst(values, {0.5}))[0], 2);
  EXPECT_EQ(values, (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(PercentilesOfConst({}, {0.5}).status().message(), "Percentiles: values is empty");
  EXPECT_EQ(PercentilesOfConst({1, std::nan("")}, {0.5}).status().message(),
            "Percentiles: values[1] is nan; expected finite");
  EXPECT_EQ(PercentilesOfConst({1, 2}, {1.5}).status().message(),
            "Percentiles: quantiles[0] is 1.5; expected 0 <= q <= 1");
}

}  // namespace
}  // namespace stats
}  // namespace roastcoffea
