#include "tools/coffea_json.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

TEST(ParseCoffeaReportTest, ReadsEveryField) {
  absl::StatusOr<v1::WorkflowReport> report = ParseCoffeaReport(
      R"({"bytesread": 10000000000, "columns": ["Jet_pt", "nJet"], "entries": 1000000,
          "processtime": 100.5, "chunks": 50})",
      "report.json");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->compressed_bytes_read(), 10000000000);
  EXPECT_EQ(report->events(), 1000000);
  EXPECT_DOUBLE_EQ(report->process_time_seconds(), 100.5);
  EXPECT_EQ(report->chunks(), 50);
  ASSERT_EQ(report->columns_size(), 2);
  EXPECT_EQ(report->columns(1), "nJet");
}

TEST(ParseCoffeaReportTest, AbsentKeysStayAbsent) {
  absl::StatusOr<v1::WorkflowReport> report = ParseCoffeaReport(R"({"entries": 5})", "r");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->events(), 5);
  EXPECT_FALSE(report->has_compressed_bytes_read());
  EXPECT_FALSE(report->has_process_time_seconds());
}

TEST(ParseCoffeaReportTest, BadInputNamesTheSourceAndKey) {
  absl::StatusOr<v1::WorkflowReport> report = ParseCoffeaReport("{nope", "out/report.json");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("out/report.json"));
  report = ParseCoffeaReport(R"({"entries": "many"})", "r.json");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("'entries'"));
  report = ParseCoffeaReport("[1, 2]", "r.json");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("JSON object"));
}

TEST(ParseChunkRecordsTest, ReadsTheOriginalFormat) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = ParseChunkRecords(
      R"([{"t_start": 1700000000.25, "t_end": 1700000001.75, "duration": 1.5,
           "mem_before_mb": 100.0, "mem_after_mb": 110.5, "mem_delta_mb": 10.5,
           "bytes_read": 2500, "num_events": 1000, "dataset": "TTbar", "file": "a.root",
           "uuid": "u-1", "entry_start": 0, "entry_stop": 1000,
           "accessed_branches": ["Jet_pt", "Muon_pt"], "accessed_bytes": 1500,
           "timing": {"jets": 0.5}, "memory": {"jets": 2.0}, "bytes": {"jets": 1000},
           "file_metadata": {"filename": "a.root", "compression_ratio": 0.4,
                             "total_branches": 100, "total_tree_bytes": 10000}},
          {"duration": 2.0, "num_events": 10, "dataset": "TTbar", "error": "boom"}])",
      "records.json");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  const v1::ChunkRecord& first = (*records)[0];
  EXPECT_EQ(first.start_unix_ns(), 1700000000250000000);
  EXPECT_EQ(first.end_unix_ns(), 1700000001750000000);
  EXPECT_DOUBLE_EQ(first.duration_seconds(), 1.5);
  EXPECT_EQ(first.memory_before_bytes(), 100 * 1024 * 1024);
  EXPECT_EQ(first.memory_after_bytes(), static_cast<int64_t>(110.5 * 1024 * 1024));
  EXPECT_EQ(first.compressed_bytes_read(), 2500);
  EXPECT_EQ(first.events(), 1000);
  EXPECT_EQ(first.dataset(), "TTbar");
  EXPECT_EQ(first.entry_stop(), 1000);
  EXPECT_EQ(first.status(), v1::CHUNK_STATUS_OK);
  ASSERT_EQ(first.accessed_branches_size(), 2);
  EXPECT_EQ(first.file_metadata().total_branches(), 100);
  EXPECT_DOUBLE_EQ(first.file_metadata().compression_ratio(), 0.4);
  ASSERT_EQ(first.sections_size(), 3);
  EXPECT_EQ(first.sections(0).kind(), v1::SectionRecord::KIND_TIME);
  EXPECT_DOUBLE_EQ(first.sections(0).duration_seconds(), 0.5);
  EXPECT_EQ(first.sections(1).memory_delta_bytes(), 2 * 1024 * 1024);
  EXPECT_EQ(first.sections(2).bytes_read(), 1000);
  EXPECT_EQ((*records)[1].status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ((*records)[1].error_text(), "boom");
}

TEST(ParseChunkRecordsTest, AcceptsTheProcessorOutputObject) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = ParseChunkRecords(
      R"({"histogram": [1, 2], "__roastcoffea_metrics__": [{"num_events": 3}]})", "out.json");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].events(), 3);
}

TEST(ParseChunkRecordsTest, TaskIdIsAnIntegerOrAString) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = ParseChunkRecords(
      R"([{"task_id": 42}, {"task_id": "process-chunk-8f2a"}, {"num_events": 1}])", "r");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].task_id(), "42");
  EXPECT_EQ((*records)[1].task_id(), "process-chunk-8f2a");
  EXPECT_EQ((*records)[2].task_id(), "");
  records = ParseChunkRecords(R"([{"task_id": [1]}])", "r.json");
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("r.json: record 0: 'task_id'"));
}

TEST(ParseChunkRecordsTest, DurationFromStartAndEndWhenAbsent) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records =
      ParseChunkRecords(R"([{"t_start": 10.0, "t_end": 12.5}])", "r");
  ASSERT_TRUE(records.ok());
  EXPECT_DOUBLE_EQ((*records)[0].duration_seconds(), 2.5);
}

TEST(ParseChunkRecordsTest, BadRecordsNameTheSourceIndexAndKey) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records =
      ParseChunkRecords(R"([{"num_events": 1}, {"duration": "slow"}])", "records.json");
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("records.json: record 1"));
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("'duration'"));
  records = ParseChunkRecords(R"({"a": 1})", "records.json");
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("JSON list"));
  records = ParseChunkRecords(R"([{"timing": {"x": "fast"}}])", "records.json");
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("timing['x']"));
  records = ParseChunkRecords(R"([3])", "records.json");
  ASSERT_FALSE(records.ok());
  // Found by the legacy-measurement fuzzer: a time whose nanoseconds overflow int64.
  records = ParseChunkRecords(R"([{"t_start": 1e300}])", "records.json");
  ASSERT_FALSE(records.ok());
  EXPECT_THAT(std::string(records.status().message()), HasSubstr("'t_start'"));
  records = ParseChunkRecords(R"([{"t_end": -9.3e9}])", "records.json");
  ASSERT_FALSE(records.ok());
}

TEST(ReadFilesTest, MissingFileIsNotFound) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/absent.json";
  EXPECT_EQ(ReadCoffeaReport(path).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadChunkRecords(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadFilesTest, ReadsFromDisk) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/report.json";
  std::ofstream(path) << R"({"entries": 7, "bytesread": 9})";
  absl::StatusOr<v1::WorkflowReport> report = ReadCoffeaReport(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->events(), 7);
}

}  // namespace
}  // namespace roastcoffea
