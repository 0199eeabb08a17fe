#include "export/flat_formats.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <stdlib.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aggregation/aggregate.h"
#include "gtest/gtest.h"
#include "io/json_escape.h"
#include "schema/chunk_info_rows.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::Measurement Sample() {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("run \"1\"\n");
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.mutable_workflow()->set_elapsed_time_seconds(13.7);
  metrics.mutable_workflow()->set_total_events(1233000);
  metrics.mutable_workers()->set_avg_workers(4.0);  // total_cores unset: the original's None
  metrics.mutable_efficiency()->set_parallel_efficiency_fraction(0.25);
  metrics.mutable_efficiency()->set_task_execution_core_efficiency_fraction(0.46);
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  chunks.set_num_chunks(2);
  chunks.mutable_duration_seconds()->set_count(2);
  v1::Percentiles& p = *chunks.mutable_duration_seconds()->mutable_percentiles();
  p.set_p50(1.5);
  p.set_p90(1.9);
  p.set_p95(1.95);
  p.set_p99(1.99);
  v1::DatasetChunkMetrics& dataset = *chunks.add_per_dataset();
  dataset.set_dataset("a,b|c");
  dataset.set_num_chunks(2);
  v1::SectionStats& section = *chunks.add_section_stats();
  section.set_name("jets");
  section.set_kind(v1::SectionRecord::KIND_TIME);
  section.set_total(3.0);
  section.set_share_of_chunk_time_fraction(0.5);
  return measurement;
}

TEST(ParseFlatFormatTest, KnownAndUnknownNames) {
  EXPECT_EQ(*ParseFlatFormat("csv"), FlatFormat::kCsv);
  EXPECT_EQ(*ParseFlatFormat("JSON"), FlatFormat::kJson);
  EXPECT_EQ(*ParseFlatFormat("md"), FlatFormat::kMarkdown);
  EXPECT_EQ(*ParseFlatFormat("markdown"), FlatFormat::kMarkdown);
  const auto bad = ParseFlatFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "'xml'"));
}

TEST(AllFlatMetricsTest, HeadlineThenOriginalKeysThenAdditions) {
  const std::vector<FlatMetric> all = AllFlatMetrics(Sample().metrics());
  const std::vector<FlatMetric> headline = HeadlineFlatMetrics(Sample().metrics());
  const std::vector<FlatMetric> original = ToFlatMetrics(Sample().metrics());
  ASSERT_GT(all.size(), headline.size() + original.size());
  ASSERT_FALSE(headline.empty());
  EXPECT_EQ(all[0].key, "cpu_efficiency");
  for (size_t i = 0; i < headline.size(); ++i) EXPECT_EQ(all[i].key, headline[i].key);
  for (size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(all[headline.size() + i].key, original[i].key);
  }
  std::vector<std::string> added;
  for (size_t i = headline.size() + original.size(); i < all.size(); ++i) {
    added.push_back(all[i].key);
  }
  EXPECT_EQ(added,
            (std::vector<std::string>{
                "window_seconds", "avg_workers_over_window", "core_seconds",
                "avg_cores_over_window", "parallel_efficiency", "task_execution_core_efficiency",
                "num_retried_chunks", "chunk_duration_p50", "chunk_duration_p90",
                "chunk_duration_p95", "chunk_duration_p99", "section_stats.jets.time.total",
                "section_stats.jets.time.mean", "section_stats.jets.time.share_of_chunk_time"}));
}

TEST(AllFlatMetricsTest, RunQueueWaitAndImpossibleFiguresHaveKeys) {
  v1::Measurement measurement = Sample();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.mutable_fine()->set_processor_run_queue_wait_seconds(18.6);
  v1::ImpossibleFigure& figure = *metrics.add_impossible_figures();
  figure.set_code("invalid_efficiency");
  figure.set_figure("task_execution_core_efficiency");
  figure.set_value(1.3997);
  std::map<std::string, FlatMetric> by_key;
  for (const FlatMetric& metric : AdditionalFlatMetrics(metrics)) by_key[metric.key] = metric;
  ASSERT_EQ(by_key.count("processor_run_queue_wait_seconds"), 1u);
  EXPECT_DOUBLE_EQ(*by_key["processor_run_queue_wait_seconds"].value, 18.6);
  ASSERT_EQ(by_key.count("impossible.task_execution_core_efficiency"), 1u);
  EXPECT_DOUBLE_EQ(*by_key["impossible.task_execution_core_efficiency"].value, 1.3997);
  EXPECT_EQ(by_key["impossible.task_execution_core_efficiency"].unit, "fraction");
  // Unmeasured: no key at all.
  EXPECT_EQ(AdditionalFlatMetrics(Sample().metrics()).size(),
            AdditionalFlatMetrics(metrics).size() - 2);
}

