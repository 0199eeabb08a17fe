#include "aggregation/chunk_columns.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

absl::StatusOr<ChunkColumns> Build(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  return BuildChunkColumns(chunks, &branches, &sections);
}

TEST(ChunkColumnsTest, OneEntryPerRecordInTheRecordsOrder) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  v1::ChunkRecord* a = chunks.Add();
  a->set_file("f.root");
  a->set_dataset("");
  a->set_worker("tcp://h:1/thread-3");
  a->set_start_unix_ns(10);
  a->set_end_unix_ns(20);
  a->set_duration_seconds(1.5);
  a->set_memory_before_bytes(INT64_MAX);
  a->set_memory_after_bytes(INT64_MIN + 1);
  a->set_run_queue_wait_seconds(0.25);
  a->mutable_file_metadata()->set_total_tree_bytes(777);
  v1::ChunkRecord* b = chunks.Add();
  b->set_status(v1::CHUNK_STATUS_FAILED);
  b->set_dataset("D");
  b->set_worker("tcp://h:1/thread-0");
  b->set_peak_live_bytes(5);
  b->set_attempt(2);
  absl::StatusOr<ChunkColumns> c = Build(chunks);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ(c->records, &chunks);
  EXPECT_EQ(c->file[0], 0u);
  EXPECT_EQ(c->file[1], ChunkColumns::kNone);  // no file
  ASSERT_EQ(c->file_names.size(), 1u);
  EXPECT_EQ(c->file_names[0], "f.root");
  ASSERT_EQ(c->file_sizes.size(), 1u);
  EXPECT_EQ(c->file_sizes[0], 777);  // from file_metadata without file_bytes
  // "" is the original's "unknown"; a failed record names no dataset.
  ASSERT_EQ(c->dataset_names.size(), 1u);
  EXPECT_EQ(c->dataset_names[0], "unknown");
  EXPECT_EQ(c->dataset[1], ChunkColumns::kNone);
  // Threads of one process are one process.
  EXPECT_EQ(c->num_processes, 1u);
  EXPECT_EQ(c->process[0], c->process[1]);
  // The memory delta in double: no int64 overflow.
  EXPECT_DOUBLE_EQ(c->memory_delta_bytes[0], -static_cast<double>(INT64_MAX) * 2);
  EXPECT_EQ(c->flags[0], ChunkColumns::kMeasuredMemory | ChunkColumns::kHasRunQueueWait);
  EXPECT_EQ(c->flags[1], ChunkColumns::kFailed | ChunkColumns::kHasPeakLive);
  EXPECT_TRUE(c->failed(1));
  EXPECT_EQ(c->peak_live_bytes[1], 5);
  EXPECT_EQ(c->attempt[1], 2u);
  EXPECT_EQ(c->start_unix_ns[0], 10);
  EXPECT_EQ(c->end_unix_ns[0], 20);
  EXPECT_DOUBLE_EQ(c->duration_seconds[0], 1.5);
  EXPECT_DOUBLE_EQ(c->run_queue_wait_seconds[0], 0.25);
}

// Ids number names in order of first appearance, also past the few names compared without a
// hash table, and whatever order the records come in.
TEST(ChunkColumnsTest, ManyNamesKeepTheirIds) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  constexpr int kFiles = 50;
  for (int round = 0; round < 3; ++round) {
    for (int f = 0; f < kFiles; ++f) {
      const int file = round == 1 ? kFiles - 1 - f : f;  // the second round backwards
      v1::ChunkRecord* chunk = chunks.Add();
      chunk->set_file(absl::StrCat("root://x//f", file, ".root"));
      chunk->set_dataset(absl::StrCat("dataset", file % 20));
      chunk->set_worker(absl::StrCat("w", file % 11));
    }
  }
  absl::StatusOr<ChunkColumns> c = Build(chunks);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->file_names.size(), static_cast<size_t>(kFiles));
  ASSERT_EQ(c->dataset_names.size(), 20u);
  EXPECT_EQ(c->num_processes, 11u);
  for (int i = 0; i < chunks.size(); ++i) {
    const uint32_t file = c->file[static_cast<size_t>(i)];
    ASSERT_LT(file, c->file_names.size());
    EXPECT_EQ(c->file_names[file], chunks.Get(i).file());
    EXPECT_EQ(c->dataset_names[c->dataset[static_cast<size_t>(i)]], chunks.Get(i).dataset());
  }
  for (int f = 0; f < kFiles; ++f) {
    EXPECT_EQ(c->file_names[static_cast<size_t>(f)], absl::StrCat("root://x//f", f, ".root"));
  }
}

// Optional values are kept only from the first record that has one (zeros before it), and not
// at all when no record has them; a file's size is the largest its records state. The same
// from the records and from a table of them.
TEST(ChunkColumnsTest, OptionalColumnsAndFileSizes) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  for (int i = 0; i < 4; ++i) {
    v1::ChunkRecord* chunk = chunks.Add();
    chunk->set_file(i % 2 == 0 ? "even.root" : "odd.root");
    chunk->set_worker("w");
    chunk->set_duration_seconds(1);
    chunk->set_file_bytes(100 * (i + 1));
  }
  chunks.Mutable(2)->set_peak_live_bytes(7);
  chunks.Mutable(3)->set_peak_live_bytes(0);  // set, but 0
  chunks.Add()->set_worker("w");              // no file: no size
  ChunkTable table;
  for (const v1::ChunkRecord& record : chunks) table.Append(record);
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> from_table = BuildChunkColumns(table, &branches, &sections);
  ASSERT_TRUE(from_table.ok()) << from_table.status();
  absl::StatusOr<ChunkColumns> from_records = Build(chunks);
  ASSERT_TRUE(from_records.ok()) << from_records.status();
  for (const ChunkColumns* c : {&*from_records, &*from_table}) {
    ASSERT_EQ(c->size(), 5u);
    EXPECT_TRUE(c->run_queue_wait_seconds.empty());
    EXPECT_TRUE(c->memory_delta_bytes.empty());
    EXPECT_EQ(c->peak_live_bytes, (std::vector<int64_t>{0, 0, 7, 0, 0}));
    EXPECT_TRUE(c->has(3, ChunkColumns::kHasPeakLive));
    EXPECT_FALSE(c->has(4, ChunkColumns::kHasPeakLive));
    ASSERT_EQ(c->file_names, (std::vector<std::string>{"even.root", "odd.root"}));
    EXPECT_EQ(c->file_sizes, (std::vector<int64_t>{300, 400}));
  }
}

TEST(ChunkColumnsTest, AnInvalidRecordIsNamed) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  chunks.Add()->set_duration_seconds(1);
  v1::ChunkRecord* bad = chunks.Add();
  bad->set_uuid("u-7");
  bad->set_duration_seconds(-1);
  const absl::StatusOr<ChunkColumns> c = Build(chunks);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("chunks[1]"), std::string::npos) << c.status();
  EXPECT_NE(c.status().message().find("u-7"), std::string::npos) << c.status();
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
