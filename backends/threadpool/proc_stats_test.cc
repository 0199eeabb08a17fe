#include "backends/threadpool/proc_stats.h"

#include <sys/syscall.h>
#include <time.h>
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

TEST(ParseTaskSchedstatTest, ReadsTheThreeFields) {
  absl::StatusOr<TaskSchedstat> stats = ParseTaskSchedstat("1234567890 2047 17\n");
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->exec_runtime_ns, 1234567890);
  EXPECT_EQ(stats->run_delay_ns, 2047);
  EXPECT_EQ(stats->timeslices, 17);
}

TEST(ParseTaskSchedstatTest, HugeValuesUpToInt64Max) {
  absl::StatusOr<TaskSchedstat> stats =
      ParseTaskSchedstat("9223372036854775807 9223372036854775807 1\n");
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->exec_runtime_ns, INT64_MAX);
  absl::StatusOr<TaskSchedstat> too_large = ParseTaskSchedstat("18446744073709551615 0 1\n");
  ASSERT_FALSE(too_large.ok());
  EXPECT_THAT(too_large.status().message(), HasSubstr("sum_exec_runtime"));
}

TEST(ParseTaskSchedstatTest, TruncatedOrGarbageTextIsAnError) {
  for (const char* text : {"", "\n", "1234", "1234 56", "1234 56 7 8\n", "abc def ghi\n",
                           "-1 2 3\n", "1 +2 3\n", "1 2 3x\n"}) {
    absl::StatusOr<TaskSchedstat> stats = ParseTaskSchedstat(text);
    ASSERT_FALSE(stats.ok()) << "\"" << text << "\"";
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
  EXPECT_THAT(ParseTaskSchedstat("1 x 3\n").status().message(), HasSubstr("run_delay"));
}

TEST(ParseTaskSchedstatTest, AllZeroMeansTheKernelKeepsNoStatistics) {
  EXPECT_EQ(ParseTaskSchedstat("0 0 0\n").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(ParseTaskSchedstat("0 0 1\n").ok());  // a new thread before its first update
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
  EXPECT_FALSE(ReadTaskSchedstat(-1).ok());
  EXPECT_FALSE(ReadTaskCpuSeconds(-1).ok());
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TEST(LiveReadersTest, TaskCpuSecondsAreExactWhereTheKernelHasSchedstat) {
  const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  if (!ReadTaskSchedstat(tid).ok()) GTEST_SKIP() << "no schedstat: stat's clock ticks are used";
  // 25 ms is not a whole number of 10 ms ticks: stat would be off by up to 10 ms. Reading the
  // thread clock brings sum_exec_runtime up to date, so schedstat agrees with it to within
  // the cost of the reading.
  const double start = ThreadCpuSeconds();
  while (ThreadCpuSeconds() - start < 0.025) {
  }
  const double before = ThreadCpuSeconds();
  absl::StatusOr<double> cpu = ReadTaskCpuSeconds(tid);
  const double after = ThreadCpuSeconds();
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_GE(*cpu, before - 1e-6);
  EXPECT_LE(*cpu, after + 1e-6);
}

}  // namespace
}  // namespace threadpool_internal
}  // namespace roastcoffea
