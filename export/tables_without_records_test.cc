// `collect show` loads a measurement without its chunk records (store's LoadOptions): its tables,
// findings and flat metrics must read the same from the aggregated metrics alone.
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "export/flat_formats.h"
#include "export/tables.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
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

  TableOptions options;
  options.width = 100;
  EXPECT_EQ(FormatSummaryTables(*loaded, options), FormatSummaryTables(full, options));
  EXPECT_EQ(FormatFindings(*loaded, options), FormatFindings(full, options));
  for (FlatFormat format : {FlatFormat::kCsv, FlatFormat::kJson, FlatFormat::kMarkdown}) {
    EXPECT_EQ(FormatFlatMetrics(*loaded, format), FormatFlatMetrics(full, format));
  }
}

}  // namespace
}  // namespace roastcoffea
