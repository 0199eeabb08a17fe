// Walks docs/ARCHITECTURE.md "How to add a metric": one catalogue entry, here registered by the
// test instead of written in aggregation/metric_catalogue_entries.cc, reaches the flat formats,
// compare's rows and the live /metrics without any other change; and every flat key of a full
// measurement is a catalogue entry or one of the per-name families.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "aggregation/aggregate.h"
#include "aggregation/metric_catalogue.h"
#include "collector/live_status.h"
#include "export/compare.h"
#include "export/flat_formats.h"
#include "export/html_report.h"
#include "export/tables.h"
#include "export/test_measurement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "live/exposition.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

constexpr char kTestKey[] = "test_only_half_elapsed_seconds";

MetricDef TestMetric() {
  MetricDef metric;
  metric.key = kTestKey;
  metric.label = "Half Elapsed Time (test)";
  metric.unit = "s";
  metric.group = MetricGroup::kWorkflow;
  metric.better = Better::kLower;
  metric.trend = CoreTrend::kGainsWithCores;
  metric.description = "Half the elapsed time: a metric added by a test.";
  metric.value = [](const v1::AggregatedMetrics& m) {
    return std::optional<double>(m.workflow().elapsed_time_seconds() / 2);
  };
  metric.flat = FlatPart::kAddition;
  metric.compare_rank = 100;
  metric.live = true;
  metric.table = SummaryTableId::kEvents;
  metric.table_rank = 100;
  metric.format = ValueFormat::kOneDecimal;
  return metric;
}

TEST(MetricRecipeTest, OneCatalogueEntryReachesEveryOutput) {
  ASSERT_TRUE(RegisterMetricForTesting(TestMetric()));
  EXPECT_FALSE(RegisterMetricForTesting(TestMetric()));  // a key is used once
  const v1::Measurement run = testing_export::RichMeasurement();
  const double half = run.metrics().workflow().elapsed_time_seconds() / 2;
  ASSERT_GT(half, 0);

  EXPECT_THAT(FormatFlatMetrics(run, FlatFormat::kCsv),
              HasSubstr(absl::StrCat("\n", kTestKey, ",", half, ",s\n")));
  EXPECT_THAT(FormatFlatMetrics(run, FlatFormat::kJson), HasSubstr(absl::StrCat("\"", kTestKey)));

  TableOptions table_options;
  table_options.width = -1;
  const std::string tables = FormatSummaryTables(run, table_options);
  const size_t row = tables.find("Half Elapsed Time (test)");
  ASSERT_NE(row, std::string::npos) << "no summary-table row for the registered metric";
  EXPECT_THAT(tables.substr(row, tables.find('\n', row) - row),
              HasSubstr(absl::StrFormat("\u2502 %.1f s", half)));

  ComparisonOptions options;
  options.format = ComparisonFormat::kCsv;
  EXPECT_THAT(
      FormatComparison({"a", "b"},
                       {testing_export::RichMeasurement(3), testing_export::RichMeasurement(2)},
                       options),
      HasSubstr("Half Elapsed Time (test)"));

  LiveStatus status;
  status.name = "run";
  status.backend = "threadpool";
  status.so_far = std::make_shared<const v1::AggregatedMetrics>(run.metrics());
  const std::string exposition =
      live::FormatExposition(status, {}, live::ExpositionFormat::kPrometheusText);
  EXPECT_THAT(exposition, HasSubstr("# TYPE roastcoffea_figure_test_only_half_elapsed_seconds "
                                    "gauge\n"));
  EXPECT_THAT(exposition, HasSubstr(absl::StrCat("roastcoffea_figure_test_only_half_elapsed_"
                                                 "seconds{backend=\"threadpool\",run=\"run\"} ",
                                                 half, "\n")));
}

// A row whose text combines values, with an N/A reason and a note under it: the hooks the CPU,
// Throughput and Thread Time Split rows use, here for an entry registered by the test.
MetricDef CombinedRowMetric() {
  MetricDef metric;
  metric.key = "test_only_bytes_over_elapsed";
  metric.label = "Bytes over Elapsed (test)";
  metric.unit = "bytes";
  metric.description = "Bytes read, shown with the elapsed time: a row added by a test.";
  metric.value = [](const v1::AggregatedMetrics& m) {
    return m.workflow().has_total_bytes_read()
               ? std::optional<double>(static_cast<double>(m.workflow().total_bytes_read()))
               : std::nullopt;
  };
  metric.table = SummaryTableId::kThroughput;
  metric.table_rank = 100;
  metric.bullet = true;
  metric.row_text = [](const v1::AggregatedMetrics& m, double bytes, const CellFormats& cell) {
    return absl::StrCat(cell.bytes(bytes), " over ",
                        cell.duration(m.workflow().elapsed_time_seconds()));
  };
  metric.unknown_text = [](const v1::AggregatedMetrics& m) {
    return m.workflow().has_total_events() ? "N/A (test: bytes unknown)" : nullptr;
  };
  metric.note = [](const v1::AggregatedMetrics&) { return RowNote{"test note", "from\tthe test"}; };
  return metric;
}

