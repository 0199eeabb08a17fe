#include "sample_analysis/histogram.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HistogramTest, FillsBinsAndFlows) {
  absl::StatusOr<Histogram> h = Histogram::Create(4, 0, 100);
  ASSERT_TRUE(h.ok());
  for (double x : {0.0, 24.999, 25.0, 60.0, 99.999, -0.001, 100.0, 1e9,
                   std::numeric_limits<double>::quiet_NaN()}) {
    h->Fill(x);
  }
  EXPECT_THAT(h->counts(), ElementsAre(2, 1, 1, 1));
  EXPECT_EQ(h->underflow(), 1);
  EXPECT_EQ(h->overflow(), 3);
  EXPECT_EQ(h->entries(), 9);
  EXPECT_DOUBLE_EQ(h->BinLowEdge(2), 50);
  EXPECT_DOUBLE_EQ(h->bin_width(), 25);
}

TEST(HistogramTest, RejectsBadBinning) {
  EXPECT_EQ(Histogram::Create(0, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Histogram::Create(10, 5, 5).status().message(), HasSubstr("[5, 5)"));
  EXPECT_FALSE(Histogram::Create(10, 0, std::numeric_limits<double>::infinity()).ok());
  EXPECT_FALSE(Histogram::Create(10, std::nan(""), 1).ok());
}

TEST(HistogramTest, MergesSameBinningAndAdoptsIntoEmpty) {
  Histogram a = *Histogram::Create(3, 0, 3);
  Histogram b = *Histogram::Create(3, 0, 3);
  a.Fill(0.5);
  b.Fill(0.5);
  b.Fill(2.5);
  b.Fill(-1);
  ASSERT_TRUE(a.Merge(b).ok());
  EXPECT_THAT(a.counts(), ElementsAre(2, 0, 1));
  EXPECT_EQ(a.underflow(), 1);
  Histogram empty;
  empty += a;
  EXPECT_EQ(empty, a);
  a += Histogram();
  EXPECT_EQ(empty, a);
}

TEST(HistogramTest, RefusesToMergeDifferentBinnings) {
  Histogram a = *Histogram::Create(3, 0, 3);
  Histogram b = *Histogram::Create(4, 0, 3);
  const absl::Status s = a.Merge(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("3 bins"));
  EXPECT_THAT(s.message(), HasSubstr("4 bins"));
  EXPECT_THROW(a += b, std::invalid_argument);
  EXPECT_THAT(a.counts(), ElementsAre(0, 0, 0));
}

TEST(HistogramTest, FromCountsRebuildsAFilledHistogram) {
  absl::StatusOr<Histogram> filled = Histogram::Create(4, 0, 4);
  ASSERT_TRUE(filled.ok());
  for (double x : {-1.0, 0.5, 2.5, 2.7, 9.0}) filled->Fill(x);
  absl::StatusOr<Histogram> copy = Histogram::FromCounts(
      filled->low(), filled->high(), filled->counts(), filled->underflow(), filled->overflow());
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(*copy, *filled);
  absl::StatusOr<Histogram> empty = Histogram::FromCounts(0, 0, {}, 0, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty_binning());
  EXPECT_FALSE(Histogram::FromCounts(0, 1, {1, -1}, 0, 0).ok());
  EXPECT_FALSE(Histogram::FromCounts(1, 0, {1}, 0, 0).ok());
}

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
