#include "instrumentation/internal/thread_schedstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

ThreadSchedstat Parse(const std::string& text) {
  return ParseThreadSchedstat(text.data(), text.size());
}

int64_t ClockGettimeNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void BusyCpu(int64_t nanoseconds) {
  const int64_t start = ClockGettimeNs();
  while (ClockGettimeNs() - start < nanoseconds) {
  }
}

int CountOpenDescriptors() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// Whether this machine gives threads their schedstat at all (else the live tests have nothing
// to check).
bool SchedstatAvailable() {
  bool available = false;
  std::thread probe([&] { available = ReadThreadSchedstat().available; });
  probe.join();
  return available;
}

TEST(ParseThreadSchedstatTest, ReadsTheThreeFields) {
  const ThreadSchedstat stats = Parse("513560 2047 17\n");
  ASSERT_TRUE(stats.available);
  EXPECT_EQ(stats.exec_runtime_ns, 513560);
  EXPECT_EQ(stats.run_delay_ns, 2047);
  EXPECT_EQ(stats.timeslices, 17);
}

TEST(ParseThreadSchedstatTest, ANewThreadMayHaveRunForZeroNanoseconds) {
  // The kernel adds run time at ticks and switches: a thread's first slice may not show yet.
  const ThreadSchedstat stats = Parse("0 0 1\n");
  ASSERT_TRUE(stats.available);
  EXPECT_EQ(stats.timeslices, 1);
}

TEST(ParseThreadSchedstatTest, AllZeroMeansTheKernelKeepsNoStatistics) {
  EXPECT_FALSE(Parse("0 0 0\n").available);
}

TEST(ParseThreadSchedstatTest, TruncatedTextIsUnavailable) {
  EXPECT_FALSE(Parse("").available);
  EXPECT_FALSE(Parse("513560").available);
  EXPECT_FALSE(Parse("513560 2047").available);
  EXPECT_FALSE(Parse("513560 2047 ").available);
  // No newline: the last number may have been cut.
  EXPECT_FALSE(Parse("513560 2047 17").available);
}

TEST(ParseThreadSchedstatTest, GarbageIsUnavailable) {
  EXPECT_FALSE(Parse("\n").available);
  EXPECT_FALSE(Parse("abc def ghi\n").available);
  EXPECT_FALSE(Parse("-1 2 3\n").available);
  EXPECT_FALSE(Parse("1 x 3\n").available);
  EXPECT_FALSE(Parse("1 2 3x\n").available);
  EXPECT_FALSE(Parse("1,2,3\n").available);
  const ThreadSchedstat unavailable = Parse("1 2\n3\n");
  EXPECT_FALSE(unavailable.available);
  EXPECT_EQ(unavailable.exec_runtime_ns, 0);
  EXPECT_EQ(unavailable.run_delay_ns, 0);
}

TEST(ParseThreadSchedstatTest, HugeValuesUpToInt64MaxAreKeptLargerOnesAreUnavailable) {
  const ThreadSchedstat largest = Parse("9223372036854775807 9223372036854775807 1\n");
  ASSERT_TRUE(largest.available);
  EXPECT_EQ(largest.exec_runtime_ns, INT64_MAX);
  EXPECT_EQ(largest.run_delay_ns, INT64_MAX);
  EXPECT_FALSE(Parse("9223372036854775808 1 1\n").available);
  EXPECT_FALSE(Parse("1 18446744073709551615 1\n").available);
  EXPECT_FALSE(Parse("1 2 99999999999999999999999999\n").available);
}

TEST(ParseThreadSchedstatTest, StopsAtLengthWithoutANulTerminator) {
  const char text[] = {'1', '2', ' ', '3', ' ', '4', '\n', '9', '9'};
  const ThreadSchedstat stats = ParseThreadSchedstat(text, 7);
  ASSERT_TRUE(stats.available);
  EXPECT_EQ(stats.exec_runtime_ns, 12);
  EXPECT_EQ(stats.timeslices, 4);
}

