#include "tools/workqueue/chunk_task.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {
namespace workqueue {
namespace {

using ::testing::HasSubstr;

// A task's chunks give what the processor gives them directly, with one tracked record each.
TEST(ChunkTaskTest, SameOutputAsTheProcessorAndOneRecordPerChunk) {
  sample_analysis::SampleDatasetSpec spec;
  spec.events_per_file = 3000;
  spec.files_per_dataset = 1;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(spec, std::getenv("TEST_TMPDIR"));
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  absl::StatusOr<std::vector<sample_analysis::WorkItem>> items =
      sample_analysis::MakeChunks(*dataset, 1000);
  ASSERT_TRUE(items.ok());
  std::vector<TaskChunk> chunks;
  sample_analysis::DijetOutput expected;
  const sample_analysis::DijetProcessor processor;
  for (const sample_analysis::WorkItem& item : *items) {
    chunks.push_back(
        {item.dataset, item.file, "/recorded/" + item.dataset, item.entry_start, item.entry_stop});
    expected += processor(item);
  }
  chunks.push_back({"qcd", "/nonexistent.rcol", "/recorded/missing", 0, 10});

  const ChunkTaskOutput output = RunChunkTask(chunks);
  EXPECT_EQ(output.output.mjj, expected.mjj);
  EXPECT_EQ(output.output.events_selected, expected.events_selected);
  EXPECT_EQ(output.output.events_processed, expected.events_processed);
  ASSERT_EQ(output.chunk_records.size(), chunks.size());
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    const v1::ChunkRecord& record = output.chunk_records[i];
    EXPECT_EQ(record.status(), v1::CHUNK_STATUS_OK) << record.error_text();
    EXPECT_EQ(record.file(), chunks[i].file);
    EXPECT_EQ(record.uuid(),
              absl::StrCat(chunks[i].file, ":", chunks[i].entry_start, "-", chunks[i].entry_stop));
    EXPECT_EQ(record.events(), chunks[i].entry_stop - chunks[i].entry_start);
    EXPECT_FALSE(record.sections().empty());
  }
  const v1::ChunkRecord& failed = output.chunk_records.back();
  EXPECT_EQ(failed.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_THAT(failed.error_text(), HasSubstr("nonexistent"));
}

}  // namespace
}  // namespace workqueue
}  // namespace roastcoffea