TEST(FormatFlatMetricsTest, CsvHasHeaderQuotingAndEmptyNone) {
  const std::string csv = FormatFlatMetrics(Sample(), FlatFormat::kCsv);
  const std::vector<std::string> lines = absl::StrSplit(csv, '\n');
  ASSERT_GT(lines.size(), 3u);
  EXPECT_EQ(lines[0], "key,value,unit");
  EXPECT_TRUE(absl::StrContains(csv, "\ntotal_events,1233000,events\n")) << csv;
  EXPECT_TRUE(absl::StrContains(csv, "\nelapsed_time_seconds,13.7,s\n")) << csv;
  EXPECT_TRUE(absl::StrContains(csv, "\ntotal_cores,,cores\n")) << csv;
  EXPECT_TRUE(absl::StrContains(csv, "\nchunk_duration_p95,1.95,s\n")) << csv;
  EXPECT_TRUE(absl::StrContains(csv, "\n\"per_dataset.a,b|c.num_chunks\",2,chunks\n")) << csv;
  EXPECT_EQ(csv.back(), '\n');
  for (const std::string& line : lines) {
    if (line.empty() || absl::StrContains(line, "\"")) continue;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 2) << line;
  }
}

TEST(FormatFlatMetricsTest, JsonIsKeyedAndKeepsOrderUnitsAndNull) {
  const std::string json = FormatFlatMetrics(Sample(), FlatFormat::kJson);
  google::protobuf::Value value;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok()) << json;
  const auto& fields = value.struct_value().fields();
  EXPECT_EQ(fields.at("measurement").string_value(), "run \"1\"\n");
  const auto& metrics = fields.at("metrics").struct_value().fields();
  const auto& order = fields.at("order").list_value();
  const std::vector<FlatMetric> all = AllFlatMetrics(Sample().metrics());
  ASSERT_EQ(static_cast<size_t>(order.values_size()), all.size());
  ASSERT_EQ(metrics.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(order.values(static_cast<int>(i)).string_value(), all[i].key);
    const auto& entry = metrics.at(all[i].key).struct_value().fields();
    EXPECT_EQ(entry.at("unit").string_value(), all[i].unit);
    if (all[i].value.has_value()) {
      EXPECT_DOUBLE_EQ(entry.at("value").number_value(), *all[i].value) << all[i].key;
    } else {
      EXPECT_TRUE(entry.at("value").has_null_value()) << all[i].key;
    }
  }
  // .metrics.total_events.value
  EXPECT_EQ(metrics.at("total_events").struct_value().fields().at("value").number_value(), 1233000);
  // An empty measurement is still valid JSON.
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  FormatFlatMetrics(v1::Measurement(), FlatFormat::kJson), &value)
                  .ok());
}

v1::Measurement WithFinding() {
  v1::Measurement measurement = Sample();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.set_findings_evaluated(true);
  v1::Finding& finding = *metrics.add_findings();
  finding.set_severity(v1::Finding::SEVERITY_WARNING);
  finding.set_code("io_bound");
  finding.set_title("I/O-bound: chunks were blocked 49% of their time");
  finding.set_evidence("Blocked 4.90 s of 10.0 s | chunk wall time.");
  finding.set_suggestion("Read fewer bytes.");
  v1::FindingNumber& number = *finding.add_numbers();
  number.set_key("blocked_fraction");
  number.set_value(0.49);
  number.set_unit("fraction");
  return measurement;
}

TEST(FormatFlatMetricsTest, FindingsComeFirstInEveryFormat) {
  const v1::Measurement measurement = WithFinding();
  const std::string csv = FormatFlatMetrics(measurement, FlatFormat::kCsv);
  EXPECT_TRUE(absl::StartsWith(csv,
                               "key,value,unit\n"
                               "finding.io_bound,warning,severity\n"
                               "finding.io_bound.blocked_fraction,0.49,fraction\n"
                               "cpu_efficiency,"))
      << csv;
  google::protobuf::Value value;
  const std::string json = FormatFlatMetrics(measurement, FlatFormat::kJson);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok()) << json;
  const auto& fields = value.struct_value().fields();
  EXPECT_TRUE(fields.at("findings_evaluated").bool_value());
  const auto& finding = fields.at("findings").list_value().values(0).struct_value().fields();
  EXPECT_EQ(finding.at("severity").string_value(), "warning");
  EXPECT_EQ(finding.at("code").string_value(), "io_bound");
  EXPECT_EQ(finding.at("suggestion").string_value(), "Read fewer bytes.");
  EXPECT_DOUBLE_EQ(finding.at("numbers")
                       .struct_value()
                       .fields()
                       .at("blocked_fraction")
                       .struct_value()
                       .fields()
                       .at("value")
                       .number_value(),
                   0.49);
  const std::string md = FormatFlatMetrics(measurement, FlatFormat::kMarkdown);
  EXPECT_TRUE(absl::StrContains(
      md,
      "#### Findings\n\n- **WARNING** I/O-bound: chunks were blocked 49% of their time<br>"
      "Blocked 4.90 s of 10.0 s \\| chunk wall time.<br>*Try:* Read fewer bytes.\n"))
      << md;
  EXPECT_LT(md.find("#### Findings"), md.find("#### CPU Efficiency")) << md;
}

