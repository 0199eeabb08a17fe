#include "export/tables.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "export/display_width.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr double kMiB = 1024.0 * 1024.0;

struct ParsedTable {
  std::string title;
  std::vector<std::string> lines;               // The box lines, title excluded.
  Rows rows;                                    // Body rows of two columns as (metric, value).
  std::vector<std::vector<std::string>> cells;  // Every body row, header excluded.
};

std::string Trim(absl::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::string(text);
}

// Splits FormatSummaryTables output into its tables. `row_vertical` is the character that
// separates body cells; every other line of a table starts with one of `box_starts`. The run
// header and the findings block are skipped.
std::vector<ParsedTable> ParseTables(const std::string& text, absl::string_view row_vertical,
                                     const std::vector<std::string>& box_starts) {
  std::vector<ParsedTable> tables;
  const std::vector<std::string> blocks = absl::StrSplit(text, "\n\n");
  for (size_t b = 1; b < blocks.size(); ++b) {
    if (absl::StartsWith(blocks[b], "Findings")) continue;
    std::vector<std::string> lines = absl::StrSplit(blocks[b], '\n', absl::SkipEmpty());
    if (lines.empty()) continue;
    ParsedTable table;
    table.title = Trim(lines[0]);
    // In ASCII the header row uses the body's vertical: the first such row is the header.
    bool seen_header = row_vertical != "|";
    for (size_t i = 1; i < lines.size(); ++i) {
      bool is_box_line = false;
      for (const std::string& start : box_starts) {
        is_box_line = is_box_line || absl::StartsWith(lines[i], start);
      }
      EXPECT_TRUE(is_box_line) << "not a table line: '" << lines[i] << "'";
      table.lines.push_back(lines[i]);
      if (!absl::StartsWith(lines[i], row_vertical)) continue;
      if (!seen_header) {
        seen_header = true;
        continue;
      }
      std::vector<std::string> cells = absl::StrSplit(lines[i], row_vertical);
      std::vector<std::string> trimmed;
      for (size_t c = 1; c + 1 < cells.size(); ++c) trimmed.push_back(Trim(cells[c]));
      if (trimmed.size() == 2) table.rows.emplace_back(trimmed[0], trimmed[1]);
      table.cells.push_back(std::move(trimmed));
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

// The example run of docs/reference.md §3: 4 workers x 1 thread, 1,233,000 events, 12 chunks,
// 13.7 s elapsed, 17.5 s CPU; plus a failed chunk and two datasets.
v1::Measurement FullMeasurement() {
  v1::Measurement measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
  metadata.set_schema_version(1);
  metadata.set_name("notebook-run");
  metadata.set_backend("dask");
  metadata.set_host("node01");
  metadata.mutable_start_time()->set_seconds(1795335303);  // 2026-11-22 08:15:03 UTC
  metadata.set_elapsed_seconds(13.7);

  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  v1::WorkflowMetrics& workflow = *metrics.mutable_workflow();
  workflow.set_elapsed_time_seconds(13.7);
  workflow.set_total_events(1233000);
  workflow.set_total_cpu_time_seconds(17.5);
  workflow.set_total_bytes_read(static_cast<int64_t>(43.94 * kMiB));
  workflow.set_num_chunks(12);
  workflow.set_data_rate_gbps(0.0269);
  workflow.set_data_rate_mbytes_per_second(3.363);
  workflow.set_event_rate_elapsed_khz(90.1);
  workflow.set_event_rate_cpu_total_khz(70.4);
  workflow.set_avg_cpu_time_per_chunk_seconds(17.5 / 12);
  workflow.set_summed_chunk_wall_seconds(17.5);

  // Measured CPU: 10.96 s of 4 cores x 13.7 s.
  v1::CpuMetrics& cpu = *metrics.mutable_cpu();
  cpu.set_cpu_seconds(10.96);
  cpu.set_cpu_source("engine's thread-cpu accounting (fine metrics)");
  cpu.set_core_seconds_available(54.8);
  cpu.set_capacity_source("workers' cores integrated over the run");
  cpu.set_cpu_efficiency_fraction(0.2);
  cpu.set_usable_cores(4);
  cpu.set_event_rate_per_cpu_second_khz(112.5);

  v1::WorkerMetrics& workers = *metrics.mutable_workers();
  workers.set_avg_workers(4.0);
  workers.set_peak_workers(4);
  workers.set_total_cores(4.0);
  workers.set_cores_per_worker(1.0);
  workers.set_peak_memory_bytes(376.53 * kMiB);
  workers.set_avg_memory_per_worker_bytes(259.01 * kMiB);

  v1::EfficiencyMetrics& efficiency = *metrics.mutable_efficiency();
  efficiency.set_core_efficiency_fraction(17.5 / (4 * 13.7));
  efficiency.set_speedup_factor(17.5 / 13.7);
  efficiency.set_event_rate_core_khz(22.5362);

  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  chunks.set_num_chunks(13);
  chunks.set_num_successful_chunks(12);
  chunks.set_num_failed_chunks(1);
  v1::DistributionStats& duration = *chunks.mutable_duration_seconds();
  duration.set_count(12);
  duration.set_mean(1.5);
  duration.set_min(1.0);
  duration.set_max(75.0);
  duration.set_std(0.4);
  v1::DistributionStats& memory = *chunks.mutable_memory_delta_bytes();
  memory.set_count(12);
  memory.set_mean(18.2 * kMiB);
  memory.set_min(-46.5 * kMiB);
  memory.set_max(44.8 * kMiB);
  v1::DistributionStats& events = *chunks.mutable_events();
  events.set_count(12);
  events.set_mean(102750);
  events.set_min(100000);
  events.set_max(110000);
  chunks.set_total_events_from_chunks(1233000);
  v1::DatasetChunkMetrics& ttbar = *chunks.add_per_dataset();
  ttbar.set_dataset("ttbar");
  ttbar.set_num_chunks(8);
  ttbar.set_mean_duration_seconds(1.6);
  v1::DatasetChunkMetrics& wide = *chunks.add_per_dataset();
  wide.set_dataset("\xE6\x95\xB0\xE6\x8D\xAE");  // "数据": two columns per character
  wide.set_num_chunks(5);
  wide.set_mean_duration_seconds(1.3);
  return measurement;
}

// A run without worker tracking and without chunk records.
v1::Measurement UntrackedMeasurement() {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("local");
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  v1::WorkflowMetrics& workflow = *metrics.mutable_workflow();
  workflow.set_elapsed_time_seconds(125.0);
  workflow.set_total_events(5000);
  workflow.set_total_cpu_time_seconds(250.0);
  workflow.set_event_rate_elapsed_khz(0.04);
  workflow.set_event_rate_cpu_total_khz(0.02);
  workflow.set_summed_chunk_wall_seconds(250.0);
  metrics.mutable_efficiency()->set_speedup_factor(2.0);
  metrics.mutable_cpu()->set_unknown_reason("no CPU measurement");
  return measurement;
}

const std::vector<std::string> kUnicodeBoxStarts = {"\u250F", "\u2503", "\u2521", "\u2502",
                                                    "\u2514"};
const std::vector<std::string> kAsciiBoxStarts = {"+", "|"};

std::vector<std::string> Titles(const std::vector<ParsedTable>& tables) {
  std::vector<std::string> titles;
  for (const ParsedTable& table : tables) titles.push_back(table.title);
  return titles;
}

TEST(FormatSummaryTablesTest, FullMeasurementHasEveryTableInOrder) {
  const std::string text = FormatSummaryTables(FullMeasurement(), TableOptions{});
  const std::vector<ParsedTable> tables = ParseTables(text, "\u2502", kUnicodeBoxStarts);
  EXPECT_EQ(Titles(tables),
            (std::vector<std::string>{"CPU Efficiency", "Throughput Metrics",
                                      "Event Processing Metrics", "Resource Utilization",
                                      "Timing Breakdown", "Chunk Metrics", "Chunk Durations"}))
      << text;
}

TEST(FormatSummaryTablesTest, FullMeasurementRowsAndValues) {
  const std::string text = FormatSummaryTables(FullMeasurement(), TableOptions{});
  std::vector<ParsedTable> tables = ParseTables(text, "\u2502", kUnicodeBoxStarts);
  ASSERT_EQ(tables.size(), 7u) << text;
  EXPECT_EQ(tables[0].rows, (Rows{{"CPU Efficiency", "20.0%"},
                                  {"\u2022 CPU Time (measured)", "11.0 s"},
                                  {"measured by", "engine's thread-cpu accounting (fine metrics)"},
                                  {"\u2022 Core-Seconds Available", "54.8 core-s"},
                                  {"computed as", "workers' cores integrated over the run"},
                                  {"\u2022 Usable Cores (average)", "4.00"}}));
  tables.erase(tables.begin());
  EXPECT_EQ(tables[0].rows, (Rows{{"Data Rate", "0.03 Gbps (3.4 MB/s)"},
                                  {"Total Bytes Read (reported)", "43.94 MiB"}}));
  EXPECT_EQ(tables[1].rows, (Rows{{"Total Events", "1,233,000"},
                                  {"Event Rate (Elapsed Time)", "90.1 kHz"},
                                  {"Event Rate (per CPU-second)", "112.5 kHz"},
                                  {"Event Rate (per summed chunk wall time)", "70.4 kHz"},
                                  {"Event Rate (per tracked core)", "22.5 kHz/core"}}));
  // Concurrency 17.5 / 13.7 = 1.277; occupancy 1.277 / 4 cores = 31.9%.
  // A constant worker and core count: one row each.
  EXPECT_EQ(tables[2].rows, (Rows{{"Workers", "4 (constant)"},
                                  {"Total Cores", "4 (1.0 per worker)"},
                                  {"Busy-Worker Concurrency (summed chunk wall / elapsed)", "1.28"},
                                  {"Worker Occupancy (busy-worker concurrency / cores)", "31.9%"},
                                  {"Peak Memory (per worker)", "376.53 MiB"},
                                  {"Avg Memory (per worker)", "259.01 MiB"}}));
  // One chunk count, in Chunk Metrics: the chunk records' (13) overrides the report's (12).
  EXPECT_EQ(tables[3].rows,
            (Rows{{"Elapsed Time", "13.7 s"}, {"Summed Chunk Wall Time (reported)", "17.5 s"}}));
  EXPECT_EQ(tables[4].rows, (Rows{{"Total Chunks", "13"},
                                  {"\u2022 Successful", "12"},
                                  {"\u2022 Failed", "1"},
                                  {"Mean Memory Delta (process RSS)", "18.20 MiB"},
                                  {"\u2022 Min", "-46.50 MiB"},
                                  {"\u2022 Max", "44.80 MiB"},
                                  {"Mean Events/Chunk", "102,750"},
                                  {"\u2022 Min", "100,000"},
                                  {"\u2022 Max", "110,000"}}));
  // Durations as columns; datasets written without distributions keep count and mean.
  EXPECT_EQ(
      tables[5].cells,
      (std::vector<std::vector<std::string>>{
          {"all datasets", "12", "1.50 s", "1.00 s", "N/A", "N/A", "N/A", "N/A", "1m 15s"},
          {"ttbar", "8", "1.60 s", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"},
          {"\xE6\x95\xB0\xE6\x8D\xAE", "5", "1.30 s", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"}}));
  // The original's misleading percentage of the speedup is gone, and nothing but measured CPU
  // is called CPU or efficiency.
  EXPECT_FALSE(absl::StrContains(text, "Efficiency Ratio"));
  EXPECT_FALSE(absl::StrContains(text, "Core Efficiency"));
  EXPECT_FALSE(absl::StrContains(text, "Parallel Efficiency"));
  EXPECT_FALSE(absl::StrContains(text, "Speedup"));
  EXPECT_FALSE(absl::StrContains(text, "Total CPU Time"));
}

// Rows the full measurement does not reach: retries, the chunks' own heap peaks, time per event.
TEST(FormatSummaryTablesTest, ChunkMetricsRetriesAndHeapPeaks) {
  v1::Measurement measurement = FullMeasurement();
  v1::ChunkMetrics* chunks = measurement.mutable_metrics()->mutable_chunks();
  chunks->set_num_retried_chunks(2);
  v1::DistributionStats* heap = chunks->mutable_peak_live_bytes();
  heap->set_count(12);
  heap->set_mean(2048.0);
  heap->set_max(4096.0);
  v1::DistributionStats* per_event = chunks->mutable_time_per_event_seconds();
  per_event->set_count(12);
  per_event->set_mean(0.0015);
  per_event->mutable_percentiles()->set_p50(0.001);
  per_event->mutable_percentiles()->set_p99(0.004);
  const std::string text = FormatSummaryTables(measurement, TableOptions{});
  const std::vector<ParsedTable> tables = ParseTables(text, "\u2502", kUnicodeBoxStarts);
  ASSERT_EQ(tables.size(), 7u) << text;
  EXPECT_EQ(tables[5].rows, (Rows{{"Total Chunks", "13"},
                                  {"\u2022 Successful", "12"},
                                  {"\u2022 Failed", "1"},
                                  {"\u2022 Retries", "2"},
                                  {"Time per Event (mean)", "1.50 ms"},
                                  {"\u2022 p50", "1.00 ms"},
                                  {"\u2022 p99", "4.00 ms"},
                                  {"Mean Chunk Heap Peak (own thread)", "2.00 KiB"},
                                  {"\u2022 Max", "4.00 KiB"},
                                  {"Mean Memory Delta (process RSS)", "18.20 MiB"},
                                  {"\u2022 Min", "-46.50 MiB"},
                                  {"\u2022 Max", "44.80 MiB"},
                                  {"Mean Events/Chunk", "102,750"},
                                  {"\u2022 Min", "100,000"},
                                  {"\u2022 Max", "110,000"}}))
      << text;
}

TEST(FormatSummaryTablesTest, RunHeaderNamesTheEnginesVersion) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_engine_version("2022.12.1+ds.1");
  const std::string text = FormatSummaryTables(measurement, TableOptions{});
  EXPECT_NE(text.find("Backend: dask (2022.12.1+ds.1)\n"), std::string::npos) << text;
}

TEST(FormatSummaryTablesTest, RunHeaderNamesTheRun) {
  const std::string text = FormatSummaryTables(FullMeasurement(), TableOptions{});
  EXPECT_TRUE(absl::StartsWith(text,
                               "Measurement: notebook-run\n"
                               "Backend: dask\n"
                               "Host: node01\n"
                               "Started: 2026-11-22 08:15:03 UTC\n"
                               "Elapsed: 13.7 s\n\n"
                               "Findings: not evaluated"))
      << text;
}

void ExpectAligned(const std::vector<ParsedTable>& tables) {
  for (const ParsedTable& table : tables) {
    ASSERT_FALSE(table.lines.empty()) << table.title;
    const size_t width = DisplayWidth(table.lines[0]);
    for (const std::string& line : table.lines) {
      EXPECT_EQ(DisplayWidth(line), width) << table.title << ": '" << line << "'";
    }
  }
}

TEST(FormatSummaryTablesTest, UnicodeTablesAreAligned) {
  const std::string text = FormatSummaryTables(FullMeasurement(), TableOptions{true});
  const std::vector<ParsedTable> tables = ParseTables(text, "\u2502", kUnicodeBoxStarts);
  ASSERT_EQ(tables.size(), 7u);
  ExpectAligned(tables);
  EXPECT_TRUE(absl::StrContains(text, "\u250F\u2501\u2501"));  // heavy header box
}

TEST(FormatSummaryTablesTest, AsciiTablesUseNoBoxCharactersAndAreAligned) {
  const std::string text = FormatSummaryTables(FullMeasurement(), TableOptions{false});
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 7u) << text;
  ExpectAligned(tables);
  EXPECT_EQ(tables[5].rows[1], (std::pair<std::string, std::string>{"- Successful", "12"}));
  EXPECT_EQ(tables[0].lines[0].substr(0, 3), "+--");
  // The wide dataset name takes 4 columns but 6 bytes: padding by bytes would misalign it.
  const std::string& wide_row = tables[6].lines[tables[6].lines.size() - 2];
  ASSERT_TRUE(absl::StrContains(wide_row, "\xE6\x95\xB0\xE6\x8D\xAE")) << wide_row;
  EXPECT_EQ(wide_row.size(), tables[6].lines[0].size() + 2);
  // Only the dataset name is non-ASCII.
  std::string without_dataset = text;
  without_dataset.erase(without_dataset.find("\xE6\x95\xB0\xE6\x8D\xAE"), 6);
  for (char c : without_dataset) {
    EXPECT_LT(static_cast<unsigned char>(c), 0x80) << text;
  }
}

TEST(FormatSummaryTablesTest, UntrackedRunShowsNotAvailable) {
  const std::string text = FormatSummaryTables(UntrackedMeasurement(), TableOptions{false});
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 5u) << text;  // No chunks: no Chunk Metrics table.
  ExpectAligned(tables);
  const std::string na = "N/A (no worker tracking)";
  EXPECT_EQ(tables[0].rows, (Rows{{"CPU Efficiency", "N/A (CPU not measured)"},
                                  {"- CPU Time (measured)", "N/A"},
                                  {"why", "no CPU measurement"}}));
  EXPECT_EQ(tables[1].rows, (Rows{{"Data Rate", "N/A (bytes read not reported)"}}));
  EXPECT_EQ(tables[2].rows.back(),
            (std::pair<std::string, std::string>{"Event Rate (per tracked core)", na}));
  EXPECT_EQ(tables[3].rows, (Rows{{"Workers (Time-Averaged)", na},
                                  {"Peak Workers", na},
                                  {"Cores per Worker", na},
                                  {"Total Cores", na},
                                  {"Busy-Worker Concurrency (summed chunk wall / elapsed)", "2.00"},
                                  {"Worker Occupancy (busy-worker concurrency / cores)", na},
                                  {"Peak Memory (per worker)", na},
                                  {"Avg Memory (per worker)", na}}));
  EXPECT_EQ(tables[4].rows,
            (Rows{{"Elapsed Time", "2m 5s"}, {"Summed Chunk Wall Time (reported)", "4m 10s"}}));
  EXPECT_TRUE(absl::StartsWith(text, "Measurement: local\nElapsed: 2m 5s\n\n")) << text;
}

// Issue #23 item 12: an impossible figure is never shown as a plain measurement.
TEST(FormatSummaryTablesTest, ImpossibleFiguresAreFlaggedAndWarned) {
  v1::Measurement measurement = FullMeasurement();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.mutable_efficiency()->set_core_efficiency_over_core_seconds_fraction(1.326);
  v1::ImpossibleFigure& figure = *metrics.add_impossible_figures();
  figure.set_code("invalid_efficiency");
  figure.set_figure("core_efficiency_over_core_seconds");
  figure.set_value(1.326);
  figure.set_message(
      "core_efficiency_over_core_seconds 1.33 is impossible: two time windows mixed");
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_TRUE(absl::StrContains(
      text, "WARNING: core_efficiency_over_core_seconds 1.33 is impossible: two time windows"))
      << text;
  std::map<std::string, std::string> shown;
  for (const ParsedTable& table : ParseTables(text, "|", kAsciiBoxStarts)) {
    for (const auto& [label, value] : table.rows) shown[label] = value;
  }
  EXPECT_EQ(shown["Worker Occupancy (busy-worker concurrency / cores)"],
            "132.6% (impossible: see WARNING)");
  EXPECT_EQ(shown["CPU Efficiency"].find("impossible"), std::string::npos);
}

// The original tool saved core_efficiency without the tracking it came from: it shows where our
// occupancy shows, as its event_rate_cpu_total_khz shows where ours does.
TEST(FormatSummaryTablesTest, SavedFiguresOfTheOriginalShowUnderOurLabels) {
  v1::Measurement measurement = UntrackedMeasurement();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.mutable_efficiency()->set_core_efficiency_fraction(0.6386861313868614);
  metrics.mutable_workflow()->set_total_events(1233000);
  metrics.mutable_workflow()->set_event_rate_cpu_total_khz(70.4);
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  std::map<std::string, std::string> shown;
  for (const ParsedTable& table : ParseTables(text, "|", kAsciiBoxStarts)) {
    for (const auto& [label, value] : table.rows) shown[label] = value;
  }
  EXPECT_EQ(shown["Worker Occupancy (busy-worker concurrency / cores)"], "63.9%") << text;
  EXPECT_EQ(shown["Event Rate (per summed chunk wall time)"], "70.4 kHz") << text;
  EXPECT_EQ(shown["Busy-Worker Concurrency (summed chunk wall / elapsed)"], "2.00") << text;
}

TEST(FormatSummaryTablesTest, TrackedRunWithoutCoresShowsNotAvailableForCores) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metrics()->mutable_workers()->clear_total_cores();
  measurement.mutable_metrics()->mutable_workers()->clear_cores_per_worker();
  measurement.mutable_metrics()->mutable_efficiency()->clear_core_efficiency_fraction();
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 7u);
  EXPECT_EQ(tables[3].rows[0], (std::pair<std::string, std::string>{"Workers", "4 (constant)"}));
  EXPECT_EQ(tables[3].rows[1].first, "Cores per Worker");
  EXPECT_EQ(tables[3].rows[1].second, "N/A (no worker tracking)");
  EXPECT_EQ(tables[3].rows[2].first, "Total Cores");
  EXPECT_EQ(tables[3].rows[2].second, "N/A (no worker tracking)");
  EXPECT_EQ(tables[3].rows[4].first, "Worker Occupancy (busy-worker concurrency / cores)");
  EXPECT_EQ(tables[3].rows[4].second, "N/A (no worker tracking)");
}

TEST(FormatSummaryTablesTest, UnequalWorkersShowTheirAverageCores) {
  // A 2-thread and a 1-thread Dask worker: 3 cores, 1.5 per worker on average.
  v1::Measurement measurement = FullMeasurement();
  v1::WorkerMetrics& workers = *measurement.mutable_metrics()->mutable_workers();
  workers.set_avg_workers(2);
  workers.set_peak_workers(2);
  workers.set_total_cores(3);
  workers.set_cores_per_worker(1.5);
  workers.clear_avg_cores_over_window();
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 7u);
  EXPECT_EQ(tables[3].rows[0], (std::pair<std::string, std::string>{"Workers", "2 (constant)"}));
  EXPECT_EQ(tables[3].rows[1],
            (std::pair<std::string, std::string>{"Total Cores", "3 (1.5 per worker on average)"}));
}

TEST(FormatSummaryTablesTest, ChangingWorkerCountKeepsAverageAndPeak) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metrics()->mutable_workers()->set_avg_workers(2.5);
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 7u);
  EXPECT_EQ(tables[3].rows[0],
            (std::pair<std::string, std::string>{"Workers (Time-Averaged)", "2.50"}));
  EXPECT_EQ(tables[3].rows[1], (std::pair<std::string, std::string>{"Peak Workers", "4"}));
  EXPECT_EQ(tables[3].rows[2], (std::pair<std::string, std::string>{"Cores per Worker", "1.0"}));
  EXPECT_EQ(tables[3].rows[3], (std::pair<std::string, std::string>{"Total Cores", "4"}));
}

