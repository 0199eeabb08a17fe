#include "export/time_text.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

google::protobuf::Timestamp At(int64_t seconds, int32_t nanos = 0) {
  google::protobuf::Timestamp time;
  time.set_seconds(seconds);
  time.set_nanos(nanos);
  return time;
}

TEST(FormatUtcTimestampTest, PlausibleTimesAreDates) {
  EXPECT_EQ(FormatUtcTimestamp(At(1742250321, 500)), "2025-03-17 22:25:21 UTC");
  EXPECT_EQ(FormatUtcTimestamp(At(0)), "1970-01-01 00:00:00 UTC");
  EXPECT_EQ(FormatUtcTimestamp(At(kLatestPlausibleUnixSeconds - 1)), "2254-12-31 23:59:59 UTC");
}

// Issue #16: a start time near INT64_MAX seconds was shown as "292277026596-12-04".
TEST(FormatUtcTimestampTest, ImplausibleTimesAreInvalidWithTheirRawValue) {
  EXPECT_EQ(FormatUtcTimestamp(At(std::numeric_limits<int64_t>::max())),
            "N/A (invalid: 9223372036854775807 s)");
  EXPECT_EQ(FormatUtcTimestamp(At(kLatestPlausibleUnixSeconds)), "N/A (invalid: 8993721600 s)");
  EXPECT_EQ(FormatUtcTimestamp(At(-1)), "N/A (invalid: -1 s)");
  EXPECT_EQ(FormatUtcTimestamp(At(std::numeric_limits<int64_t>::min())),
            "N/A (invalid: -9223372036854775808 s)");
  EXPECT_EQ(FormatUtcTimestamp(At(1742250321, -5)), "N/A (invalid: 1742250321 s +-5 ns)");
  EXPECT_EQ(FormatUtcTimestamp(At(1742250321, 1000000000)),
            "N/A (invalid: 1742250321 s +1000000000 ns)");
}

TEST(FormatUtcSecondsTest, AxisLabelsOfImplausibleSecondsAreNa) {
  EXPECT_EQ(FormatUtcSeconds(1742250321.25, "%H:%M:%E3S"), "22:25:21.250");
  EXPECT_EQ(FormatUtcSeconds(9.3e18, "%H:%M:%S"), "N/A");
  EXPECT_EQ(FormatUtcSeconds(-1, "%H:%M:%S"), "N/A");
  EXPECT_EQ(FormatUtcSeconds(std::numeric_limits<double>::quiet_NaN(), "%H:%M:%S"), "N/A");
  EXPECT_TRUE(PlausibleUnixSeconds(1742250321.0));
  EXPECT_FALSE(PlausibleUnixSeconds(std::numeric_limits<double>::infinity()));
}

}  // namespace
}  // namespace roastcoffea
