#include "aggregation/report_from_chunks.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

v1::ChunkRecord Chunk(const char* dataset, int64_t events, int64_t bytes, double seconds,
                      bool failed = false) {
  v1::ChunkRecord chunk;
  chunk.set_dataset(dataset);
  chunk.set_events(events);
  chunk.set_compressed_bytes_read(bytes);
  chunk.set_uncompressed_bytes_read(3 * bytes);
  chunk.set_duration_seconds(seconds);
  chunk.set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  return chunk;
}

TEST(BuildWorkflowReportTest, SumsChunksPerDatasetInOrderOfAppearance) {
  const v1::WorkflowReport report = BuildWorkflowReport(
      {Chunk("qcd", 100, 1000, 0.5), Chunk("signal", 10, 200, 0.25), Chunk("qcd", 50, 500, 1.0)});
  EXPECT_EQ(report.events(), 160);
  EXPECT_EQ(report.compressed_bytes_read(), 1700);
  EXPECT_EQ(report.uncompressed_bytes_read(), 5100);
  EXPECT_DOUBLE_EQ(report.process_time_seconds(), 1.75);
  EXPECT_EQ(report.chunks(), 3);
  ASSERT_EQ(report.datasets_size(), 2);
  EXPECT_EQ(report.datasets(0).dataset(), "qcd");
  EXPECT_EQ(report.datasets(0).events(), 150);
  EXPECT_EQ(report.datasets(0).chunks(), 2);
  EXPECT_EQ(report.datasets(1).dataset(), "signal");
  EXPECT_EQ(report.datasets(1).compressed_bytes_read(), 200);
}

TEST(BuildWorkflowReportTest, TheSameOverAMeasurementsRecords) {
  const std::vector<v1::ChunkRecord> records = {Chunk("qcd", 100, 1000, 0.5),
                                                Chunk("signal", 0, 200, 0.25, true),
                                                Chunk("qcd", 50, 500, 1.0)};
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord> in_measurement(records.begin(),
                                                                           records.end());
  EXPECT_EQ(BuildWorkflowReportOfRecords(in_measurement).SerializeAsString(),
            BuildWorkflowReport(records).SerializeAsString());
  EXPECT_EQ(BuildWorkflowReportOfRecords(in_measurement).chunks(), 3);
}

// The table form counts exactly what the records form counts: invalid records (a bad
// section kind, a NaN duration, end before start, negative events) left out, failed ones
// without their events, datasets in order of first appearance.
TEST(BuildWorkflowReportTest, TheSameOverATable) {
  std::vector<v1::ChunkRecord> records;
  const char* datasets[] = {"qcd", "signal", "", "ttbar"};
  for (int i = 0; i < 200; ++i) {
    v1::ChunkRecord chunk = Chunk(datasets[(i * 7) % 4], i % 5 == 0 ? 0 : i * 10, i * 100, 0.01 * i,
                                  /*failed=*/i % 9 == 0);
    chunk.set_start_unix_ns(1000 + i);
    chunk.set_end_unix_ns(i % 31 == 3 ? 999 : 2000 + i);  // some end before they start
    if (i % 17 == 2) chunk.set_events(-i);
    if (i % 23 == 4) chunk.set_duration_seconds(std::nan(""));
    if (i % 29 == 5) chunk.add_sections()->set_kind(static_cast<v1::SectionRecord::Kind>(99));
    records.push_back(chunk);
  }
  const v1::WorkflowReport expected = BuildWorkflowReport(records);
  ASSERT_GT(expected.chunks(), 100);
  ASSERT_LT(expected.chunks(), 200);
  EXPECT_EQ(BuildWorkflowReportOfRecords(ChunkTableOf(records)).SerializeAsString(),
            expected.SerializeAsString());
  // Without events anywhere: unknown in both.
  for (v1::ChunkRecord& chunk : records) chunk.clear_events();
  EXPECT_EQ(BuildWorkflowReportOfRecords(ChunkTableOf(records)).SerializeAsString(),
            BuildWorkflowReport(records).SerializeAsString());
  EXPECT_EQ(BuildWorkflowReportOfRecords(ChunkTable()).SerializeAsString(),
            BuildWorkflowReport({}).SerializeAsString());
}