TEST(FormatSummaryTablesTest, ReportChunkCountAloneGivesTotalChunksOnly) {
  v1::Measurement measurement = UntrackedMeasurement();
  measurement.mutable_metrics()->mutable_workflow()->set_num_chunks(5);
  measurement.mutable_metrics()->mutable_workflow()->set_avg_cpu_time_per_chunk_seconds(50.0);
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 6u);
  EXPECT_EQ(tables[4].rows,
            (Rows{{"Elapsed Time", "2m 5s"}, {"Summed Chunk Wall Time (reported)", "4m 10s"}}));
  EXPECT_EQ(tables[5].title, "Chunk Metrics");
  EXPECT_EQ(tables[5].rows, (Rows{{"Total Chunks", "5"}}));
}

TEST(FormatSummaryTablesTest, OptionalThroughputRowsAppearWhenKnown) {
  v1::Measurement measurement = FullMeasurement();
  v1::WorkflowMetrics& workflow = *measurement.mutable_metrics()->mutable_workflow();
  workflow.set_total_uncompressed_bytes_read(static_cast<int64_t>(5 * 1024 * kMiB));
  workflow.set_compression_factor(3.456);
  workflow.clear_data_rate_mbytes_per_second();  // An older producer: derived from Gbps.
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_GT(tables.size(), 1u);
  EXPECT_EQ(tables[1].rows, (Rows{{"Data Rate", "0.03 Gbps (3.4 MB/s)"},
                                  {"Total Bytes Read (reported)", "43.94 MiB"},
                                  {"Total Bytes Read (uncompressed)", "5.00 GiB"},
                                  {"Compression Factor", "3.46x"}}));
}

