// Golden outputs: the flat formats, the summary tables and the comparison of fixed measurements,
// byte for byte. They pin every key, label, unit and number format, so that moving where a
// metric is described (aggregation/metric_catalogue.h) cannot change what users read.
// A changed output is written to $TEST_UNDECLARED_OUTPUTS_DIR under the golden file's name:
// review the diff, then copy it over export/testdata/golden/.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "export/compare.h"
#include "export/flat_formats.h"
#include "export/tables.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

std::string ReadGolden(const std::string& name) {
  std::ifstream in("export/testdata/golden/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  if (const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary) << actual;
  }
  EXPECT_EQ(actual, ReadGolden(name)) << "golden file export/testdata/golden/" << name;
}

// A run whose workers, CPU and fine metrics are unknown: absent keys and N/A cells.
v1::Measurement SparseMeasurement() {
  v1::Measurement run = testing_export::RichMeasurement();
  run.mutable_metrics()->clear_workers();
  run.mutable_metrics()->clear_fine();
  run.mutable_metrics()->clear_cpu();
  run.mutable_metrics()->mutable_workflow()->clear_total_bytes_read();
  run.mutable_metrics()->mutable_workflow()->clear_data_rate_gbps();
  return run;
}

TEST(OutputGoldenTest, FlatFormats) {
  const v1::Measurement rich = testing_export::RichMeasurement();
  ExpectGolden("rich.csv", FormatFlatMetrics(rich, FlatFormat::kCsv));
  ExpectGolden("rich.json", FormatFlatMetrics(rich, FlatFormat::kJson));
  ExpectGolden("rich.md", FormatFlatMetrics(rich, FlatFormat::kMarkdown));
  ExpectGolden("sparse.json", FormatFlatMetrics(SparseMeasurement(), FlatFormat::kJson));
}

TEST(OutputGoldenTest, SummaryTables) {
  TableOptions options;
  options.width = -1;
  ExpectGolden("rich_tables.txt", FormatSummaryTables(testing_export::RichMeasurement(), options));
  options.unicode = false;
  ExpectGolden("sparse_tables.txt", FormatSummaryTables(SparseMeasurement(), options));
}

TEST(OutputGoldenTest, Comparison) {
  const std::vector<std::string> labels = {"three", "two", "sparse"};
  const std::vector<v1::Measurement> runs = {
      testing_export::RichMeasurement(3), testing_export::RichMeasurement(2), SparseMeasurement()};
  ComparisonOptions options;
  ExpectGolden("compare.txt", FormatComparison(labels, runs, options));
  options.format = ComparisonFormat::kJson;
  ExpectGolden("compare.json", FormatComparison(labels, runs, options));
  options.format = ComparisonFormat::kCsv;
  ExpectGolden("compare.csv", FormatComparison(labels, runs, options));
  options.format = ComparisonFormat::kMarkdown;
  ExpectGolden("compare.md", FormatComparison(labels, runs, options));
}

}  // namespace
}  // namespace roastcoffea
