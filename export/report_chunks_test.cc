#include "export/report_chunks.h"

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::ChunkRecord Record(int64_t start, const std::string& dataset, bool failed) {
  v1::ChunkRecord record;
  record.set_start_unix_ns(start);
  record.set_end_unix_ns(start + 10);
  record.set_dataset(dataset);
  record.set_worker("w1");
  record.set_duration_seconds(1.5);
  record.set_events(100);
  record.set_compressed_bytes_read(7);
  record.set_uncompressed_bytes_read(9);
  record.set_accessed_bytes(5);
  record.add_accessed_branches("a");
  record.add_accessed_branches("b");
  if (failed) record.set_status(v1::CHUNK_STATUS_FAILED);
  return record;
}

TEST(ReportChunksTest, KeepsTheNumbersThePlotsReadAndInternsNames) {
  ReportChunks chunks;
  chunks.Add(Record(100, "ttbar", false));
  chunks.Add(Record(200, "zjets", true));
  chunks.Add(Record(300, "ttbar", false));
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_FALSE(chunks.failed(0));
  EXPECT_TRUE(chunks.failed(1));
  EXPECT_EQ(chunks.dataset(2), "ttbar");
  EXPECT_EQ(chunks.dataset(1), "zjets");
  EXPECT_EQ(chunks.timeline().dataset_names().size(), 2u);
  EXPECT_EQ(chunks.timeline().worker_names().size(), 1u);
  EXPECT_EQ(chunks.accessed_branches(0), 2);
  EXPECT_EQ(chunks.compressed_bytes_read(0), 7);
  EXPECT_EQ(chunks.uncompressed_bytes_read(0), 9);
  EXPECT_EQ(chunks.accessed_bytes(0), 5);
  EXPECT_EQ(chunks.events(0), 100);
  EXPECT_DOUBLE_EQ(chunks.duration_seconds(0), 1.5);
  EXPECT_EQ(chunks.timeline().chunks()[2].start_unix_ns, 300);
  ASSERT_NE(chunks.record(1), nullptr);
  EXPECT_EQ(chunks.record(1)->dataset(), "zjets");
}

TEST(ReportChunksTest, WholeRecordsOnlyForTimedChunksUpToTheGanttLimit) {
  ReportChunks chunks;
  chunks.Add(Record(0, "untimed", false));  // no start: never drawn
  for (size_t i = 0; i < kMaxGanttChunks; ++i) chunks.Add(Record(1000 + i, "d", false));
  EXPECT_EQ(chunks.record(0), nullptr);
  ASSERT_NE(chunks.record(kMaxGanttChunks), nullptr);
  EXPECT_EQ(chunks.record(kMaxGanttChunks)->start_unix_ns(),
            static_cast<int64_t>(1000 + kMaxGanttChunks - 1));
  chunks.Add(Record(5, "d", false));  // one timed chunk too many: drawn in time bins instead
  EXPECT_EQ(chunks.record(1), nullptr);
  EXPECT_EQ(chunks.size(), kMaxGanttChunks + 2);
}

}  // namespace
}  // namespace roastcoffea
