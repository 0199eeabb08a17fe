#include "backends/threadpool/proc_stats.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/linux_files.h"

namespace roastcoffea {
namespace threadpool_internal {
namespace {

using ::testing::HasSubstr;

constexpr char kIoText[] =
    "rchar: 323934931\n"
    "wchar: 323929600\n"
    "syscr: 632687\n"
    "syscw: 632675\n"
    "read_bytes: 4096\n"
    "write_bytes: 323932160\n"
    "cancelled_write_bytes: 0\n";

TEST(ParseTaskIoTest, ReadsTheFourByteCounters) {
  absl::StatusOr<TaskIoCounters> io = ParseTaskIo(kIoText);
  ASSERT_TRUE(io.ok()) << io.status();
  EXPECT_EQ(io->rchar, 323934931);
  EXPECT_EQ(io->wchar, 323929600);
  EXPECT_EQ(io->read_bytes, 4096);
  EXPECT_EQ(io->write_bytes, 323932160);
}

TEST(ParseTaskIoTest, MissingKeyIsNamed) {
  absl::StatusOr<TaskIoCounters> io = ParseTaskIo("rchar: 1\nwchar: 2\nread_bytes: 3\n");
  ASSERT_FALSE(io.ok());
  EXPECT_EQ(io.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(io.status().message(), HasSubstr("write_bytes"));
}

TEST(ParseTaskIoTest, BadValueIsNamed) {
  absl::StatusOr<TaskIoCounters> io =
      ParseTaskIo("rchar: 1\nwchar: lots\nread_bytes: 3\nwrite_bytes: 4\n");
  ASSERT_FALSE(io.ok());
  EXPECT_THAT(io.status().message(), HasSubstr("wchar"));
  EXPECT_THAT(io.status().message(), HasSubstr("lots"));
}

TEST(ParseTaskIoTest, EmptyTextIsAnError) { EXPECT_FALSE(ParseTaskIo("").ok()); }

TEST(ParseTaskStatCpuSecondsTest, SumsUtimeAndStime) {
  // Fields 14 (utime) = 250 and 15 (stime) = 50 ticks; the command contains ") (" and spaces.
  constexpr char kStat[] =
      "1234 (my (weird) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 "
      "12345 1000000 200 18446744073709551615";
  absl::StatusOr<double> seconds = ParseTaskStatCpuSeconds(kStat, 100);
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_DOUBLE_EQ(*seconds, 3.0);
}

TEST(ParseTaskStatCpuSecondsTest, BadInputIsAnError) {
  EXPECT_FALSE(ParseTaskStatCpuSeconds("no parenthesis here", 100).ok());
  absl::StatusOr<double> short_line = ParseTaskStatCpuSeconds("1 (x) S 1 2", 100);
  ASSERT_FALSE(short_line.ok());
  EXPECT_THAT(short_line.status().message(), HasSubstr("fields"));
  absl::StatusOr<double> bad_ticks = ParseTaskStatCpuSeconds("1 (x) S", 0);
  ASSERT_FALSE(bad_ticks.ok());
  EXPECT_THAT(bad_ticks.status().message(), HasSubstr("got 0"));
  absl::StatusOr<double> bad_utime =
      ParseTaskStatCpuSeconds("1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 5 0 0", 100);
  ASSERT_FALSE(bad_utime.ok());
  EXPECT_THAT(bad_utime.status().message(), HasSubstr("utime"));
}

TEST(ParseStatmResidentBytesTest, MultipliesResidentPagesByPageSize) {
  absl::StatusOr<int64_t> rss = ParseStatmResidentBytes("10000 2500 300 10 0 800 0\n", 4096);
  ASSERT_TRUE(rss.ok()) << rss.status();
  EXPECT_EQ(*rss, 2500 * 4096);
}

TEST(ParseStatmResidentBytesTest, BadInputIsAnError) {
  EXPECT_FALSE(ParseStatmResidentBytes("10000", 4096).ok());
  EXPECT_FALSE(ParseStatmResidentBytes("10000 x", 4096).ok());
  EXPECT_FALSE(ParseStatmResidentBytes("10000 2500", 0).ok());
}

TEST(LiveReadersTest, ReadThisProcess) {
  absl::StatusOr<int64_t> rss = ReadResidentBytes();
  ASSERT_TRUE(rss.ok()) << rss.status();
  EXPECT_GT(*rss, 0);

  const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  absl::StatusOr<double> cpu = ReadTaskCpuSeconds(tid);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_GE(*cpu, 0);

  absl::StatusOr<TaskIoCounters> io = ReadTaskIo(tid);
  ASSERT_TRUE(io.ok()) << io.status();
  EXPECT_GE(io->rchar, 0);

  EXPECT_GT(MemoryLimitBytes(), 0);
  EXPECT_LE(MemoryLimitBytes(), host::PhysicalMemoryBytes());
}

TEST(LiveReadersTest, UnknownThreadIsAnErrorNotACrash) {
  EXPECT_FALSE(ReadTaskIo(-1).ok());
  EXPECT_FALSE(ReadTaskCpuSeconds(-1).ok());
}

}  // namespace
}  // namespace threadpool_internal
}  // namespace roastcoffea
