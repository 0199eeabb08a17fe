// The failed_chunks rule's count (findings_failed_chunks.h), over the chunk columns the findings
// read: which failed records a successful record of the same file and entry range recovers,
// including the candidates its integer prefilter lets through (same range) that are still
// another chunk.
#include "aggregation/findings_failed_chunks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "aggregation/chunk_columns.h"
#include "aggregation/findings_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

using ::testing::HasSubstr;

v1::ChunkRecord Record(const std::string& file, int64_t start, int64_t stop, bool failed) {
  v1::ChunkRecord chunk;
  chunk.set_file(file);
  chunk.set_entry_start(start);
  chunk.set_entry_stop(stop);
  chunk.set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  if (failed) chunk.set_error_text("OSError: XRootD timeout\nTraceback");
  return chunk;
}

// The records as the findings hold them: in a repeated field, with their columns, failed and
// successful ones apart (as record indices and, for the finding's text, failed records).
class Split {
 public:
  explicit Split(const std::vector<v1::ChunkRecord>& records)
      : records_(records.begin(), records.end()), columns_(ColumnsOf(records_)) {
    for (uint32_t i = 0; i < static_cast<uint32_t>(records_.size()); ++i) {
      if (columns_.failed(i)) {
        failed_index_.push_back(i);
        failed_.push_back(&records_[static_cast<int>(i)]);
      } else {
        successful_.push_back(i);
      }
    }
  }
  Split(const Split&) = delete;  // the columns point at records_
  Split& operator=(const Split&) = delete;

  FailedChunkCounts Count() const {
    return CountFailedChunks(columns_, failed_index_, successful_);
  }
  const std::vector<const v1::ChunkRecord*>& failed() const { return failed_; }

 private:
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord> records_;
  const ChunkColumns columns_;
  std::vector<uint32_t> failed_index_, successful_;
  std::vector<const v1::ChunkRecord*> failed_;
};

FailedChunkCounts Count(const std::vector<v1::ChunkRecord>& records) {
  return Split(records).Count();
}

TEST(CountFailedChunksTest, NothingFailedCountsNothing) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, false), Record("/d/b.root", 0, 100, false)});
  EXPECT_EQ(counts.missing, 0);
  EXPECT_EQ(counts.recovered, 0);
  EXPECT_EQ(counts.unnamed, 0);
}

TEST(CountFailedChunksTest, AllFailedAreMissing) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, true), Record("/d/a.root", 100, 200, true),
             Record("", 0, 0, true)});
  EXPECT_EQ(counts.missing, 2);
  EXPECT_EQ(counts.recovered, 0);
  EXPECT_EQ(counts.unnamed, 1);
}

TEST(CountFailedChunksTest, RerunOfTheSameChunkRecoversIt) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, true), Record("/d/a.root", 0, 100, false)});
  EXPECT_EQ(counts.missing, 0);
  EXPECT_EQ(counts.recovered, 1);
}

// Another file (one of the same name length too) with the same entry range passes the integer
// prefilter but is another chunk.
TEST(CountFailedChunksTest, SameRangeInAnotherFileDoesNotRecover) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, true), Record("/d/b.root", 0, 100, false),
             Record("/d/aa.root", 0, 100, false)});
  EXPECT_EQ(counts.missing, 1);
  EXPECT_EQ(counts.recovered, 0);
}

TEST(CountFailedChunksTest, OverlappingRangeOfTheSameFileDoesNotRecover) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, true), Record("/d/a.root", 0, 50, false),
             Record("/d/a.root", 50, 100, false), Record("/d/a.root", 0, 101, false)});
  EXPECT_EQ(counts.missing, 1);
  EXPECT_EQ(counts.recovered, 0);
}

// Two failed attempts of one chunk and one rerun: both attempts were rerun.
TEST(CountFailedChunksTest, OneRerunRecoversEveryFailedAttemptOfItsChunk) {
  const FailedChunkCounts counts =
      Count({Record("/d/a.root", 0, 100, true), Record("/d/a.root", 0, 100, true),
             Record("/d/a.root", 100, 200, true), Record("/d/a.root", 0, 100, false)});
  EXPECT_EQ(counts.recovered, 2);
  EXPECT_EQ(counts.missing, 1);
}

// A record without a file still names its chunk by its entry range.
TEST(CountFailedChunksTest, EntryRangeWithoutAFileNamesAChunk) {
  const FailedChunkCounts counts = Count({Record("", 0, 100, true), Record("", 0, 100, false),
                                          Record("", 5, 5, true), Record("", 5, 5, false)});
  EXPECT_EQ(counts.recovered, 1);
  EXPECT_EQ(counts.unnamed, 1);
  EXPECT_EQ(counts.missing, 0);
}

// Many failed ranges (more than the first look's bits tell apart): each still matched exactly.
TEST(CountFailedChunksTest, ManyFailedRangesEachMatchedExactly) {
  std::vector<v1::ChunkRecord> records;
  for (int i = 0; i < 20000; ++i) {
    records.push_back(Record("/d/a.root", int64_t{i} * 10, int64_t{i} * 10 + 10, true));
    // Every third is rerun; every fifth has a success of a neighbouring range only.
    if (i % 3 == 0) records.push_back(Record("/d/a.root", int64_t{i} * 10, i * 10 + 10, false));
    if (i % 5 == 0) records.push_back(Record("/d/a.root", int64_t{i} * 10, i * 10 + 9, false));
  }
  const FailedChunkCounts counts = Count(records);
  EXPECT_EQ(counts.recovered, 6667);
  EXPECT_EQ(counts.missing, 20000 - 6667);
}

TEST(AddFailedChunksFindingTest, AllFailedIsCriticalAndNamesTheFiles) {
  const std::vector<v1::ChunkRecord> records = {Record("/d/a.root", 0, 100, true),
                                                Record("/d/b.root", 0, 100, true)};
  const Split split(records);
  std::vector<v1::Finding> findings;
  Builder b(&findings);
  AddFailedChunksFinding(split.failed(), split.Count(), 2, b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity(), v1::Finding::SEVERITY_CRITICAL);
  EXPECT_EQ(findings[0].title(), "2 of 2 chunks failed: their events are missing from the result");
  EXPECT_THAT(
      findings[0].evidence(),
      HasSubstr("Failed in 2 files: a.root, b.root; first error: OSError: XRootD timeout."));
}

TEST(AddFailedChunksFindingTest, NoFailureAddsNothing) {
  const std::vector<v1::ChunkRecord> records = {Record("/d/a.root", 0, 100, false)};
  const Split split(records);
  std::vector<v1::Finding> findings;
  Builder b(&findings);
  AddFailedChunksFinding(split.failed(), split.Count(), 1, b);
  EXPECT_TRUE(findings.empty());
}

}  // namespace
}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea
