// `collect show` loads a measurement without its chunk records (store's LoadOptions), and for
// its tables without the metrics' chunk_info: what it prints must read the same.
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "export/flat_formats.h"
#include "export/tables.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

TEST(TablesWithoutRecordsTest, ShowPrintsTheSameWithoutTheChunkRecords) {
  const v1::Measurement full = testing_export::RichMeasurement();
  ASSERT_GT(full.chunks_size(), 0);
  ASSERT_TRUE(full.has_metrics());
  absl::StatusOr<std::string> saved = SaveMeasurement(full, std::getenv("TEST_TMPDIR"), "rich");
  ASSERT_TRUE(saved.ok()) << saved.status();
  LoadOptions without_records;
  without_records.chunk_records = false;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved, without_records);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->chunks_size(), 0);

  for (FlatFormat format : {FlatFormat::kCsv, FlatFormat::kJson, FlatFormat::kMarkdown}) {
    EXPECT_EQ(FormatFlatMetrics(*loaded, format), FormatFlatMetrics(full, format));
  }
  // The tables need not even the metrics' per-record chunk_info.
  without_records.chunk_info = false;
  loaded = LoadMeasurement(*saved, without_records);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_GT(ChunkInfoSize(full.metrics().chunks()), 0u);
  ASSERT_EQ(ChunkInfoSize(loaded->metrics().chunks()), 0u);
  TableOptions options;
  options.width = 100;
  EXPECT_EQ(FormatSummaryTables(*loaded, options), FormatSummaryTables(full, options));
  EXPECT_EQ(FormatFindings(*loaded, options), FormatFindings(full, options));
}

}  // namespace
}  // namespace roastcoffea