TEST(FormatSummaryTablesTest, ControlCharactersInNamesCannotBreakRows) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_name("evil\nname\x1B[2J");
  measurement.mutable_metrics()->mutable_chunks()->mutable_per_dataset(0)->set_dataset("a\nb");
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_TRUE(absl::StartsWith(text, "Measurement: evil?name?[2J\n")) << text;
  EXPECT_FALSE(absl::StrContains(text, "\x1B"));
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 7u);
  ExpectAligned(tables);
  EXPECT_EQ(tables[6].cells[1][0], "a?b");
}

TEST(FormatSummaryTablesTest, EmptyMeasurementStillFormats) {
  const std::string text = FormatSummaryTables(v1::Measurement(), TableOptions{});
  EXPECT_TRUE(absl::StartsWith(text, "Elapsed: 0 s\n")) << text;
  const std::vector<ParsedTable> tables = ParseTables(text, "\u2502", kUnicodeBoxStarts);
  EXPECT_EQ(tables.size(), 5u);
  // Nothing reported: unknown, never 0.
  EXPECT_FALSE(absl::StrContains(text, "Total Events   | 0")) << text;
  EXPECT_TRUE(absl::StrContains(text, "N/A (not reported)")) << text;
  EXPECT_FALSE(absl::StrContains(text, "0.00 Gbps")) << text;
}

