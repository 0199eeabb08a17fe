#include "stats/percentile.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace stats {
namespace {

TEST(PercentileTest, HandValuesOfNumpyLinearDefinition) {
  // numpy.percentile([1, 2, 3, 4], [50, 90, 95, 99]) = [2.5, 3.7, 3.85, 3.97].
  std::vector<double> values = {4, 1, 3, 2};
  const auto p = Percentiles(absl::MakeSpan(values), {0.5, 0.9, 0.95, 0.99});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ((*p)[0], 2.5);
  EXPECT_DOUBLE_EQ((*p)[1], 3.7);
  EXPECT_DOUBLE_EQ((*p)[2], 3.85);
  EXPECT_DOUBLE_EQ((*p)[3], 3.97);
}

TEST(PercentileTest, QuantilesInAnyOrderAndExtremes) {
  // numpy.percentile([10, 20, 30, 40, 50], [99, 0, 100, 25]) = [49.6, 10, 50, 20].
  std::vector<double> values = {50, 10, 40, 20, 30};
  const auto p = Percentiles(absl::MakeSpan(values), {0.99, 0.0, 1.0, 0.25});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ((*p)[0], 49.6);
  EXPECT_DOUBLE_EQ((*p)[1], 10);
  EXPECT_DOUBLE_EQ((*p)[2], 50);
  EXPECT_DOUBLE_EQ((*p)[3], 20);
}

TEST(PercentileTest, SingleValueAndDuplicates) {
  std::vector<double> one = {7};
  EXPECT_DOUBLE_EQ((*Percentiles(absl::MakeSpan(one), {0.5, 0.99}))[1], 7);
  std::vector<double> same = {2, 2, 2, 5};
  // h = 0.9 * 3 = 2.7: 2 + 0.7 * 3 = 4.1.
  EXPECT_DOUBLE_EQ((*Percentiles(absl::MakeSpan(same), {0.9}))[0], 4.1);
}

TEST(PercentileTest, OfSortedMatches) {
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(PercentileOfSorted(sorted, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(sorted, 1.0), 4);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(sorted, 0.0), 1);
}

TEST(PercentileTest, BadInputNamesTheProblem) {
  std::vector<double> empty;
  EXPECT_EQ(Percentiles(absl::MakeSpan(empty), {0.5}).status().message(),
            "Percentiles: values is empty");
  std::vector<double> with_nan = {1, std::nan("")};
  EXPECT_EQ(Percentiles(absl::MakeSpan(with_nan), {0.5}).status().message(),
            "Percentiles: values[1] is nan; expected finite");
  std::vector<double> ok = {1, 2};
  EXPECT_EQ(Percentiles(absl::MakeSpan(ok), {1.5}).status().message(),
            "Percentiles: quantiles[0] is 1.5; expected 0 <= q <= 1");
  EXPECT_FALSE(Percentiles(absl::MakeSpan(ok), {std::nan("")}).ok());
}

}  // namespace
}  // namespace stats
}  // namespace roastcoffea