TEST(FormatFlatMetricsTest, EveryRuleStateIsListed) {
  v1::Measurement measurement = WithFinding();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  v1::RuleEvaluation& fired = *metrics.add_rule_evaluations();
  fired.set_code("io_bound");
  fired.set_evaluated(true);
  fired.set_fired(true);
  v1::RuleEvaluation& clear = *metrics.add_rule_evaluations();
  clear.set_code("data_lost");
  clear.set_evaluated(true);
  v1::RuleEvaluation& unknown = *metrics.add_rule_evaluations();
  unknown.set_code("stragglers");
  unknown.set_reason("no chunk records");
  const std::string csv = FormatFlatMetrics(measurement, FlatFormat::kCsv);
  EXPECT_TRUE(absl::StrContains(csv,
                                "rule.io_bound,fired,state\n"
                                "rule.data_lost,clear,state\n"
                                "rule.stragglers,not_evaluated,state\n"
                                "rule.stragglers.reason,no chunk records,text\n"))
      << csv;
  google::protobuf::Value value;
  const std::string json = FormatFlatMetrics(measurement, FlatFormat::kJson);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok()) << json;
  const auto& rules = value.struct_value().fields().at("rules").list_value();
  ASSERT_EQ(rules.values_size(), 3);
  const auto& straggler = rules.values(2).struct_value().fields();
  EXPECT_EQ(straggler.at("code").string_value(), "stragglers");
  EXPECT_EQ(straggler.at("state").string_value(), "not_evaluated");
  EXPECT_EQ(straggler.at("reason").string_value(), "no chunk records");
  const std::string md = FormatFlatMetrics(measurement, FlatFormat::kMarkdown);
  EXPECT_TRUE(absl::StrContains(md, "Not evaluated: stragglers (no chunk records).")) << md;
}

TEST(FormatFlatMetricsTest, MarkdownRendersTheHumanTables) {
  const std::string md = FormatFlatMetrics(Sample(), FlatFormat::kMarkdown);
  EXPECT_TRUE(absl::StartsWith(md, "### roastcoffea: run \"1\" \n\n- **Measurement**: ")) << md;
  EXPECT_TRUE(absl::StrContains(md,
                                "\n#### Event Processing Metrics\n\n| Metric | Value |\n"
                                "| --- | ---: |\n| Total Events | 1,233,000 |\n"))
      << md;
  // Real columns, numbers right-aligned; the dataset's '|' escaped.
  EXPECT_TRUE(absl::StrContains(md,
                                "| Section | Kind | Chunks | Total | Share | Mean | p50 | p95 |\n"
                                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"))
      << md;
  EXPECT_FALSE(absl::StrContains(md, "cpu_efficiency")) << "raw keys are for csv/json";
  for (absl::string_view line : absl::StrSplit(md, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "|")) continue;
    EXPECT_TRUE(absl::EndsWith(line, "|")) << line;
  }
}

// A run whose executor reported nothing and whose backend measured no CPU: aggregated for
// real, so the test covers the whole path from "no report" to every flat format.
v1::Measurement NothingReported() {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("no-report");
  measurement.mutable_metadata()->set_elapsed_seconds(10);
  v1::Warning* warning = measurement.add_warnings();
  warning->set_code("cpu_not_measured");
  warning->set_message("no CPU \"measurement\"");
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(measurement));
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  if (metrics.ok()) *measurement.mutable_metrics() = *metrics;
  return measurement;
}