// The fine metrics of the notebook run (docs/reference.md §3) plus the overheads.
void AddFineMetrics(v1::Measurement* measurement) {
  v1::FineMetricsSummary& fine = *measurement->mutable_metrics()->mutable_fine();
  fine.set_processor_cpu_time_seconds(9.7);
  fine.set_processor_io_wait_time_seconds(22.7);
  fine.set_processor_cpu_percent(29.9);
  fine.set_processor_io_wait_percent(70.1);
  fine.set_overhead_cpu_time_seconds(0.4);
  fine.set_overhead_io_wait_time_seconds(1.6);
  fine.set_total_bytes_memory_read(304.99 * 1024);
  fine.set_disk_write_bytes(2 * kMiB);
  fine.set_decompression_time_seconds(0.25);
  fine.set_total_compression_overhead_seconds(0.25);
  fine.set_serialization_time_seconds(0.5);
  fine.set_deserialization_time_seconds(0.25);
  fine.set_total_serialization_overhead_seconds(0.75);
}

TEST(FormatSummaryTablesTest, ProcessWideMemorySaysSo) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metrics()->mutable_workers()->set_memory_is_process_wide(true);
  measurement.mutable_metrics()->mutable_workers()->set_threads_sharing_memory(4);
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  bool seen = false;
  for (const ParsedTable& table : tables) {
    for (const auto& [metric, value] : table.rows) {
      if (metric == "Peak Memory (process RSS, shared by 4 threads)") {
        EXPECT_EQ(value, "376.53 MiB");
        seen = true;
      }
      EXPECT_NE(metric, "Peak Memory (per worker)");
    }
  }
  EXPECT_TRUE(seen);
}

TEST(FormatSummaryTablesTest, MemoryNotMeasuredIsNotShownAsZero) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metrics()->mutable_workers()->set_peak_memory_bytes(0);
  measurement.mutable_metrics()->mutable_workers()->set_avg_memory_per_worker_bytes(0);
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  const std::string na = "N/A (not measured by this backend)";
  bool seen = false;
  for (const ParsedTable& table : tables) {
    for (const auto& [metric, value] : table.rows) {
      if (metric == "Peak Memory (per worker)" || metric == "Avg Memory (per worker)") {
        EXPECT_EQ(value, na) << metric;
        seen = true;
      }
    }
  }
  EXPECT_TRUE(seen);
}