TEST(ThreadSchedstatTest, RunTimeFollowsTheThreadCpuClockWithinATick) {
  if (!SchedstatAvailable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  std::thread busy([] {
    const ThreadSchedstat before = ReadThreadSchedstat();
    const int64_t clock_before = ClockGettimeNs();
    BusyCpu(100'000'000);
    const ThreadSchedstat after = ReadThreadSchedstat();
    const int64_t clock_ns = ClockGettimeNs() - clock_before;
    ASSERT_TRUE(before.available && after.available);
    // sum_exec_runtime is brought up to date only at ticks and switches (HZ >= 100).
    EXPECT_NEAR(static_cast<double>(after.exec_runtime_ns - before.exec_runtime_ns),
                static_cast<double>(clock_ns), 25e6);
    EXPECT_GE(after.run_delay_ns, before.run_delay_ns);
    EXPECT_GE(after.timeslices, before.timeslices);
  });
  busy.join();
}

TEST(ThreadSchedstatTest, ASleepingThreadDoesNotWaitForACpu) {
  if (!SchedstatAvailable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  std::thread sleeper([] {
    const ThreadSchedstat before = ReadThreadSchedstat();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const ThreadSchedstat after = ReadThreadSchedstat();
    ASSERT_TRUE(before.available && after.available);
    // Waking up may wait for a CPU on a loaded machine; not for the 100 ms asleep.
    EXPECT_LT(after.run_delay_ns - before.run_delay_ns, 50'000'000);
    EXPECT_LT(after.exec_runtime_ns - before.exec_runtime_ns, 10'000'000);
    EXPECT_GT(after.timeslices, before.timeslices);  // it left the CPU and came back
  });
  sleeper.join();
}

TEST(ThreadSchedstatLifecycleTest, ClosesEachThreadsDescriptorWhenTheThreadExits) {
  if (!SchedstatAvailable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  const int descriptors = CountOpenDescriptors();
  ASSERT_EQ(ThreadSchedstatOpenDescriptors(), 0);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([] {
        EXPECT_TRUE(ReadThreadSchedstat().available);
        EXPECT_TRUE(ReadThreadSchedstat().available);  // the same descriptor again
        EXPECT_GE(ThreadSchedstatOpenDescriptors(), 1);
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(ThreadSchedstatOpenDescriptors(), 0);
  }
  EXPECT_EQ(CountOpenDescriptors(), descriptors);
}

TEST(ThreadSchedstatLifecycleTest, AForkedChildReadsItsOwnThreadNotItsParents) {
  if (!SchedstatAvailable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  std::thread forker([] {
    BusyCpu(100'000'000);
    const ThreadSchedstat parent = ReadThreadSchedstat();
    ASSERT_TRUE(parent.available);
    ASSERT_GE(parent.exec_runtime_ns, 50'000'000);
    const int descriptors_with_file = CountOpenDescriptors();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // The inherited descriptor names the parent's thread (100 ms of run time); the child's
      // thread starts from 0. The inherited one is closed and the child's own opened.
      const ThreadSchedstat own = ReadThreadSchedstat();
      const bool fresh = own.available && own.exec_runtime_ns < 50'000'000;
      const bool one_file = ThreadSchedstatOpenDescriptors() == 1;
      const bool same_descriptors = CountOpenDescriptors() == descriptors_with_file;
      _exit((fresh ? 0 : 1) | (one_file ? 0 : 2) | (same_descriptors ? 0 : 4));
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: parent's reading, 2: open count, 4: descriptors";
    const ThreadSchedstat again = ReadThreadSchedstat();
    ASSERT_TRUE(again.available);
    EXPECT_GE(again.exec_runtime_ns, parent.exec_runtime_ns);
  });
  forker.join();
  EXPECT_EQ(ThreadSchedstatOpenDescriptors(), 0);
}

}  // namespace
}  // namespace instrumentation_internal
}  // namespace roastcoffea
