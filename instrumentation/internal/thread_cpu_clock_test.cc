#include "instrumentation/internal/thread_cpu_clock.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

int64_t ClockGettimeNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int CountOpenDescriptors() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// Perf event pages mapped in this process (thread stacks come and go with their own caching).
int CountPerfMappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("perf_event") != std::string::npos) ++count;
  }
  return count;
}

// Restores the default options when a test ends.
class TestOptionsGuard {
 public:
  explicit TestOptionsGuard(const ThreadCpuClockTestOptions& options) {
    SetThreadCpuClockTestOptions(options);
  }
  ~TestOptionsGuard() { SetThreadCpuClockTestOptions(ThreadCpuClockTestOptions{}); }
};

// A page as the kernel writes it: ns = cycles * mult >> shift, updated at `update_cycles`.
perf_event_mmap_page SyntheticPage(uint64_t update_cycles, uint64_t running_ns) {
  perf_event_mmap_page page;
  std::memset(&page, 0, sizeof(page));
  page.lock = 6;
  page.cap_user_time = 1;
  page.time_shift = 10;
  page.time_mult = 512;  // 0.5 ns per cycle
  page.time_offset = uint64_t{0} - update_cycles / 2;
  page.time_running = running_ns;
  return page;
}

uint64_t fake_tsc = 0;
uint64_t FakeTsc() { return fake_tsc; }

TEST(ReadPerfTaskClockNsTest, AddsTheTscTimeSinceTheKernelsUpdateToTimeRunning) {
  const perf_event_mmap_page page = SyntheticPage(1'000'000, 7'000);
  fake_tsc = 1'200'000;  // 200000 cycles = 100 us after the update
  int64_t ns = 0;
  ASSERT_TRUE(ReadPerfTaskClockNs(page, &FakeTsc, &ns));
  EXPECT_EQ(ns, 7'000 + 100'000);
}

TEST(ReadPerfTaskClockNsTest, ConvertsLargeCycleCountsWithoutOverflow) {
  // cycles * mult would overflow 64 bits; the kernel's quotient / remainder split does not.
  const uint64_t update = (uint64_t{1} << 62) + 12'345;
  const perf_event_mmap_page page = SyntheticPage(update, 0);
  fake_tsc = update + 2'000'000'000;  // 1 s later
  int64_t ns = 0;
  ASSERT_TRUE(ReadPerfTaskClockNs(page, &FakeTsc, &ns));
  EXPECT_NEAR(static_cast<double>(ns), 1e9, 1.0);
}

TEST(ReadPerfTaskClockNsTest, ExtendsShortCycleCountersFromTheLastUpdate) {
  perf_event_mmap_page page = SyntheticPage(0, 500);
  page.cap_user_time_short = 1;
  page.time_cycles = 0x1234'0000'0000;
  page.time_mask = 0xffff'ffff;  // a 32-bit counter
  page.time_offset = uint64_t{0} - page.time_cycles / 2;
  fake_tsc = 0xabcd'0000'1000;  // low 32 bits: 0x1000 cycles past time_cycles
  int64_t ns = 0;
  ASSERT_TRUE(ReadPerfTaskClockNs(page, &FakeTsc, &ns));
  EXPECT_EQ(ns, 500 + 0x1000 / 2);
}

TEST(ReadPerfTaskClockNsTest, FailsWithoutTscConversion) {
  perf_event_mmap_page page = SyntheticPage(0, 500);
  page.cap_user_time = 0;
  int64_t ns = -1;
  EXPECT_FALSE(ReadPerfTaskClockNs(page, &FakeTsc, &ns));
  EXPECT_EQ(ns, -1);
}

perf_event_mmap_page* racing_page = nullptr;
int tsc_reads = 0;
// The kernel updates the page while the reader is between its two looks at `lock`.
uint64_t TscWithConcurrentUpdate() {
  if (tsc_reads++ == 0) {
    racing_page->lock += 2;
    racing_page->time_running = 90'000;
  }
  return 0;
}

TEST(ReadPerfTaskClockNsTest, RereadsWhenTheKernelUpdatesThePageMeanwhile) {
  perf_event_mmap_page page = SyntheticPage(0, 1'000);
  racing_page = &page;
  tsc_reads = 0;
  int64_t ns = 0;
  ASSERT_TRUE(ReadPerfTaskClockNs(page, &TscWithConcurrentUpdate, &ns));
  EXPECT_EQ(tsc_reads, 2);
  EXPECT_EQ(ns, 90'000);
}

TEST(ThreadCpuClockTest, AgreesWithClockGettimeOnABusyThread) {
  int64_t clock_ns = 0;
  int64_t reference_ns = 0;
  ThreadCpuClockSource source = ThreadCpuClockSource::kClockGettime;
  std::thread busy([&] {
    source = CallingThreadCpuClockSource();
    const int64_t clock_start = ThreadCpuClockNs();
    const int64_t reference_start = ClockGettimeNs();
    volatile uint64_t sink = 0;
    while (ClockGettimeNs() - reference_start < 50'000'000) sink = sink + 1;
    reference_ns = ClockGettimeNs() - reference_start;
    clock_ns = ThreadCpuClockNs() - clock_start;
  });
  busy.join();
  RecordProperty("source", ThreadCpuClockSourceName(source));
  EXPECT_GE(reference_ns, 50'000'000);
  EXPECT_NEAR(static_cast<double>(clock_ns), static_cast<double>(reference_ns),
              0.03 * static_cast<double>(reference_ns))
      << "source " << ThreadCpuClockSourceName(source);
}

TEST(ThreadCpuClockTest, CountsFromTheThreadsStartLikeClockGettime) {
  std::thread thread([] {
    const int64_t reference = ClockGettimeNs();
    const int64_t clock = ThreadCpuClockNs();
    EXPECT_GT(clock, 0);
    // Both count this thread's CPU time since it started (first use costs a few system calls).
    EXPECT_NEAR(static_cast<double>(clock), static_cast<double>(reference), 5e6);
    EXPECT_LE(clock, ThreadCpuClockNs());
  });
  thread.join();
}

TEST(ThreadCpuClockTest, DoesNotAdvanceWhileTheThreadSleeps) {
  std::thread thread([] {
    const int64_t before = ThreadCpuClockNs();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_LT(ThreadCpuClockNs() - before, 10'000'000);
  });
  thread.join();
}

TEST(ThreadCpuClockTest, FallsBackToClockGettimeWhenPerfIsNotAllowed) {
  ThreadCpuClockTestOptions options;
  options.allow_perf_event = false;
  TestOptionsGuard guard(options);
  std::thread thread([] {
    EXPECT_EQ(CallingThreadCpuClockSource(), ThreadCpuClockSource::kClockGettime);
    const int64_t clock = ThreadCpuClockNs();
    const int64_t reference = ClockGettimeNs();
    EXPECT_GT(clock, 0);
    EXPECT_LE(clock, reference);
    EXPECT_EQ(ThreadCpuClockOpenPerfEvents(), 0);
  });
  thread.join();
}

TEST(ThreadCpuClockTest, SourceNamesAreStable) {
  EXPECT_STREQ(ThreadCpuClockSourceName(ThreadCpuClockSource::kClockGettime), "clock_gettime");
  EXPECT_STREQ(ThreadCpuClockSourceName(ThreadCpuClockSource::kPerfUserPage), "perf_user_page");
}

// Whether this machine lets a thread open a perf task clock at all (else the lifecycle tests
// below have nothing to check).
bool PerfEventsOpen() {
  bool open = false;
  std::thread probe(
      [&] { open = CallingThreadCpuClockSource() == ThreadCpuClockSource::kPerfUserPage; });
  probe.join();
  return open;
}

ThreadCpuClockTestOptions KeepPerfEvents() {
  ThreadCpuClockTestOptions options;
  options.keep_perf_event_without_user_time = true;
  return options;
}

TEST(ThreadCpuClockLifecycleTest, ReleasesEachThreadsEventWhenTheThreadExits) {
  TestOptionsGuard guard(KeepPerfEvents());
  if (!PerfEventsOpen()) GTEST_SKIP() << "perf_event_open is not available here";
  const int descriptors = CountOpenDescriptors();
  const int mappings = CountPerfMappings();
  ASSERT_EQ(ThreadCpuClockOpenPerfEvents(), 0);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([] {
        EXPECT_EQ(CallingThreadCpuClockSource(), ThreadCpuClockSource::kPerfUserPage);
        EXPECT_GE(ThreadCpuClockNs(), 0);
        EXPECT_GE(ThreadCpuClockOpenPerfEvents(), 1);
        EXPECT_GE(CountPerfMappings(), 1);
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(ThreadCpuClockOpenPerfEvents(), 0);
  }
  EXPECT_EQ(CountOpenDescriptors(), descriptors);
  EXPECT_EQ(CountPerfMappings(), mappings);
}

TEST(ThreadCpuClockLifecycleTest, AForkedChildOpensItsOwnEventAndClosesInheritedOnes) {
  TestOptionsGuard guard(KeepPerfEvents());
  if (!PerfEventsOpen()) GTEST_SKIP() << "perf_event_open is not available here";
  std::thread forker([] {
    ASSERT_EQ(CallingThreadCpuClockSource(), ThreadCpuClockSource::kPerfUserPage);
    const int descriptors_with_event = CountOpenDescriptors();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // The parent's page is not mapped here: reading it would crash. The inherited
      // descriptor is closed and a fresh event opened for the child.
      const int64_t reading = ThreadCpuClockNs();
      const bool own_event = CallingThreadCpuClockSource() == ThreadCpuClockSource::kPerfUserPage &&
                             ThreadCpuClockOpenPerfEvents() == 1;
      const bool same_descriptors = CountOpenDescriptors() == descriptors_with_event;
      _exit(reading >= 0 && own_event && same_descriptors ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(CallingThreadCpuClockSource(), ThreadCpuClockSource::kPerfUserPage);
    EXPECT_GE(ThreadCpuClockNs(), 0);
  });
  forker.join();
  EXPECT_EQ(ThreadCpuClockOpenPerfEvents(), 0);
}

}  // namespace
}  // namespace instrumentation_internal
}  // namespace roastcoffea
