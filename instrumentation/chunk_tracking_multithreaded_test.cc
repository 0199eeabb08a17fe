// Several threads tracking chunks at the same time: each keeps its own current chunk, sections
// and byte counters (the original kept them on the shared processor and raced).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int kThreads = 4;
constexpr int kChunksPerThread = 20;
const char* const kSectionNames[kThreads] = {"thread_0", "thread_1", "thread_2", "thread_3"};

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
        EXPECT_EQ(section.name(), kSectionNames[t]);
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

}  // namespace
}  // namespace roastcoffea