// The row's line of the terminal tables, or "" when there is none.
std::string RowLine(const std::string& tables, const std::string& label) {
  const size_t row = tables.find(label);
  if (row == std::string::npos) return "";
  return tables.substr(row, tables.find('\n', row) - row);
}

TEST(MetricRecipeTest, RowHooksWordACombinedRow) {
  ASSERT_TRUE(RegisterMetricForTesting(CombinedRowMetric()));
  v1::Measurement run = testing_export::RichMeasurement();
  ASSERT_TRUE(run.metrics().workflow().has_total_bytes_read());
  const std::string combined =
      absl::StrCat(FormatBytes(static_cast<double>(run.metrics().workflow().total_bytes_read())),
                   " over ", FormatDuration(run.metrics().workflow().elapsed_time_seconds()));
  TableOptions options;
  options.width = -1;
  options.unicode = false;
  std::string tables = FormatSummaryTables(run, options);
  EXPECT_THAT(RowLine(tables, "  - Bytes over Elapsed (test)"), HasSubstr(combined));
  // The note under the row, its control character replaced.
  const size_t row = tables.find("Bytes over Elapsed (test)");
  ASSERT_NE(row, std::string::npos);
  const size_t next = tables.find('\n', row) + 1;
  EXPECT_THAT(tables.substr(next, tables.find('\n', next) - next), HasSubstr("    test note"));
  EXPECT_THAT(RenderHtmlReport(run), HasSubstr(combined));

  // Unknown: the per-case reason, or no row when the hook returns null.
  run.mutable_metrics()->mutable_workflow()->clear_total_bytes_read();
  tables = FormatSummaryTables(run, options);
  EXPECT_THAT(RowLine(tables, "Bytes over Elapsed (test)"), HasSubstr("N/A (test: bytes unknown)"));
  run.mutable_metrics()->mutable_workflow()->clear_total_events();
  EXPECT_EQ(RowLine(FormatSummaryTables(run, options), "Bytes over Elapsed (test)"), "");
}

// Keys written per name (dataset, section, chunk, file, index), outside the catalogue.
bool IsFamilyKey(const std::string& key) {
  for (const char* prefix :
       {"per_dataset.", "sections.", "chunk_info.", "file_metadata.", "file_read_metrics.",
        "compression_ratios.", "bytes_read_percent_per_file.", "impossible.", "section_stats."}) {
    if (absl::StartsWith(key, prefix)) return true;
  }
  return false;
}

TEST(MetricRecipeTest, EveryFlatKeyIsCatalogued) {
  v1::Measurement sparse = testing_export::RichMeasurement();
  sparse.mutable_metrics()->clear_workers();
  sparse.mutable_metrics()->clear_fine();
  for (const v1::Measurement& run : {testing_export::RichMeasurement(), sparse}) {
    int catalogued = 0;
    for (const FlatMetric& flat : AllFlatMetrics(run.metrics())) {
      if (IsFamilyKey(flat.key)) continue;
      const MetricDef* metric = FindMetric(flat.key);
      ASSERT_NE(metric, nullptr) << "flat key without a catalogue entry: " << flat.key;
      EXPECT_NE(metric->flat, FlatPart::kNone) << flat.key;
      EXPECT_EQ(metric->unit, flat.unit) << flat.key;
      ++catalogued;
    }
    EXPECT_GT(catalogued, 50);
  }
}

TEST(MetricRecipeTest, EveryEntryIsDescribedOnce) {
  std::set<std::string> keys;
  std::set<int> ranks;
  for (const MetricDef& metric : MetricCatalogue()) {
    EXPECT_TRUE(keys.insert(metric.key).second) << "key used twice: " << metric.key;
    EXPECT_FALSE(metric.label.empty()) << metric.key;
    EXPECT_FALSE(metric.unit.empty()) << metric.key;
    EXPECT_FALSE(metric.description.empty()) << metric.key;
    EXPECT_NE(metric.value, nullptr) << metric.key;
    if (metric.compare_rank > 0) {
      EXPECT_TRUE(ranks.insert(metric.compare_rank).second) << "rank used twice: " << metric.key;
    }
  }
}

}  // namespace
}  // namespace roastcoffea
