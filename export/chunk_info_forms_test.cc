// The user-facing outputs read chunk_info the same in either form (#25): the columns Aggregate
// writes now and the one-message-per-entry form of measurements saved before them.
#include <string>
#include <vector>

#include "export/flat_formats.h"
#include "export/report_plots.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// `m` with its chunk_info as the old messages, rows in the same order.
v1::Measurement WithOldChunkInfo(const v1::Measurement& m) {
  v1::Measurement old = m;
  v1::ChunkMetrics& chunks = *old.mutable_metrics()->mutable_chunks();
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> entries;
  ForEachChunkInfo(chunks, [&](const ChunkInfoRow& row) {
    v1::ChunkInfo& info = *entries.Add();
    info.set_file(std::string(row.file));
    info.set_entry_start(row.entry_start);
    info.set_entry_stop(row.entry_stop);
    info.set_attempt(row.attempt);
    info.set_start_unix_ns(row.start_unix_ns);
    info.set_end_unix_ns(row.end_unix_ns);
    info.set_bytes_read(row.bytes_read);
  });
  ClearChunkInfo(&chunks);
  chunks.mutable_chunk_info()->Swap(&entries);
  return old;
}

TEST(ChunkInfoFormsTest, FlatFormatsAreTheSameFromColumnsAndFromOldMessages) {
  const v1::Measurement rich = testing_export::RichMeasurement();
  ASSERT_GT(rich.metrics().chunks().chunk_info_columns().file_index_size(), 0);
  ASSERT_EQ(rich.metrics().chunks().chunk_info_size(), 0);
  const v1::Measurement old = WithOldChunkInfo(rich);
  ASSERT_EQ(old.metrics().chunks().chunk_info_size(),
            rich.metrics().chunks().chunk_info_columns().file_index_size());
  for (FlatFormat format : {FlatFormat::kCsv, FlatFormat::kJson, FlatFormat::kMarkdown}) {
    EXPECT_EQ(FormatFlatMetrics(old, format), FormatFlatMetrics(rich, format));
  }
}

// Without chunk records the report's throughput comes from chunk_info.
TEST(ChunkInfoFormsTest, ReportPlotsFromChunkInfoAreTheSameInEitherForm) {
  v1::Measurement rich = testing_export::RichMeasurement();
  rich.clear_chunks();
  const v1::Measurement old = WithOldChunkInfo(rich);
  const std::vector<ReportPlot> from_columns = BuildReportPlots(rich);
  const std::vector<ReportPlot> from_messages = BuildReportPlots(old);
  ASSERT_FALSE(from_columns.empty());
  ASSERT_EQ(from_columns.size(), from_messages.size());
  bool throughput = false;
  for (size_t i = 0; i < from_columns.size(); ++i) {
    EXPECT_EQ(from_columns[i].id, from_messages[i].id);
    EXPECT_EQ(from_columns[i].svg, from_messages[i].svg) << from_columns[i].id;
    EXPECT_EQ(from_columns[i].note, from_messages[i].note) << from_columns[i].id;
    throughput = throughput || (from_columns[i].id == "throughput" && !from_columns[i].svg.empty());
  }
  EXPECT_TRUE(throughput);
}

}  // namespace
}  // namespace roastcoffea