// Runs of records of one dataset (a table's records then view one pool entry), a dataset
// that comes back after another, and an invalid record inside a run: counted as the records
// form counts them.
TEST(BuildWorkflowReportTest, RunsOfOneDatasetInATable) {
  std::vector<v1::ChunkRecord> records;
  const char* datasets[] = {"qcd", "qcd", "qcd", "signal", "signal", "qcd", "", "", "signal"};
  int64_t i = 0;
  for (const char* dataset : datasets) {
    v1::ChunkRecord chunk = Chunk(dataset, 10 + i, 100 * i, 0.5 * i);
    if (i == 1) chunk.set_events(-1);  // invalid: left out of its run
    records.push_back(chunk);
    ++i;
  }
  const v1::WorkflowReport expected = BuildWorkflowReport(records);
  ASSERT_EQ(expected.datasets_size(), 3);
  EXPECT_EQ(expected.datasets(0).chunks(), 3);
  EXPECT_EQ(expected.datasets(1).chunks(), 3);
  EXPECT_EQ(expected.datasets(2).chunks(), 2);
  EXPECT_EQ(BuildWorkflowReportOfRecords(ChunkTableOf(records)).SerializeAsString(),
            expected.SerializeAsString());
}

TEST(BuildWorkflowReportTest, FailedChunksCountTheirCostButNotTheirEvents) {
  const v1::WorkflowReport report =
      BuildWorkflowReport({Chunk("qcd", 100, 1000, 0.5), Chunk("qcd", 100, 400, 0.1, true)});
  EXPECT_EQ(report.events(), 100);
  EXPECT_EQ(report.compressed_bytes_read(), 1400);
  EXPECT_DOUBLE_EQ(report.process_time_seconds(), 0.6);
  EXPECT_EQ(report.chunks(), 2);
}

// The reliability study's D2: a record that ends before it starts is rejected from the
// figures with a warning; its events and bytes must not reach the report either.
TEST(BuildWorkflowReportTest, ImpossibleRecordsAreNotCounted) {
  v1::ChunkRecord backwards = Chunk("qcd", 777, 5555, -1);
  v1::ChunkRecord negative_events = Chunk("qcd", -5, 10, 0.5);
  const v1::WorkflowReport report =
      BuildWorkflowReport({Chunk("qcd", 100, 1000, 0.5), backwards, negative_events});
  EXPECT_EQ(report.events(), 100);
  EXPECT_EQ(report.compressed_bytes_read(), 1000);
  EXPECT_DOUBLE_EQ(report.process_time_seconds(), 0.5);
  EXPECT_EQ(report.chunks(), 1);
  const v1::WorkflowReport only_bad = BuildWorkflowReport({backwards});
  EXPECT_FALSE(only_bad.has_events());
  EXPECT_FALSE(only_bad.has_compressed_bytes_read());
  EXPECT_EQ(only_bad.chunks(), 0);
}

TEST(BuildWorkflowReportTest, NoChunksReportsNothingKnown) {
  const v1::WorkflowReport report = BuildWorkflowReport({});
  EXPECT_FALSE(report.has_events());
  EXPECT_FALSE(report.has_compressed_bytes_read());
  EXPECT_EQ(report.chunks(), 0);
}

TEST(BuildWorkflowReportTest, RecordsWithoutEventsOrBytesLeaveThemUnknown) {
  // TaskVine tasks: durations, no events, no bytes. Unknown, never "0 events, 0 Gbps".
  const v1::WorkflowReport report =
      BuildWorkflowReport({Chunk("a", 0, 0, 1.5), Chunk("b", 0, 0, 2.5)});
  EXPECT_FALSE(report.has_events());
  EXPECT_FALSE(report.has_compressed_bytes_read());
  EXPECT_EQ(report.datasets_size(), 0);
  EXPECT_DOUBLE_EQ(report.process_time_seconds(), 4.0);
  EXPECT_EQ(report.chunks(), 2);
}

}  // namespace
}  // namespace roastcoffea
