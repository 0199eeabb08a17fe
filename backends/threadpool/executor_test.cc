#include "backends/threadpool/executor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/threadpool/test_gate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<ThreadPoolExecutor> MakeExecutor(int threads) {
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create({threads});
  EXPECT_TRUE(executor.ok()) << executor.status();
  return executor.ok() ? std::move(*executor) : nullptr;
}

// An output with a merge that records how it was built.
struct Tally {
  int64_t sum = 0;
  int64_t count = 0;
  Tally& operator+=(const Tally& other) {
    sum += other.sum;
    count += other.count;
    return *this;
  }
};

class MapSumTest : public ::testing::TestWithParam<int> {};

TEST_P(MapSumTest, SumsEveryItemOnce) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(GetParam());
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(executor->threads(), GetParam());
  constexpr size_t kItems = 1000;
  std::vector<std::atomic<int>> seen(kItems);
  absl::StatusOr<Tally> total = executor->Map<Tally>(kItems, [&](size_t i) {
    seen[i].fetch_add(1);
    return Tally{static_cast<int64_t>(i), 1};
  });
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(total->sum, static_cast<int64_t>(kItems * (kItems - 1) / 2));
  EXPECT_EQ(total->count, static_cast<int64_t>(kItems));
  for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(seen[i].load(), 1) << "item " << i;
}

INSTANTIATE_TEST_SUITE_P(ThreadCounts, MapSumTest, ::testing::Values(1, 2, 3, 8));

TEST(ThreadPoolExecutorTest, MapsPlainNumbersAndCanRunManyTimes) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(3);
  ASSERT_NE(executor, nullptr);
  for (int round = 1; round <= 20; ++round) {
    absl::StatusOr<int64_t> total =
        executor->Map<int64_t>(static_cast<size_t>(round), [round](size_t) { return round; });
    ASSERT_TRUE(total.ok()) << total.status();
    EXPECT_EQ(*total, int64_t{round} * round);
  }
}

TEST(ThreadPoolExecutorTest, MergesStringsWithoutLosingParts) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(4);
  ASSERT_NE(executor, nullptr);
  absl::StatusOr<std::string> joined = executor->Map<std::string>(
      26, [](size_t i) { return std::string(1, static_cast<char>('a' + i)); });
  ASSERT_TRUE(joined.ok()) << joined.status();
  std::multiset<char> letters(joined->begin(), joined->end());
  ASSERT_EQ(letters.size(), 26u);
  for (char c = 'a'; c <= 'z'; ++c) EXPECT_EQ(letters.count(c), 1u) << c;
}

TEST(ThreadPoolExecutorTest, ZeroThreadsMeansAllCores) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(0);
  ASSERT_NE(executor, nullptr);
  const int expected = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(executor->threads(), expected);
  EXPECT_EQ(executor->Snapshot().worker_threads, expected);
}

TEST(ThreadPoolExecutorTest, NegativeThreadsIsInvalidArgumentNamingTheValue) {
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor = ThreadPoolExecutor::Create({-3});
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(executor.status().message(), "threads must be >= 0, got -3");
}

TEST(ThreadPoolExecutorTest, TooManyThreadsIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create({ThreadPoolExecutor::kMaxThreads + 1});
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(executor.status().message(), HasSubstr("4097"));
}

TEST(ThreadPoolExecutorTest, ZeroItemsReturnsDefaultOutputWithoutCallingFn) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  std::atomic<int> calls{0};
  absl::StatusOr<Tally> total = executor->Map<Tally>(0, [&](size_t) {
    calls.fetch_add(1);
    return Tally{1, 1};
  });
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(total->sum, 0);
  EXPECT_EQ(total->count, 0);
  EXPECT_EQ(calls.load(), 0);
}