TEST(FormatSummaryTablesTest, FineMetricsWithoutACpuSplitShowTheirActivities) {
  // A Dask 2022.12 task stream or TaskVine: wall-time activities, no thread-cpu/noncpu.
  v1::Measurement measurement = FullMeasurement();
  v1::FineMetricsSummary& fine = *measurement.mutable_metrics()->mutable_fine();
  for (const auto& [activity, seconds] :
       std::vector<std::pair<std::string, double>>{{"compute", 12.5}, {"transfer", 0.75}}) {
    v1::ActivityTotal* total = fine.add_by_task_prefix();
    total->set_context("execute");
    total->set_task_prefix("process");
    total->set_activity(activity);
    total->set_unit("seconds");
    total->set_value(seconds);
  }
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_EQ(text.find("Fine Metrics (Dask: collect window)"), std::string::npos)
      << "no processor CPU time of 0.0s when the engine never split it";
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  bool found = false;
  for (const ParsedTable& table : tables) {
    if (table.title != "Fine Metrics (activities)") continue;
    found = true;
    EXPECT_EQ(table.rows, (Rows{{"process: compute", "12.5 s"}, {"process: transfer", "750 ms"}}));
  }
  EXPECT_TRUE(found);
  ExpectAligned(tables);
}

TEST(FormatSummaryTablesTest, FineMetricsTableHasTheOriginalsRows) {
  v1::Measurement measurement = FullMeasurement();
  AddFineMetrics(&measurement);
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, TableOptions{false}), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 8u);
  EXPECT_EQ(tables[1].rows.back(),
            (std::pair<std::string, std::string>{"Memory Read (fine metrics)", "304.99 KiB"}));
  EXPECT_EQ(tables[5].title, "Fine Metrics (Dask: collect window)");
  EXPECT_EQ(tables[5].rows, (Rows{{"Processor CPU Time", "9.70 s"},
                                  {"Processor Off-CPU Time (not split)", "22.7 s"},
                                  {"CPU %", "29.9%"},
                                  {"Off CPU (not split) %", "70.1%"},
                                  {"Overhead CPU Time", "400 ms"},
                                  {"Overhead Off-CPU Time (not split)", "1.60 s"},
                                  {"Disk Write", "2.00 MiB"},
                                  {"Compression Overhead", "250 ms"},
                                  {"- Decompress", "250 ms"},
                                  {"Serialization Overhead", "750 ms"},
                                  {"- Serialize", "500 ms"},
                                  {"- Deserialize", "250 ms"}}));
  EXPECT_EQ(tables[6].title, "Chunk Metrics");
  ExpectAligned(tables);
}

TEST(FormatSummaryTablesTest, ThreadPoolFineMetricsAreTitledByTheirSource) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_backend("threadpool");
  AddFineMetrics(&measurement);
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_FALSE(absl::StrContains(text, "Dask")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Thread Time Split (worker threads' CPU clocks)")) << text;
}

// Waiting for a CPU is not I/O: where the run queue was measured the split has three parts.
TEST(FormatSummaryTablesTest, ThreadTimeSplitSeparatesRunQueueFromBlocked) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_backend("threadpool");
  AddFineMetrics(&measurement);
  measurement.mutable_metrics()->mutable_fine()->set_processor_run_queue_wait_seconds(20.7);
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_FALSE(absl::StrContains(text, "I/O & Wait")) << text;
  bool found = false;
  for (const ParsedTable& table : ParseTables(text, "|", kAsciiBoxStarts)) {
    if (!absl::StartsWith(table.title, "Thread Time Split")) continue;
    found = true;
    ASSERT_GE(table.rows.size(), 6u);
    EXPECT_EQ(table.rows[1], (std::pair<std::string, std::string>{
                                 "Processor Waiting for a CPU (run queue)", "20.7 s"}));
    EXPECT_EQ(table.rows[2], (std::pair<std::string, std::string>{
                                 "Processor Blocked (I/O, locks, sleep)", "2.00 s"}));
    EXPECT_EQ(table.rows[4], (std::pair<std::string, std::string>{"Waiting for a CPU %", "63.9%"}));
    EXPECT_EQ(table.rows[5], (std::pair<std::string, std::string>{"Blocked %", "6.2%"}));
  }
  EXPECT_TRUE(found) << text;
}

