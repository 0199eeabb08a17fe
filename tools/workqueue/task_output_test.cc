#include "tools/workqueue/task_output.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace workqueue {
namespace {

ChunkTaskOutput Example() {
  ChunkTaskOutput output;
  sample_analysis::DijetOutput& dijet = output.output;
  absl::StatusOr<sample_analysis::Histogram> mjj = sample_analysis::Histogram::Create(10, 0, 100);
  EXPECT_TRUE(mjj.ok());
  for (double x : {-5.0, 1.0, 55.5, 55.6, 99.9, 1e9}) mjj->Fill(x);
  dijet.mjj = *mjj;
  dijet.mjj_by_dataset["signal"] = *mjj;
  dijet.events_processed = 1000;
  dijet.events_selected = 6;
  dijet.datasets["signal"] = {1, 1000, 6, 12345, 67890};
  dijet.io_time = absl::Nanoseconds(123456789);
  dijet.decompress_time = absl::Nanoseconds(987);
  v1::ChunkRecord& record = output.chunk_records.emplace_back();
  record.set_file("/data/signal_0.rcol");
  record.set_entry_stop(1000);
  record.set_status(v1::CHUNK_STATUS_FAILED);
  record.set_error_text("boom");
  return output;
}

TEST(TaskOutputTest, RoundTripsExactly) {
  const ChunkTaskOutput original = Example();
  absl::StatusOr<ChunkTaskOutput> decoded = DecodeTaskOutput(EncodeTaskOutput(original), "x");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->output.mjj, original.output.mjj);
  EXPECT_EQ(decoded->output.mjj_by_dataset.at("signal"), original.output.mjj);
  EXPECT_EQ(decoded->output.events_processed, 1000);
  EXPECT_EQ(decoded->output.events_selected, 6);
  EXPECT_EQ(decoded->output.datasets.at("signal").compressed_bytes_read, 12345);
  EXPECT_EQ(decoded->output.datasets.at("signal").uncompressed_bytes_read, 67890);
  EXPECT_EQ(decoded->output.io_time, absl::Nanoseconds(123456789));
  EXPECT_EQ(decoded->output.decompress_time, absl::Nanoseconds(987));
  ASSERT_EQ(decoded->chunk_records.size(), 1u);
  EXPECT_EQ(decoded->chunk_records[0].error_text(), "boom");
}

TEST(TaskOutputTest, EmptyOutputStaysEmpty) {
  absl::StatusOr<ChunkTaskOutput> decoded = DecodeTaskOutput(EncodeTaskOutput({}), "x");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(decoded->output.mjj.empty_binning());
}

TEST(TaskOutputTest, GarbageAndMissingFilesAreNamedErrors) {
  absl::StatusOr<ChunkTaskOutput> garbage = DecodeTaskOutput("\xff\xff\xff", "out.pb");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(garbage.status().message().find("out.pb"), std::string::npos);
  EXPECT_EQ(ReadTaskOutputFile("/nonexistent/out.pb").status().code(), absl::StatusCode::kNotFound);
}

TEST(TaskOutputTest, WritesAndReadsAFile) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/out.pb";
  ASSERT_TRUE(WriteTaskOutputFile(Example(), path).ok());
  absl::StatusOr<ChunkTaskOutput> read = ReadTaskOutputFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->output.mjj, Example().output.mjj);
}

}  // namespace
}  // namespace workqueue
}  // namespace roastcoffea
