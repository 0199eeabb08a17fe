#include "backends/taskvine/perf_log.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::testing::HasSubstr;

TEST(PerfLog, ColumnsAreMappedByName) {
  absl::StatusOr<PerfHeader> header =
      PerfHeader::Parse("# timestamp workers_connected tasks_waiting bandwidth bytes_sent  ");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->columns(), 5);
  PerfSample s;
  ASSERT_TRUE(header->ParseRow("1742250321360099 3 7 1.000000 123456 ", &s).ok());
  EXPECT_EQ(s.time_us, 1742250321360099);
  EXPECT_EQ(s.workers_connected, 3);
  EXPECT_EQ(s.tasks_waiting, 7);
  EXPECT_EQ(s.bytes_sent, 123456);
  EXPECT_TRUE(std::isnan(s.tasks_running));  // not in this version's header
}

TEST(PerfLog, ReorderedColumnsOfAnotherVersion) {
  absl::StatusOr<PerfHeader> header = PerfHeader::Parse("# timestamp bytes_sent workers_connected");
  ASSERT_TRUE(header.ok());
  PerfSample s;
  ASSERT_TRUE(header->ParseRow("10 99 2", &s).ok());
  EXPECT_EQ(s.bytes_sent, 99);
  EXPECT_EQ(s.workers_connected, 2);
}

TEST(PerfLog, BadRowsAndHeaders) {
  EXPECT_FALSE(PerfHeader::Parse("timestamp a b").ok());
  EXPECT_FALSE(PerfHeader::Parse("# time a b").ok());
  EXPECT_TRUE(PerfHeader::IsHeader("#timestamp a"));
  absl::StatusOr<PerfHeader> header = PerfHeader::Parse("# timestamp workers_connected tasks_done");
  ASSERT_TRUE(header.ok());
  PerfSample s;
  EXPECT_THAT(std::string(header->ParseRow("1 2", &s).message()),
              HasSubstr("has 2 columns, the header has 3"));
  EXPECT_THAT(std::string(header->ParseRow("1 2 3 4", &s).message()), HasSubstr("more than"));
  EXPECT_THAT(std::string(header->ParseRow("1 x 3", &s).message()), HasSubstr("workers_connected"));
  EXPECT_THAT(std::string(header->ParseRow("1.5 2 3", &s).message()), HasSubstr("timestamp"));
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