TEST(ThreadPoolExecutorTest, ExceptionBecomesInternalNamingItemAndText) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(3);
  ASSERT_NE(executor, nullptr);
  std::atomic<int> calls{0};
  absl::StatusOr<int64_t> total = executor->Map<int64_t>(10000, [&](size_t i) -> int64_t {
    calls.fetch_add(1);
    if (i == 7) throw std::runtime_error("bad chunk");
    return 1;
  });
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(total.status().message(), HasSubstr("work item 7"));
  EXPECT_THAT(total.status().message(), HasSubstr("bad chunk"));

  // The pool still works afterwards.
  absl::StatusOr<int64_t> again = executor->Map<int64_t>(5, [](size_t) { return int64_t{2}; });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 10);
}

TEST(ThreadPoolExecutorTest, ExceptionStopsTheRun) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  std::atomic<int> calls{0};
  absl::StatusOr<int64_t> total = executor->Map<int64_t>(100, [&](size_t i) -> int64_t {
    calls.fetch_add(1);
    if (i == 3) throw std::runtime_error("stop here");
    return 1;
  });
  ASSERT_FALSE(total.ok());
  // One thread takes items in order, so nothing after item 3 ran.
  EXPECT_EQ(calls.load(), 4);
}

TEST(ThreadPoolExecutorTest, NonStandardExceptionIsReported) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  absl::StatusOr<int64_t> total = executor->Map<int64_t>(4, [](size_t i) -> int64_t {
    if (i == 2) throw 42;
    return 1;
  });
  ASSERT_FALSE(total.ok());
  EXPECT_EQ(total.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(total.status().message(), HasSubstr("work item 2"));
  EXPECT_THAT(total.status().message(), HasSubstr("unknown exception"));
}

struct ThrowingMerge {
  int value = 0;
  ThrowingMerge& operator+=(const ThrowingMerge&) { throw std::logic_error("cannot merge"); }
};

TEST(ThreadPoolExecutorTest, ExceptionInMergeIsReported) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  // One thread: the second item's += throws on the worker.
  absl::StatusOr<ThrowingMerge> merged =
      executor->Map<ThrowingMerge>(2, [](size_t) { return ThrowingMerge{1}; });
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(merged.status().message(), HasSubstr("work item 1"));
  EXPECT_THAT(merged.status().message(), HasSubstr("cannot merge"));
}

TEST(ThreadPoolExecutorTest, MapFromInsideAWorkItemIsRefused) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  absl::StatusOr<int64_t> outer = executor->Map<int64_t>(1, [&](size_t) -> int64_t {
    absl::StatusOr<int64_t> inner = executor->Map<int64_t>(1, [](size_t) { return int64_t{1}; });
    EXPECT_EQ(inner.status().code(), absl::StatusCode::kFailedPrecondition);
    return 1;
  });
  ASSERT_TRUE(outer.ok()) << outer.status();
}

TEST(ThreadPoolExecutorTest, SnapshotDuringARunShowsExecutingAndQueuedItems) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(2);
  ASSERT_NE(executor, nullptr);
  ExecutorSnapshot idle = executor->Snapshot();
  EXPECT_EQ(idle.worker_threads, 2);
  EXPECT_EQ(idle.executing, 0);
  EXPECT_EQ(idle.queued, 0);
  ASSERT_EQ(idle.worker_tids.size(), 2u);
  EXPECT_NE(idle.worker_tids[0], idle.worker_tids[1]);
  EXPECT_GT(idle.worker_tids[0], 0);

  Gate gate;
  std::thread runner([&] {
    absl::StatusOr<int64_t> total = executor->Map<int64_t>(10, [&](size_t) -> int64_t {
      gate.Arrive();
      return 1;
    });
    EXPECT_TRUE(total.ok());
    EXPECT_EQ(total.value_or(0), 10);
  });
  gate.WaitForArrivals(2);
  ExecutorSnapshot busy = executor->Snapshot();
  EXPECT_EQ(busy.worker_threads, 2);
  EXPECT_EQ(busy.executing, 2);
  EXPECT_EQ(busy.queued, 8);
  ASSERT_EQ(busy.workers.size(), 2u);
  for (const WorkerThreadSnapshot& worker : busy.workers) {
    EXPECT_TRUE(worker.executing);
    EXPECT_GE(worker.cpu_seconds, 0);
  }
  EXPECT_EQ(busy.worker_tids, idle.worker_tids);
  gate.Open();
  runner.join();

  ExecutorSnapshot done = executor->Snapshot();
  EXPECT_EQ(done.executing, 0);
  EXPECT_EQ(done.queued, 0);
  EXPECT_EQ(done.workers[0].items_completed + done.workers[1].items_completed, 10);
  EXPECT_GT(done.workers[0].busy_seconds + done.workers[1].busy_seconds, 0);
}

