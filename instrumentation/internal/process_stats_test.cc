#include "instrumentation/internal/process_stats.h"

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

using ::testing::HasSubstr;

TEST(ParseStatmResidentBytesTest, MultipliesResidentPagesByPageSize) {
  absl::StatusOr<int64_t> bytes = ParseStatmResidentBytes("2000 300 40 5 0 60 0\n", 4096);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 300 * 4096);
}

TEST(ParseStatmResidentBytesTest, RejectsTextWithoutResidentFieldNamingIt) {
  absl::StatusOr<int64_t> bytes = ParseStatmResidentBytes("2000\n", 4096);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr("\"2000\n\""));
}

TEST(ParseStatmResidentBytesTest, RejectsNonNumericAndNegativeResidentField) {
  absl::StatusOr<int64_t> garbage = ParseStatmResidentBytes("2000 lots 1", 4096);
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(garbage.status().message()), HasSubstr("2000 lots 1"));
  absl::StatusOr<int64_t> negative = ParseStatmResidentBytes("2000 -3 1", 4096);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStatmResidentBytes("", 4096).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseStatmResidentBytesTest, RejectsAFieldCutShortOrTooLongAndAcceptsAnyBlank) {
  EXPECT_FALSE(ParseStatmResidentBytes("2000 30x 1", 4096).ok()) << "digits then junk";
  EXPECT_FALSE(ParseStatmResidentBytes("2000 1234567890123456789 1", 4096).ok()) << "19 digits";
  absl::StatusOr<int64_t> tabs = ParseStatmResidentBytes("\t2000\t7\n", 4096);
  ASSERT_TRUE(tabs.ok()) << tabs.status();
  EXPECT_EQ(*tabs, 7 * 4096);
  absl::StatusOr<int64_t> last = ParseStatmResidentBytes("2000 9", 1);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(*last, 9);
}

TEST(ParseStatmResidentBytesTest, RejectsNonPositivePageSizeNamingIt) {
  absl::StatusOr<int64_t> bytes = ParseStatmResidentBytes("1 2 3", -4096);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr("-4096"));
  EXPECT_FALSE(ParseStatmResidentBytes("1 2 3", 0).ok());
}

TEST(ReadResidentMemoryBytesTest, ReadsAPlausibleValue) {
  absl::StatusOr<int64_t> bytes = ReadResidentMemoryBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GT(*bytes, 0);
  EXPECT_EQ(*bytes % ::sysconf(_SC_PAGESIZE), 0);
  EXPECT_GT(ResidentMemoryBytesOrZero(), 0);
}

TEST(ThreadCpuTimeNsTest, GrowsWhileTheThreadComputesButNotWhileItSleeps) {
  const int64_t start = ThreadCpuTimeNs();
  EXPECT_GT(start, 0);
  volatile uint64_t sink = 0;
  while (ThreadCpuTimeNs() - start < 20'000'000) sink = sink + 1;  // 20 ms of CPU
  EXPECT_GE(ThreadCpuTimeNs() - start, 20'000'000);

  const int64_t before_sleep_cpu = ThreadCpuTimeNs();
  const int64_t before_sleep_wall = SteadyTimeNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t slept_wall = SteadyTimeNs() - before_sleep_wall;
  EXPECT_GE(slept_wall, 50'000'000);
  EXPECT_LT(ThreadCpuTimeNs() - before_sleep_cpu, slept_wall);
}

TEST(ClocksTest, UnixTimeIsUtcNanosecondsAndSteadyTimeIsMonotonic) {
  const int64_t unix_ns = UnixTimeNs();
  const int64_t unix_s = static_cast<int64_t>(::time(nullptr));
  EXPECT_NEAR(static_cast<double>(unix_ns) * 1e-9, static_cast<double>(unix_s), 5.0);
  const int64_t a = SteadyTimeNs();
  const int64_t b = SteadyTimeNs();
  EXPECT_LE(a, b);
}

TEST(DefaultWorkerNameTest, IsHostColonPid) {
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(DefaultWorkerName(), std::string(host) + ":" + std::to_string(::getpid()));
}

}  // namespace
}  // namespace instrumentation_internal
}  // namespace roastcoffea