TEST(FormatFlatMetricsTest, UnknownIsEmptyOrNullNeverZero) {
  const v1::Measurement measurement = NothingReported();
  const std::string csv = FormatFlatMetrics(measurement, FlatFormat::kCsv);
  for (const char* key : {"total_events", "data_rate_gbps", "event_rate_elapsed_khz",
                          "total_bytes_read", "cpu_efficiency", "cpu_seconds"}) {
    EXPECT_TRUE(absl::StrContains(csv, absl::StrCat("\n", key, ",,"))) << key << "\n" << csv;
  }
  const std::string md = FormatFlatMetrics(measurement, FlatFormat::kMarkdown);
  EXPECT_TRUE(absl::StrContains(md, "| Total Events | N/A (not reported) |")) << md;
  EXPECT_TRUE(absl::StrContains(md, "| Data Rate | N/A (bytes read not reported) |")) << md;
  const std::string json = FormatFlatMetrics(measurement, FlatFormat::kJson);
  EXPECT_TRUE(absl::StrContains(json, "\"total_events\": {\"value\": null")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"cpu_efficiency\": {\"value\": null")) << json;
  google::protobuf::Value value;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok()) << json;
  const auto& warnings = value.struct_value().fields().at("warnings").list_value();
  ASSERT_EQ(warnings.values_size(), 1);
  EXPECT_EQ(warnings.values(0).struct_value().fields().at("message").string_value(),
            "no CPU \"measurement\"");
}

// Reliability study D18: a dataset name must not set the terminal title or clear the screen.
TEST(FormatFlatMetricsTest, CsvAndMarkdownCarryNoControlCharacters) {
  v1::Measurement measurement = Sample();
  measurement.mutable_metrics()->mutable_chunks()->mutable_per_dataset(0)->set_dataset(
      "evil\x1b]0;title\x07\x1b[2J\rname\x7f");
  // Markdown shows the human tables (one dataset: no per-dataset row), and the run's name.
  measurement.mutable_metadata()->set_name("evil\x1b]0;title\x07\x1b[2J\rname\x7f");
  for (FlatFormat format : {FlatFormat::kCsv, FlatFormat::kMarkdown}) {
    const std::string out = FormatFlatMetrics(measurement, format);
    for (char c : out) {
      EXPECT_TRUE(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f))
          << static_cast<int>(c) << " in\n"
          << out;
    }
    EXPECT_TRUE(absl::StrContains(out, "evil?]0;title??[2J")) << out;
  }
}

// The flat metrics as FormatFlatMetrics printed them before it streamed: every key held, a
// repeated key suffixed "#2", "#3", ... by a map of every key.
std::string ReferenceJsonMetrics(const v1::Measurement& measurement) {
  std::vector<FlatMetric> all = AllFlatMetrics(measurement.metrics());
  std::map<std::string, int> seen;
  std::string metrics, order;
  for (const FlatMetric& metric : all) {
    const int uses = ++seen[metric.key];
    const std::string key = uses == 1 ? metric.key : absl::StrCat(metric.key, "#", uses);
    absl::StrAppend(&metrics, metrics.empty() ? "\n" : ",\n", "    \"", key, "\": ");
    absl::StrAppend(&order, order.empty() ? "\"" : ", \"", key, "\"");
  }
  return absl::StrCat(metrics, "|", order);
}

// A big run's flat JSON is written in pieces, with each repeated key (two records of the same
// file, entry range and attempt) suffixed as when every key was held.
v1::Measurement ManyRecords() {
  v1::Measurement measurement = Sample();
  v1::ChunkMetrics& chunks = *measurement.mutable_metrics()->mutable_chunks();
  for (int i = 0; i < 20000; ++i) {
    v1::ChunkInfo& info = *chunks.add_chunk_info();
    info.set_file(absl::StrCat("/data/f", i % 700, ".root"));
    info.set_entry_start((i / 700) * 100);
    info.set_entry_stop((i / 700) * 100 + 100);
    info.set_start_unix_ns(1'765'000'000'000'000'000 + i);
  }
  *chunks.add_chunk_info() = chunks.chunk_info(5);  // repeated twice: "#2" and "#3"
  *chunks.add_chunk_info() = chunks.chunk_info(5);
  return measurement;
}