TEST(FormatSummaryTablesTest, PercentilesSectionsAndCoreSecondsEfficiency) {
  v1::Measurement measurement = FullMeasurement();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.mutable_efficiency()->set_core_efficiency_over_core_seconds_fraction(0.3456);
  metrics.mutable_efficiency()->set_parallel_efficiency_fraction(0.3194);
  metrics.mutable_workers()->set_core_seconds(54.8);
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  v1::Percentiles& p = *chunks.mutable_duration_seconds()->mutable_percentiles();
  p.set_p50(1.4);
  p.set_p90(2.0);
  p.set_p95(2.2);
  p.set_p99(70.0);
  v1::DistributionStats& per_event = *chunks.mutable_time_per_event_seconds();
  per_event.set_count(12);
  per_event.set_mean(14.6e-6);
  per_event.mutable_percentiles()->set_p50(14.0e-6);
  per_event.mutable_percentiles()->set_p99(20.5e-6);
  v1::DistributionStats& ttbar =
      *chunks.mutable_per_dataset(0)->mutable_duration_distribution_seconds();
  ttbar.set_count(8);
  ttbar.mutable_percentiles()->set_p50(1.5);
  ttbar.mutable_percentiles()->set_p95(2.1);
  // Six sections: the original shows the top five by total time.
  for (int i = 0; i < 6; ++i) {
    v1::SectionSummary& section = *chunks.add_sections();
    section.set_name(absl::StrCat("section", i));
    section.set_type(i == 5 ? "memory" : "time");
    section.set_count(12);
    section.set_total_duration_seconds(1.0 + i);
    if (i == 5) section.set_mean_memory_delta_bytes(2 * kMiB);
  }
  // A bytes section has no duration and never appears under Section Timing.
  v1::SectionSummary& bytes_section = *chunks.add_sections();
  bytes_section.set_name("read_columns");
  bytes_section.set_type("bytes");
  bytes_section.set_count(12);
  bytes_section.set_total_duration_seconds(99.0);
  for (int i = 0; i < 3; ++i) {
    v1::SectionStats& stats = *chunks.add_section_stats();
    stats.set_name(absl::StrCat("stat", i));
    stats.set_kind(v1::SectionRecord::KIND_TIME);
    stats.set_total(2.0 * (i + 1));
    stats.set_total_duration_seconds(2.0 * (i + 1));
    stats.set_share_of_chunk_time_fraction(0.1 * (i + 1));
    stats.mutable_values()->set_count(12);
    stats.mutable_values()->set_mean(0.5);
    stats.mutable_values()->mutable_percentiles()->set_p50(0.4);
    stats.mutable_values()->mutable_percentiles()->set_p95(0.9);
  }
  v1::SectionStats& bytes_stats = *chunks.add_section_stats();
  bytes_stats.set_name("stat2");
  bytes_stats.set_kind(v1::SectionRecord::KIND_BYTES);
  bytes_stats.set_total(64 * kMiB);
  bytes_stats.mutable_values()->set_count(12);
  bytes_stats.mutable_values()->set_mean(64 * kMiB / 12);
  TableOptions options;
  options.unicode = false;
  options.top_sections = 3;
  const std::string text = FormatSummaryTables(measurement, options);
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 8u) << text;
  ExpectAligned(tables);
  // One occupancy row: over core-seconds when known.
  const Rows& resources = tables[3].rows;
  ASSERT_EQ(resources.size(), 7u);
  EXPECT_EQ(resources[3], (std::pair<std::string, std::string>{
                              "Worker Occupancy (busy-worker concurrency / cores)", "34.6%"}));
  EXPECT_EQ(resources[4],
            (std::pair<std::string, std::string>{"Tracked Core-Seconds", "54.8 core-s"}));

  const Rows& chunk_rows = tables[5].rows;
  const auto find = [&](const std::string& metric) -> std::string {
    for (const auto& row : chunk_rows) {
      if (row.first == metric) return row.second;
    }
    return "<missing>";
  };
  EXPECT_EQ(find("Time per Event (mean)"), "14.6 \u00B5s");
  EXPECT_EQ(find("- p50"), "14.0 \u00B5s");
  EXPECT_EQ(find("- p99"), "20.5 \u00B5s");
  // Sections are listed once, in the Sections table, never inside Chunk Metrics.
  EXPECT_EQ(find("Section Timing"), "<missing>");
  EXPECT_EQ(find("read_columns"), "<missing>");
  EXPECT_EQ(tables[6].title, "Chunk Durations");
  EXPECT_EQ(tables[6].cells[0],
            (std::vector<std::string>{"all datasets", "12", "1.50 s", "1.00 s", "1.40 s", "2.00 s",
                                      "2.20 s", "1m 10s", "1m 15s"}));
  EXPECT_EQ(tables[6].cells[1][0], "ttbar");
  EXPECT_EQ(tables[6].cells[1][4], "1.50 s");
  // Real columns; the bytes row of a section says bytes, not the time row's label.
  EXPECT_EQ(tables[7].title, "Sections (top 3 of 4 by time)");
  EXPECT_EQ(tables[7].cells,
            (std::vector<std::vector<std::string>>{
                {"stat2", "time", "12", "6.00 s", "30.0%", "500 ms", "400 ms", "900 ms"},
                {"stat1", "time", "12", "4.00 s", "20.0%", "500 ms", "400 ms", "900 ms"},
                {"stat0", "time", "12", "2.00 s", "10.0%", "500 ms", "400 ms", "900 ms"}}));
  options.top_sections = 10;
  const std::vector<ParsedTable> all =
      ParseTables(FormatSummaryTables(measurement, options), "|", kAsciiBoxStarts);
  EXPECT_EQ(all[7].title, "Sections");
  EXPECT_EQ(all[7].cells.back(), (std::vector<std::string>{"stat2", "bytes", "12", "64.00 MiB", "",
                                                           "5.33 MiB", "N/A", "N/A"}));
}

TEST(FormatSummaryTablesTest, FailedChunksTableShowsErrorTextSafely) {
  v1::Measurement measurement = FullMeasurement();
  v1::ChunkMetrics& chunks = *measurement.mutable_metrics()->mutable_chunks();
  for (int i = 0; i < 3; ++i) {
    v1::FailedChunk& failed = *chunks.add_failed_chunks();
    failed.set_file(i == 0 ? "data\x1B[2J.root" : "data.root");
    failed.set_entry_start(1000 * i);
    failed.set_entry_stop(1000 * (i + 1));
    failed.set_attempt(i == 2 ? 1 : 0);
    failed.set_error_text(i == 0 ? "ValueError: bad\ttab\nTraceback line two"
                                 : std::string(150, 'x'));
  }
  TableOptions options;
  options.unicode = false;
  options.max_failed_chunks = 2;
  const std::string text = FormatSummaryTables(measurement, options);
  EXPECT_FALSE(absl::StrContains(text, "\x1B"));
  EXPECT_FALSE(absl::StrContains(text, "Traceback"));
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 8u);
  ExpectAligned(tables);
  EXPECT_EQ(tables[7].title, "Failed Chunks");
  // Columns; the long error is elided in its middle to fit 100 columns.
  ASSERT_EQ(tables[7].cells.size(), 3u);
  EXPECT_EQ(tables[7].cells[0],
            (std::vector<std::string>{"data?[2J.root", "[0, 1000)", "0", "ValueError: bad?tab"}));
  EXPECT_EQ(tables[7].cells[1][0], "data.root");
  EXPECT_TRUE(absl::StrContains(tables[7].cells[1][3], "xxx...xxx")) << tables[7].cells[1][3];
  EXPECT_EQ(tables[7].cells[2][0], "... and 1 more");
  for (const std::string& line : tables[7].lines) EXPECT_LE(DisplayWidth(line), 100u) << line;
}

// A long error keeps its cause (after the last ": ") in view; the context is left out.
TEST(FormatSummaryTablesTest, FailedChunkErrorShowsItsCauseFirst) {
  v1::Measurement measurement = FullMeasurement();
  v1::ChunkMetrics& chunks = *measurement.mutable_metrics()->mutable_chunks();
  v1::FailedChunk& failed = *chunks.add_failed_chunks();
  failed.set_file("/cache/11494177edbf7063/QCD_PtHat-400/QCD_PtHat-400_1.rcol");
  failed.set_error_text(
      "dijet processor, dataset QCD_PtHat-400, file /cache/11494177edbf7063/QCD_PtHat-400/"
      "QCD_PtHat-400_1.rcol: columnar file /cache/11494177edbf7063/QCD_PtHat-400/"
      "QCD_PtHat-400_1.rcol: CRC mismatch in column Jet_eta basket 0");
  TableOptions options;
  options.unicode = false;
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, options), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 8u);
  ASSERT_EQ(tables[7].title, "Failed Chunks");
  EXPECT_EQ(tables[7].cells[0][3], "... CRC mismatch in column Jet_eta basket 0");
}

// A TaskVine chunk has no file: the table names its task, as the findings do.
TEST(FormatSummaryTablesTest, FailedChunkWithoutAFileIsNamedByItsTask) {
  v1::Measurement measurement = FullMeasurement();
  v1::ChunkMetrics& chunks = *measurement.mutable_metrics()->mutable_chunks();
  v1::FailedChunk& by_task = *chunks.add_failed_chunks();
  by_task.set_task_id("45");
  by_task.set_error_text("TASK 45 DONE RESULT_MISSING");
  v1::FailedChunk& unnamed = *chunks.add_failed_chunks();
  unnamed.set_error_text("lost");
  TableOptions options;
  options.unicode = false;
  const std::vector<ParsedTable> tables =
      ParseTables(FormatSummaryTables(measurement, options), "|", kAsciiBoxStarts);
  ASSERT_EQ(tables.size(), 8u);
  ASSERT_EQ(tables[7].title, "Failed Chunks");
  ASSERT_EQ(tables[7].cells.size(), 2u);
  EXPECT_EQ(tables[7].cells[0],
            (std::vector<std::string>{"task 45", "N/A", "0", "TASK 45 DONE RESULT_MISSING"}));
  EXPECT_EQ(tables[7].cells[1][0], "N/A (not reported)");
}

