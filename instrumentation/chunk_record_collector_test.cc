#include "instrumentation/chunk_record_collector.h"

#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"

namespace roastcoffea {
namespace {

ChunkMetadata Chunk(int thread, int index) {
  ChunkMetadata metadata;
  metadata.dataset = "ds" + std::to_string(thread);
  metadata.file = "file" + std::to_string(index) + ".root";
  metadata.uuid = std::to_string(thread) + "/" + std::to_string(index);
  metadata.entry_start = index * 100;
  metadata.entry_stop = index * 100 + 100;
  metadata.events = 100;
  return metadata;
}

TEST(ChunkRecordCollectorTest, AddTakeAndSize) {
  ChunkRecordCollector collector;
  EXPECT_EQ(collector.size(), 0u);
  v1::ChunkRecord record;
  record.set_uuid("a");
  collector.Add(record);
  record.set_uuid("b");
  collector.Add(record);
  EXPECT_EQ(collector.size(), 2u);
  std::vector<v1::ChunkRecord> taken = collector.Take();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].uuid(), "a");  // one thread: in the order added
  EXPECT_EQ(taken[1].uuid(), "b");
  EXPECT_EQ(collector.size(), 0u);
  EXPECT_TRUE(collector.Take().empty());
}

// Records from many threads at once are all present, each with its own metadata and sections,
// and the output type is untouched.
TEST(ChunkRecordCollectorTest, TrackChunksIntoFromEightThreads) {
  constexpr int kThreads = 8;
  constexpr int kChunksPerThread = 200;
  ChunkRecordCollector collector;
  const auto tracked = TrackChunksInto(
      [](const ChunkMetadata& metadata) {
        ScopedTimer timer("work");
        RecordBytesRead(metadata.events, 2 * metadata.events);
        if (metadata.entry_start == 700) throw std::runtime_error("corrupt " + metadata.file);
        return static_cast<int>(metadata.events);
      },
      &collector);
  std::vector<long> sums(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kChunksPerThread; ++i) sums[t] += tracked(Chunk(t, i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (long sum : sums) EXPECT_EQ(sum, (kChunksPerThread - 1) * 100);  // chunk 7 failed: 0

  const std::vector<v1::ChunkRecord> records = collector.Take();
  ASSERT_EQ(records.size(), static_cast<size_t>(kThreads * kChunksPerThread));
  std::set<std::string> uuids;
  std::set<int64_t> thread_indices;
  int failed = 0;
  for (const v1::ChunkRecord& record : records) {
    uuids.insert(record.uuid());
    thread_indices.insert(record.thread_index());
    const std::string thread = record.uuid().substr(0, record.uuid().find('/'));
    EXPECT_EQ(record.dataset(), "ds" + thread);
    EXPECT_EQ(record.entry_stop() - record.entry_start(), 100);
    EXPECT_EQ(record.compressed_bytes_read(), 100);
    EXPECT_EQ(record.uncompressed_bytes_read(), 200);
    ASSERT_EQ(record.sections_size(), 1);
    EXPECT_EQ(record.sections(0).entries(), 1u);
    ASSERT_EQ(record.slices_size(), 1);
    if (record.status() == v1::CHUNK_STATUS_FAILED) {
      ++failed;
      EXPECT_EQ(record.entry_start(), 700);
      EXPECT_EQ(record.error_text(), "corrupt " + record.file());
    } else {
      EXPECT_EQ(record.status(), v1::CHUNK_STATUS_OK);
    }
  }
  EXPECT_EQ(uuids.size(), records.size());
  EXPECT_EQ(thread_indices.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(failed, kThreads);
}

TEST(ChunkRecordCollectorTest, StopPolicyKeepsTheFailedRecordAndThrows) {
  ChunkRecordCollector collector;
  ChunkTrackingOptions options;
  options.failure_policy = FailurePolicy::kStop;
  const auto tracked = TrackChunksInto(
      [](const ChunkMetadata& metadata) -> int {
        if (metadata.entry_start > 0) throw std::runtime_error("stop here");
        return 1;
      },
      &collector, options);
  EXPECT_EQ(tracked(Chunk(0, 0)), 1);
  EXPECT_THROW(tracked(Chunk(0, 3)), ChunkFailedError);
  const std::vector<v1::ChunkRecord> records = collector.Take();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(records[1].error_text(), "stop here");
  EXPECT_EQ(records[1].entry_start(), 300);
}

// A sink of the user's own: TrackChunksInto takes any ChunkRecordSink.
class CountingSink : public ChunkRecordSink {
 public:
  void Add(v1::ChunkRecord record) override {
    ++added;
    last_uuid = record.uuid();
  }
  int added = 0;
  std::string last_uuid;
};

TEST(ChunkRecordSinkTest, TrackChunksIntoFeedsAnySink) {
  CountingSink sink;
  const auto tracked = TrackChunksInto([](const ChunkMetadata&) { return 7; }, &sink);
  EXPECT_EQ(tracked(Chunk(0, 1)), 7);
  EXPECT_EQ(tracked(Chunk(0, 2)), 7);
  EXPECT_EQ(sink.added, 2);
  EXPECT_EQ(sink.last_uuid, "0/2");
  // The collector is one such sink.
  ChunkRecordCollector collector;
  ChunkRecordSink& as_sink = collector;
  as_sink.Add(v1::ChunkRecord());
  EXPECT_EQ(collector.size(), 1u);
}

}  // namespace
}  // namespace roastcoffea
