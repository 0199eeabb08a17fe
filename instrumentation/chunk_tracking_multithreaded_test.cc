// Several threads tracking chunks at the same time: each keeps its own current chunk, sections
// and byte counters (the original kept them on the shared processor and raced).
#include <sched.h>
#include <time.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/internal/thread_schedstat.h"
#include "instrumentation/sections.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int kThreads = 4;
constexpr int kChunksPerThread = 20;
constexpr SectionName kSectionNames[kThreads] = {"thread_0", "thread_1", "thread_2", "thread_3"};

TEST(ChunkTrackingMultithreadedTest, ThreadIndexIsStableOnOneThreadAndDiffersAcrossThreads) {
  const int64_t here = TrackChunk(ChunkMetadata{}, [] {}).thread_index();
  EXPECT_GE(here, 0);
  EXPECT_EQ(TrackChunk(ChunkMetadata{}, [] {}).thread_index(), here);
  int64_t there = -1;
  std::thread other([&] { there = TrackChunk(ChunkMetadata{}, [] {}).thread_index(); });
  other.join();
  EXPECT_GE(there, 0);
  EXPECT_NE(there, here);
}

TEST(ChunkTrackingMultithreadedTest, ConcurrentChunksKeepTheirSectionsApart) {
  std::vector<std::vector<v1::ChunkRecord>> records(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &records, &ready] {
      // Start together so that the chunks overlap.
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int c = 0; c < kChunksPerThread; ++c) {
        ChunkMetadata metadata{"dataset_" + std::to_string(t), "file", "uuid", c, c + 1, 1};
        records[t].push_back(TrackChunk(metadata, [t, c] {
          for (int repeat = 0; repeat <= t; ++repeat) {
            ScopedBytes bytes(kSectionNames[t]);
            ScopedTimer timer(kSectionNames[t]);
            RecordBytesRead(1000 * (t + 1) + c, 1);
            std::this_thread::yield();
          }
        }));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<int64_t> thread_indices;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(records[t].size(), static_cast<size_t>(kChunksPerThread));
    for (int c = 0; c < kChunksPerThread; ++c) {
      const v1::ChunkRecord& record = records[t][c];
      SCOPED_TRACE("thread " + std::to_string(t) + " chunk " + std::to_string(c));
      EXPECT_EQ(record.dataset(), "dataset_" + std::to_string(t));
      EXPECT_EQ(record.entry_start(), c);
      EXPECT_EQ(record.status(), v1::CHUNK_STATUS_OK);
      const int64_t entries = t + 1;
      EXPECT_EQ(record.compressed_bytes_read(), entries * (1000 * (t + 1) + c));
      EXPECT_EQ(record.uncompressed_bytes_read(), entries);
      ASSERT_EQ(record.sections_size(), 2);  // one timer and one bytes section, nobody else's
      for (const v1::SectionRecord& section : record.sections()) {
        EXPECT_EQ(section.name(), kSectionNames[t].c_str());
        EXPECT_EQ(section.entries(), static_cast<uint32_t>(entries));
        if (section.kind() == v1::SectionRecord::KIND_BYTES) {
          EXPECT_EQ(section.bytes_read(), entries * (1000 * (t + 1) + c));
        }
      }
      EXPECT_EQ(record.thread_index(), records[t][0].thread_index());
    }
    thread_indices.push_back(records[t][0].thread_index());
  }
  for (int a = 0; a < kThreads; ++a) {
    for (int b = a + 1; b < kThreads; ++b) EXPECT_NE(thread_indices[a], thread_indices[b]);
  }
}

TEST(ChunkTrackingMultithreadedTest, SharedWrappedProcessorOnManyThreads) {
  const auto tracked = TrackChunks([](const ChunkMetadata& metadata) {
    ScopedTimer timer("process");
    return metadata.events;
  });
  std::vector<TrackedOutput<int64_t>> partials(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &tracked, &partials] {
      for (int c = 0; c < kChunksPerThread; ++c) {
        partials[t] += tracked(ChunkMetadata{"d", "f", "u", 0, t + 1, t + 1});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  TrackedOutput<int64_t> total;
  for (auto& partial : partials) total += std::move(partial);
  EXPECT_EQ(total.output, kChunksPerThread * (1 + 2 + 3 + 4));
  ASSERT_EQ(total.chunk_records.size(), static_cast<size_t>(kThreads * kChunksPerThread));
  for (const v1::ChunkRecord& record : total.chunk_records) {
    ASSERT_EQ(record.sections_size(), 1);
    EXPECT_EQ(record.sections(0).entries(), 1u);
  }
}

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Pins the calling thread, and so the threads it starts afterwards, to one CPU of its current
// mask; restores the mask when destroyed.
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() {
    if (sched_getaffinity(0, sizeof(original_), &original_) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &original_)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
      return;
    }
  }
  ~PinnedToOneCpu() {
    if (pinned_) sched_setaffinity(0, sizeof(original_), &original_);
  }
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t original_;
  bool pinned_ = false;
};

TEST(ChunkTrackingMultithreadedTest, OversubscribedChunksWaitForTheCpu) {
  if (!instrumentation_internal::ReadThreadSchedstat().available) {
    GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  }
  constexpr int kBusyThreads = 3;
  constexpr int64_t kBusyNs = 200'000'000;
  std::vector<v1::ChunkRecord> records(kBusyThreads);
  {
    PinnedToOneCpu pin;
    if (!pin.pinned()) GTEST_SKIP() << "sched_setaffinity is not allowed here";
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kBusyThreads; ++t) {
      threads.emplace_back([t, &records, &ready] {
        ready.fetch_add(1);
        while (ready.load() < kBusyThreads) std::this_thread::yield();
        records[t] = TrackChunk(ChunkMetadata{}, [] {
          const int64_t start = ThreadCpuNs();
          while (ThreadCpuNs() - start < kBusyNs) {
          }
        });
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  for (int t = 0; t < kBusyThreads; ++t) {
    SCOPED_TRACE("thread " + std::to_string(t));
    const v1::ChunkRecord& record = records[t];
    ASSERT_TRUE(record.has_run_queue_wait_seconds());
    const double duration = record.duration_seconds();
    const double cpu = record.cpu_seconds();
    const double wait = record.run_queue_wait_seconds();
    EXPECT_GE(cpu, kBusyNs * 1e-9);
    // Three threads share one CPU: each waits for about two thirds of its chunk (more if other
    // jobs share that CPU too). The last one to finish runs alone for a while.
    EXPECT_GT(wait, 0.3 * duration) << "cpu " << cpu << " duration " << duration;
    // Nothing blocks: CPU and waiting make up the chunk. Steal time (a VM's host running
    // something else) counts as neither, hence the generous bound.
    const double blocked = duration - cpu - wait;
    EXPECT_GT(blocked, -0.02 * duration - 0.005) << "cpu " << cpu << " wait " << wait;
    EXPECT_LT(blocked, 0.25 * duration) << "cpu " << cpu << " wait " << wait;
  }
}

}  // namespace
}  // namespace roastcoffea