TEST(FormatSummaryTablesTest, CpuSplitProcessMemoryHostBuildAndWarnings) {
  v1::Measurement measurement = FullMeasurement();
  measurement.mutable_metadata()->set_backend("threadpool");
  v1::HostFacts& host = *measurement.mutable_metadata()->mutable_host_facts();
  host.set_online_cpus(2);
  host.set_usable_cpus(1);
  host.set_cpu_model("Test CPU");
  host.set_load_average_1m_start(0.5);
  host.set_load_average_1m_end(3.25);
  v1::BuildInfo& build = *measurement.mutable_metadata()->mutable_analysis_build();
  build.set_build_mode("fastbuild");
  build.set_compiler("gcc 12.2.0");
  build.set_optimized(false);
  v1::Warning& warning = *measurement.add_warnings();
  warning.set_code("oversubscribed");
  warning.set_message("4 worker threads on 1 usable CPU");
  v1::CpuMetrics& cpu = *measurement.mutable_metrics()->mutable_cpu();
  cpu.set_chunk_wall_seconds(10);
  cpu.set_chunk_cpu_seconds(4);
  cpu.set_chunk_run_queue_wait_seconds(5);
  cpu.set_chunk_blocked_seconds(1);
  v1::WorkerMetrics& workers = *measurement.mutable_metrics()->mutable_workers();
  workers.set_memory_is_process_wide(true);
  workers.set_threads_sharing_memory(4);
  measurement.mutable_metrics()->mutable_chunks()->set_memory_delta_source(
      v1::MEMORY_SOURCE_SHARED_PROCESS_RSS);
  const std::string text = FormatSummaryTables(measurement, TableOptions{false});
  EXPECT_TRUE(
      absl::StrContains(text, "Machine: 2 online CPUs (1 usable), Test CPU, load 0.50 -> 3.25\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "Measured code: fastbuild, gcc 12.2.0 (NOT optimised)\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "WARNING: 4 worker threads on 1 usable CPU\n")) << text;
  const std::vector<ParsedTable> tables = ParseTables(text, "|", kAsciiBoxStarts);
  ExpectAligned(tables);
  const auto value = [&](const std::string& metric) -> std::string {
    for (const ParsedTable& table : tables) {
      for (const auto& row : table.rows) {
        if (row.first == metric) return row.second;
      }
    }
    return "<missing>";
  };
  bool split = false;
  for (const ParsedTable& table : tables) {
    if (table.title != "Chunk Time Split") continue;
    split = true;
    EXPECT_EQ(table.cells, (std::vector<std::vector<std::string>>{
                               {"On CPU", "4.00 s", "40.0%"},
                               {"Waiting for a CPU (run queue)", "5.00 s", "50.0%"},
                               {"Blocked (I/O, locks, sleep)", "1.00 s", "10.0%"},
                               {"Total", "10.0 s", "100.0%"}}));
  }
  EXPECT_TRUE(split) << text;
  EXPECT_EQ(value("Peak Memory (process RSS, shared by 4 threads)"), "376.53 MiB");
  EXPECT_EQ(value("Mean Process RSS Delta per Chunk"),
            "18.20 MiB (shared process: not attributable to chunks)");
}

TEST(UseUnicodeTablesTest, FalseWhenNoColorIsSetOrStdoutIsNotATerminal) {
  ASSERT_EQ(setenv("NO_COLOR", "1", 1), 0);
  EXPECT_FALSE(UseUnicodeTables());
  ASSERT_EQ(unsetenv("NO_COLOR"), 0);
  if (isatty(STDOUT_FILENO) != 1) {
    EXPECT_FALSE(UseUnicodeTables());  // Bazel captures test output in a file.
  } else {
    EXPECT_TRUE(UseUnicodeTables());
  }
}

TEST(FormatSummaryTablesTest, FindingsOpenTheOutputWrappedToTheWidth) {
  v1::Measurement measurement = FullMeasurement();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.set_findings_evaluated(true);
  v1::Finding& finding = *metrics.add_findings();
  finding.set_severity(v1::Finding::SEVERITY_CRITICAL);
  finding.set_code("cpu_starvation");
  finding.set_title("CPU starvation: chunks waited for a CPU 38% of their time");
  // Every rule checked: no line on rule states after the findings.
  v1::RuleEvaluation& rule = *metrics.add_rule_evaluations();
  rule.set_code("cpu_starvation");
  rule.set_evaluated(true);
  rule.set_fired(true);
  finding.set_evidence(std::string(30, 'a') + " " + std::string(30, 'b') + " " +
                       std::string(30, 'c'));
  finding.set_suggestion("Use at most 1 worker threads.");
  TableOptions options;
  options.unicode = false;
  options.width = 80;
  const std::string text = FormatSummaryTables(measurement, options);
  EXPECT_TRUE(
      absl::StrContains(text,
                        "Elapsed: 13.7 s\n\nFindings (1)\n"
                        "  CRITICAL  CPU starvation: chunks waited for a CPU 38% of their time\n"
                        "            " +
                            std::string(30, 'a') + " " + std::string(30, 'b') +
                            "\n"
                            "            " +
                            std::string(30, 'c') +
                            "\n"
                            "            Try: Use at most 1 worker threads.\n\n"))
      << text;
  metrics.clear_findings();
  metrics.clear_rule_evaluations();
  EXPECT_TRUE(absl::StrContains(FormatSummaryTables(measurement, options), "\nFindings: none ("));
}

void AddRule(v1::AggregatedMetrics& metrics, const std::string& code, bool evaluated, bool fired,
             const std::string& reason) {
  v1::RuleEvaluation& e = *metrics.add_rule_evaluations();
  e.set_code(code);
  e.set_evaluated(evaluated);
  e.set_fired(fired);
  e.set_reason(reason);
}

TEST(FormatFindingsTest, NoneSaysHowManyRulesWereCheckedAndWhichWereNot) {
  v1::Measurement measurement;
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.set_findings_evaluated(true);
  AddRule(metrics, "cpu_starvation", false, false, "no run-queue figures or thread count");
  AddRule(metrics, "io_bound", true, false, "");
  AddRule(metrics, "stragglers", false, false, "no chunk records");
  AddRule(metrics, "data_lost", true, false, "");
  TableOptions options;
  options.width = 200;
  EXPECT_EQ(FormatFindings(measurement, options),
            "Findings: none of the 2 rules checked fired; not evaluated: cpu_starvation (no "
            "run-queue figures or thread count); stragglers (no chunk records)\n");
  // Wrapped under "Findings: " on a narrow terminal.
  options.width = 60;
  const std::string narrow = FormatFindings(measurement, options);
  EXPECT_TRUE(absl::StrContains(narrow, "\n          ")) << narrow;
  // Every rule checked: no "not evaluated" part.
  for (v1::RuleEvaluation& e : *metrics.mutable_rule_evaluations()) e.set_evaluated(true);
  options.width = 200;
  EXPECT_EQ(FormatFindings(measurement, options), "Findings: none of the 4 rules checked fired\n");
}