TEST(FormatFlatMetricsTest, JsonOfManyRecordsStreamsWithTheSameKeys) {
  const v1::Measurement measurement = ManyRecords();
  std::ostringstream streamed;
  WriteFlatMetrics(measurement, FlatFormat::kJson, streamed);
  const std::string json = streamed.str();
  ASSERT_GT(json.size(), size_t{1} << 20);  // many flushes
  EXPECT_EQ(json, FormatFlatMetrics(measurement, FlatFormat::kJson));
  // The keys in "metrics" and "order", read back, are the reference's.
  std::string metrics, order;
  const size_t metrics_begin = json.find("\"metrics\": {") + 12;
  const size_t order_begin = json.find("\"order\": [");
  for (absl::string_view line :
       absl::StrSplit(json.substr(metrics_begin, order_begin - metrics_begin), '\n')) {
    const size_t colon = line.find("\": {");
    if (colon == absl::string_view::npos) continue;
    absl::StrAppend(&metrics, metrics.empty() ? "\n" : ",\n", line.substr(0, colon + 3));
  }
  order = json.substr(order_begin + 10, json.rfind(']') - order_begin - 10);
  EXPECT_EQ(absl::StrCat(metrics, "|", order), ReferenceJsonMetrics(measurement));
  EXPECT_TRUE(absl::StrContains(json, "#3\""));
}

// The "order" list is set aside in a spill file while "metrics" is written; without a
// temporary directory its keys are made again, to the same bytes.
TEST(FormatFlatMetricsTest, JsonWithoutASpillFileIsTheSame) {
  const v1::Measurement measurement = ManyRecords();
  const std::string spilled = FormatFlatMetrics(measurement, FlatFormat::kJson);
  const char* old = getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", "/nonexistent-roastcoffea-dir", 1);
  const std::string remade = FormatFlatMetrics(measurement, FlatFormat::kJson);
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  EXPECT_EQ(remade, spilled);
  EXPECT_TRUE(absl::StrContains(remade, "\"order\": [\"cpu_efficiency\"")) << remade.substr(0, 200);
}

// A chunk record's file name with a comma, quotes and a control character: its keys, written
// by parts, are quoted and escaped as whole keys are; the same record twice and a retry keep
// their "#n" and "#<attempt>" in both outputs and in both passes.
TEST(FormatFlatMetricsTest, ChunkInfoKeysOfAnOddFileNameAreQuotedAsWholeKeys) {
  v1::Measurement measurement = Sample();
  v1::ChunkMetrics& chunks = *measurement.mutable_metrics()->mutable_chunks();
  ClearChunkInfo(&chunks);
  for (uint32_t attempt : {0u, 0u, 3u}) {
    v1::ChunkInfo& info = *chunks.add_chunk_info();
    info.set_file("/d/e,\"q\"\x01.root");
    info.set_entry_stop(10);
    info.set_attempt(attempt);
    info.set_start_unix_ns(1'000'000'000);
  }
  const std::string prefix = "chunk_info.e,\"q\"\x01.root:0:10";
  const std::string csv = FormatFlatMetrics(measurement, FlatFormat::kCsv);
  EXPECT_TRUE(absl::StrContains(csv, "\n\"chunk_info.e,\"\"q\"\"?.root:0:10.t_start\",1,s\n"))
      << csv;
  EXPECT_TRUE(
      absl::StrContains(csv, "\n\"chunk_info.e,\"\"q\"\"?.root:0:10#3.bytes_read\",0,bytes\n"))
      << csv;
  const std::string json = FormatFlatMetrics(measurement, FlatFormat::kJson);
  for (const std::string& key : {absl::StrCat(prefix, ".t_start"), absl::StrCat(prefix, ".t_end#2"),
                                 absl::StrCat(prefix, "#3.bytes_read")}) {
    const std::string quoted = JsonQuote(key);
    EXPECT_TRUE(absl::StrContains(json, absl::StrCat("\n    ", quoted, ": {\"value\": "))) << key;
    EXPECT_TRUE(absl::StrContains(json, absl::StrCat(", ", quoted, ", "))) << key;  // "order"
  }
  EXPECT_FALSE(absl::StrContains(json, absl::StrCat(prefix, "#3.bytes_read#2")));
  // The CSV and JSON, parsed back, have every key of AllFlatMetrics once per use.
  google::protobuf::Struct parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  EXPECT_TRUE(parsed.fields().at("metrics").struct_value().fields().contains(
      absl::StrCat(prefix, ".t_start#2")));
}

// Numbers are printf's "%.15g", byte for byte.
TEST(FormatFlatMetricsTest, NumbersHaveFifteenSignificantDigits) {
  v1::Measurement measurement;
  measurement.mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(1765000000.123456789);
  measurement.mutable_metrics()->mutable_workflow()->set_total_events(1e16);
  const std::string csv = FormatFlatMetrics(measurement, FlatFormat::kCsv);
  EXPECT_TRUE(absl::StrContains(csv, "\nelapsed_time_seconds,1765000000.12346,")) << csv;
  EXPECT_TRUE(absl::StrContains(csv, "\ntotal_events,1e+16,")) << csv;
}

}  // namespace
}  // namespace roastcoffea