TEST(ThreadPoolExecutorTest, SnapshotCountsWorkerCpuTime) {
  std::unique_ptr<ThreadPoolExecutor> executor = MakeExecutor(1);
  ASSERT_NE(executor, nullptr);
  const double before = executor->Snapshot().workers[0].cpu_seconds;
  absl::StatusOr<int64_t> spun = executor->Map<int64_t>(1, [](size_t) -> int64_t {
    // Spin until this thread used 50 ms of CPU.
    timespec start;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile int64_t sink = 0;
    while (true) {
      for (int i = 0; i < 10000; ++i) sink = sink + i;
      timespec now;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
      if ((now.tv_sec - start.tv_sec) * 1e9 + (now.tv_nsec - start.tv_nsec) >= 50e6) break;
    }
    return 1;
  });
  ASSERT_TRUE(spun.ok()) << spun.status();
  const double after = executor->Snapshot().workers[0].cpu_seconds;
  EXPECT_GE(after - before, 0.049);
}

// (tid, thread_index of a chunk record) pairs seen by the work items.
struct SeenIndices {
  std::vector<std::pair<int64_t, int64_t>> tid_and_index;
  SeenIndices& operator+=(const SeenIndices& other) {
    tid_and_index.insert(tid_and_index.end(), other.tid_and_index.begin(),
                         other.tid_and_index.end());
    return *this;
  }
};

// Chunk records' thread_index is the executor's ThreadIndexOf(worker), whichever worker tracks
// a chunk first, and even when another thread tracked chunks before the pool started.
TEST(ThreadPoolExecutorTest, ChunkRecordsCarryTheWorkersThreadIndex) {
  const v1::ChunkRecord before = TrackChunk(ChunkMetadata{}, [] {});
  auto executor = MakeExecutor(3);
  ASSERT_NE(executor, nullptr);
  absl::StatusOr<SeenIndices> seen = executor->Map<SeenIndices>(30, [](size_t i) {
    // Later items first on whichever thread: the order threads reach TrackChunk varies.
    std::this_thread::sleep_for(std::chrono::microseconds(30 - static_cast<int>(i)));
    const v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {});
    SeenIndices one;
    one.tid_and_index.emplace_back(static_cast<int64_t>(syscall(SYS_gettid)),
                                   record.thread_index());
    return one;
  });
  ASSERT_TRUE(seen.ok()) << seen.status();
  const ExecutorSnapshot snapshot = executor->Snapshot();
  std::set<int64_t> indices;
  for (const WorkerThreadSnapshot& worker : snapshot.workers) {
    EXPECT_EQ(worker.thread_index, executor->ThreadIndexOf(worker.index));
    EXPECT_NE(worker.thread_index, before.thread_index());
    indices.insert(worker.thread_index);
  }
  EXPECT_EQ(indices.size(), 3u);
  for (const auto& [tid, index] : seen->tid_and_index) {
    bool found = false;
    for (const WorkerThreadSnapshot& worker : snapshot.workers) {
      if (worker.tid != tid) continue;
      found = true;
      EXPECT_EQ(index, worker.thread_index) << "tid " << tid;
    }
    EXPECT_TRUE(found) << "tid " << tid;
  }
}

}  // namespace
}  // namespace roastcoffea