TEST(FormatFindingsTest, FindingsAreFollowedByTheRulesNotEvaluated) {
  v1::Measurement measurement;
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.set_findings_evaluated(true);
  v1::Finding& finding = *metrics.add_findings();
  finding.set_severity(v1::Finding::SEVERITY_WARNING);
  finding.set_code("io_bound");
  finding.set_title("I/O-bound");
  AddRule(metrics, "io_bound", true, true, "");
  AddRule(metrics, "debug_build", false, false, "no build info");
  TableOptions options;
  options.width = 100;
  EXPECT_TRUE(absl::StrContains(FormatFindings(measurement, options),
                                "  WARNING   I/O-bound\n  Not evaluated: debug_build (no build "
                                "info).\n"))
      << FormatFindings(measurement, options);
}

TEST(FormatFindingsTest, OldMeasurementsSayTheRuleStatesAreUnknown) {
  v1::Measurement measurement;
  measurement.mutable_metrics()->set_findings_evaluated(true);
  TableOptions options;
  options.width = 200;
  EXPECT_TRUE(absl::StrContains(FormatFindings(measurement, options),
                                "which rules could be checked is unknown"));
  EXPECT_FALSE(absl::StrContains(FormatFindings(measurement, options), "rules checked fired"));
}

TEST(FormatSummaryTablesTest, TablesFitTheWidthByElidingTheMiddleOfLongNames) {
  v1::Measurement measurement = FullMeasurement();
  const std::string long_name =
      "/eos/cms/store/mc/RunIISummer20UL18NanoAODv9/" + std::string(40, 'x') + "/dataset_end";
  measurement.mutable_metrics()->mutable_chunks()->mutable_per_dataset(0)->set_dataset(long_name);
  for (const bool unicode : {false, true}) {
    TableOptions options;
    options.unicode = unicode;
    options.width = 100;
    const std::string text = FormatSummaryTables(measurement, options);
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      EXPECT_LE(DisplayWidth(line), 100u) << line;
    }
    EXPECT_TRUE(absl::StrContains(text, "/eos/cms/")) << text;
    EXPECT_TRUE(absl::StrContains(text, "/dataset_end")) << text;
    EXPECT_TRUE(absl::StrContains(text, unicode ? "\u2026" : "...")) << text;
  }
  TableOptions unlimited;
  unlimited.width = -1;
  EXPECT_TRUE(absl::StrContains(FormatSummaryTables(measurement, unlimited), long_name));
}

TEST(FormatDurationTest, ThreeSignificantDigitsBelowAMinute) {
  EXPECT_EQ(FormatDuration(0.0), "0 s");
  EXPECT_EQ(FormatDuration(0.1416), "142 ms");  // UX study P7: was "0.1s"
  EXPECT_EQ(FormatDuration(0.1484), "148 ms");
  EXPECT_EQ(FormatDuration(0.1576), "158 ms");
  EXPECT_EQ(FormatDuration(0.0152), "15.2 ms");
  EXPECT_EQ(FormatDuration(0.00123), "1.23 ms");
  EXPECT_EQ(FormatDuration(0.09994), "99.9 ms");
  EXPECT_EQ(FormatDuration(0.99996), "1.00 s");  // rounding carries into the next unit
  EXPECT_EQ(FormatDuration(0.00085), "850 \u00B5s");
  EXPECT_EQ(FormatDuration(4.2e-7), "420 ns");
  EXPECT_EQ(FormatDuration(-0.02), "-20.0 ms");
  EXPECT_EQ(FormatDuration(1.234), "1.23 s");
  EXPECT_EQ(FormatDuration(12.34), "12.3 s");
  EXPECT_EQ(FormatDuration(59.96), "60.0 s");
  EXPECT_EQ(FormatDuration(-5.0), "-5.00 s");
}

TEST(FormatDurationTest, WholeSecondsFromAMinute) {
  EXPECT_EQ(FormatDuration(60.0), "1m 0s");
  EXPECT_EQ(FormatDuration(61.9), "1m 1s");  // Truncates, as the original does.
  EXPECT_EQ(FormatDuration(3599.9), "59m 59s");
  EXPECT_EQ(FormatDuration(3600.0), "1h 0m 0s");
  EXPECT_EQ(FormatDuration(3723.0), "1h 2m 3s");
  EXPECT_EQ(FormatDuration(90061.5), "25h 1m 1s");
}

TEST(FormatDurationTest, NonFiniteAndHugeValuesDoNotCrash) {
  EXPECT_EQ(FormatDuration(std::nan("")), "N/A");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "N/A");
  EXPECT_EQ(FormatDuration(-std::numeric_limits<double>::infinity()), "N/A");
  const std::string huge = FormatDuration(1e300);
  EXPECT_TRUE(absl::EndsWith(huge, "s")) << huge;
  EXPECT_TRUE(absl::StrContains(huge, "h ")) << huge;
}

TEST(FormatBytesTest, BinaryUnitsLabelledAsSuch) {
  EXPECT_EQ(FormatBytes(0), "0.00 B");
  EXPECT_EQ(FormatBytes(1023), "1023.00 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(5e9), "4.66 GiB");
  EXPECT_EQ(FormatBytes(3.0 * 1024 * kMiB * 1024), "3.00 TiB");
  EXPECT_EQ(FormatBytes(2.5 * 1024 * 1024 * kMiB * 1024), "2.50 PiB");
  EXPECT_EQ(FormatBytes(4096.0 * 1024 * 1024 * kMiB * 1024), "4096.00 PiB");  // No larger unit.
}

TEST(FormatBytesTest, NeverPrints1024OfAUnit) {
  EXPECT_EQ(FormatBytes(1023.999), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1023.99), "1023.99 B");
}

TEST(FormatBytesTest, NegativeAndNonFiniteValues) {
  EXPECT_EQ(FormatBytes(-1.5 * kMiB), "-1.50 MiB");
  EXPECT_EQ(FormatBytes(-100), "-100.00 B");
  EXPECT_EQ(FormatBytes(std::nan("")), "N/A");
  EXPECT_EQ(FormatBytes(std::numeric_limits<double>::infinity()), "N/A");
}

// Issue #16: the run header printed a crafted start time as "292277026596-12-04"; the text and
// Markdown outputs share it.
TEST(FormatRunHeaderTest, AnAbsurdStartTimeIsShownAsInvalid) {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("m");
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(9223372036854775807);
  measurement.mutable_metadata()->set_elapsed_seconds(3);
  const std::string header = FormatRunHeader(measurement);
  EXPECT_TRUE(
      absl::StrContains(header, "Started: N/A (invalid: 9223372036854775807 s)\nElapsed: 3.00 s"))
      << header;
}

}  // namespace
}  // namespace roastcoffea
