#include "export/tables.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "export/display_width.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

constexpr absl::string_view kNoWorkerTracking = "N/A (no worker tracking)";

struct Row {
  std::string metric;
  std::string value;
};

struct Table {
  std::string title;
  std::vector<Row> rows;
};

// The characters a table is drawn with.
struct BoxStyle {
  // Top border: left corner, horizontal, middle junction, right corner. Same for the rule under
  // the header and the bottom border.
  absl::string_view top[4];
  absl::string_view header_rule[4];
  absl::string_view bottom[4];
  absl::string_view header_vertical;
  absl::string_view row_vertical;
  absl::string_view bullet;
};

// Rich's default box (HEAVY_HEAD), so the tables look like the original's.
constexpr BoxStyle kUnicodeBox = {
    {"\u250F", "\u2501", "\u2533", "\u2513"},
    {"\u2521", "\u2501", "\u2547", "\u2529"},
    {"\u2514", "\u2500", "\u2534", "\u2518"},
    "\u2503",
    "\u2502",
    "\u2022",
};

constexpr BoxStyle kAsciiBox = {
    {"+", "-", "+", "+"}, {"+", "-", "+", "+"}, {"+", "-", "+", "+"}, "|", "|", "-",
};

std::string Repeat(absl::string_view text, size_t count) {
  std::string result;
  result.reserve(text.size() * count);
  for (size_t i = 0; i < count; ++i) result.append(text.data(), text.size());
  return result;
}

std::string PadRight(absl::string_view text, size_t width) {
  const size_t text_width = DisplayWidth(text);
  return absl::StrCat(text, std::string(text_width < width ? width - text_width : 0, ' '));
}

std::string PadLeft(absl::string_view text, size_t width) {
  const size_t text_width = DisplayWidth(text);
  return absl::StrCat(std::string(text_width < width ? width - text_width : 0, ' '), text);
}

std::string Rule(const absl::string_view (&parts)[4], const std::vector<size_t>& widths) {
  // Each cell has one space of padding on either side.
  std::string out(parts[0]);
  for (size_t c = 0; c < widths.size(); ++c) {
    if (c > 0) absl::StrAppend(&out, parts[2]);
    absl::StrAppend(&out, Repeat(parts[1], widths[c] + 2));
  }
  absl::StrAppend(&out, parts[3], "\n");
  return out;
}

std::string RenderColumns(const TextTable& table, const BoxStyle& box) {
  const size_t columns = table.header.size();
  std::vector<size_t> widths(columns, 0);
  for (size_t c = 0; c < columns; ++c) widths[c] = DisplayWidth(table.header[c]);
  for (const std::vector<std::string>& row : table.rows) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  const auto render_row = [&](const std::vector<std::string>& row, absl::string_view vertical,
                              bool header) {
    std::string line(vertical);
    for (size_t c = 0; c < columns; ++c) {
      const absl::string_view cell = c < row.size() ? absl::string_view(row[c]) : "";
      const bool right = !header && c < table.right_aligned.size() && table.right_aligned[c];
      absl::StrAppend(&line, " ", right ? PadLeft(cell, widths[c]) : PadRight(cell, widths[c]),
                      " ", vertical);
    }
    absl::StrAppend(&line, "\n");
    return line;
  };

  // The title is centred over the table, as rich does it.
  size_t table_width = 1;
  for (size_t width : widths) table_width += width + 3;
  const size_t title_width = DisplayWidth(table.title);
  std::string out = absl::StrCat(
      std::string(title_width < table_width ? (table_width - title_width) / 2 : 0, ' '),
      table.title, "\n");
  absl::StrAppend(&out, Rule(box.top, widths));
  absl::StrAppend(&out, render_row(table.header, box.header_vertical, true));
  absl::StrAppend(&out, Rule(box.header_rule, widths));
  for (const std::vector<std::string>& row : table.rows) {
    absl::StrAppend(&out, render_row(row, box.row_vertical, false));
  }
  absl::StrAppend(&out, Rule(box.bottom, widths));
  return out;
}

std::string RenderTable(const Table& table, const BoxStyle& box) {
  TextTable columns{table.title, {"Metric", "Value"}, {}, {}};
  columns.rows.reserve(table.rows.size());
  for (const Row& row : table.rows) columns.rows.push_back({row.metric, row.value});
  return RenderColumns(columns, box);
}

// Python's "{:,}".
std::string WithThousandsSeparators(int64_t value) {
  // Through uint64_t so that the most negative value does not overflow.
  uint64_t magnitude =
      value < 0 ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  std::string digits = absl::StrCat(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? absl::StrCat("-", out) : out;
}

// Python's "{:.1%}".
std::string Percent(double fraction) { return absl::StrFormat("%.1f%%", fraction * 100.0); }

std::string Bullet(const BoxStyle& box, absl::string_view label) {
  return absl::StrCat("  ", box.bullet, " ", label);
}

constexpr absl::string_view kNotReported = "N/A (not reported)";

Table ThroughputTable(const v1::AggregatedMetrics& metrics) {
  const v1::WorkflowMetrics& workflow = metrics.workflow();
  Table table{"Throughput Metrics", {}};
  if (workflow.has_data_rate_gbps()) {
    // Older producers may not fill the MB/s field; it is the same rate in other units.
    const double mbytes_per_second = workflow.has_data_rate_mbytes_per_second()
                                         ? workflow.data_rate_mbytes_per_second()
                                         : workflow.data_rate_gbps() * 1000.0 / 8.0;
    table.rows.push_back({"Data Rate", absl::StrFormat("%.2f Gbps (%.1f MB/s)",
                                                       workflow.data_rate_gbps(),
                                                       mbytes_per_second)});
  } else {
    table.rows.push_back({"Data Rate", "N/A (bytes read not reported)"});
  }
  if (workflow.has_total_bytes_read()) {
    table.rows.push_back({"Total Bytes Read (reported)",
                          FormatBytes(static_cast<double>(workflow.total_bytes_read()))});
  }
  if (workflow.has_total_uncompressed_bytes_read()) {
    table.rows.push_back({"Total Bytes Read (uncompressed)",
                          FormatBytes(static_cast<double>(workflow.total_uncompressed_bytes_read()))});
  }
  if (workflow.has_compression_factor()) {
    table.rows.push_back(
        {"Compression Factor", absl::StrFormat("%.2fx", workflow.compression_factor())});
  }
  if (metrics.has_fine() && metrics.fine().total_bytes_memory_read() > 0.0) {
    table.rows.push_back(
        {"Memory Read (fine metrics)", FormatBytes(metrics.fine().total_bytes_memory_read())});
  }
  return table;
}

Table EventTable(const v1::AggregatedMetrics& metrics) {
  const v1::WorkflowMetrics& workflow = metrics.workflow();
  Table table{"Event Processing Metrics", {}};
  table.rows.push_back({"Total Events", workflow.has_total_events()
                                            ? WithThousandsSeparators(workflow.total_events())
                                            : std::string(kNotReported)});
  table.rows.push_back({"Event Rate (Elapsed Time)",
                        workflow.has_event_rate_elapsed_khz()
                            ? absl::StrFormat("%.1f kHz", workflow.event_rate_elapsed_khz())
                            : std::string(kNotReported)});
  if (metrics.cpu().has_event_rate_per_cpu_second_khz()) {
    table.rows.push_back({"Event Rate (per CPU-second)",
                          absl::StrFormat("%.1f kHz",
                                          metrics.cpu().event_rate_per_cpu_second_khz())});
  }
  // The original's "Event Rate (Total CPU)": per second of summed chunk wall time.
  if (workflow.has_summed_chunk_wall_seconds() && workflow.has_event_rate_cpu_total_khz()) {
    table.rows.push_back({"Event Rate (per summed chunk wall time)",
                          absl::StrFormat("%.1f kHz", workflow.event_rate_cpu_total_khz())});
  }
  table.rows.push_back({"Event Rate (per tracked core)",
                        !workflow.has_total_events() ? std::string(kNotReported)
                        : metrics.efficiency().has_event_rate_core_khz()
                            ? absl::StrFormat("%.1f kHz/core",
                                              metrics.efficiency().event_rate_core_khz())
                            : std::string(kNoWorkerTracking)});
  return table;
}

// The first table: measured CPU against the cores the workers had (aggregation/cpu_metrics.h).
Table CpuTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  const v1::CpuMetrics& cpu = metrics.cpu();
  Table table{"CPU Efficiency", {}};
  if (!metrics.has_cpu()) {
    // Written by a build before measured CPU was aggregated: say so rather than "not measured".
    table.rows.push_back({"CPU Efficiency", "N/A (not in measurements of this tool version)"});
    return table;
  }
  if (cpu.has_cpu_efficiency_fraction()) {
    table.rows.push_back({"CPU Efficiency", Percent(cpu.cpu_efficiency_fraction())});
  } else {
    table.rows.push_back(
        {"CPU Efficiency", cpu.has_cpu_seconds() ? "N/A (capacity unknown)"
                                                 : "N/A (CPU not measured)"});
  }
  table.rows.push_back({Bullet(box, "CPU Time (measured)"),
                        cpu.has_cpu_seconds() ? FormatDuration(cpu.cpu_seconds())
                                              : std::string("N/A")});
  if (cpu.has_cpu_seconds() && !cpu.cpu_source().empty()) {
    table.rows.push_back({"    measured by", ReplaceControlCharacters(cpu.cpu_source())});
  }
  if (!cpu.has_cpu_seconds() && !cpu.unknown_reason().empty()) {
    table.rows.push_back({"    why", ReplaceControlCharacters(cpu.unknown_reason())});
  }
  if (cpu.has_core_seconds_available()) {
    table.rows.push_back({Bullet(box, "Core-Seconds Available"),
                          absl::StrFormat("%.1f core-s", cpu.core_seconds_available())});
    if (!cpu.capacity_source().empty()) {
      table.rows.push_back(
          {"    computed as", ReplaceControlCharacters(cpu.capacity_source())});
    }
  }
  if (cpu.has_usable_cores()) {
    table.rows.push_back({Bullet(box, "Usable Cores (average)"),
                          absl::StrFormat("%.2f", cpu.usable_cores())});
  }
  if (cpu.has_chunk_wall_seconds() && cpu.chunk_wall_seconds() > 0 &&
      cpu.has_chunk_cpu_seconds()) {
    const double wall = cpu.chunk_wall_seconds();
    table.rows.push_back({"Chunk Time Split", absl::StrCat(FormatDuration(wall), " of chunks")});
    table.rows.push_back({Bullet(box, "On CPU"),
                          absl::StrCat(FormatDuration(cpu.chunk_cpu_seconds()), " (",
                                       Percent(cpu.chunk_cpu_seconds() / wall), ")")});
    if (cpu.has_chunk_run_queue_wait_seconds()) {
      table.rows.push_back(
          {Bullet(box, "Waiting for a CPU"),
           absl::StrCat(FormatDuration(cpu.chunk_run_queue_wait_seconds()), " (",
                        Percent(cpu.chunk_run_queue_wait_seconds() / wall), ")")});
      table.rows.push_back(
          {Bullet(box, "Blocked (I/O, locks, sleep)"),
           absl::StrCat(FormatDuration(cpu.chunk_blocked_seconds()), " (",
                        Percent(cpu.chunk_blocked_seconds() / wall), ")")});
    } else {
      const double off_cpu = std::max(0.0, wall - cpu.chunk_cpu_seconds());
      table.rows.push_back(
          {Bullet(box, "Off CPU (waiting or blocked)"),
           absl::StrCat(FormatDuration(off_cpu), " (", Percent(off_cpu / wall), ")")});
    }
  }
  return table;
}

Table ResourceTable(const v1::AggregatedMetrics& metrics) {
  Table table{"Resource Utilization", {}};
  const bool tracked = metrics.has_workers();
  const v1::WorkerMetrics& workers = metrics.workers();
  const auto tracked_value = [&](bool known, const std::string& value) {
    return tracked && known ? value : std::string(kNoWorkerTracking);
  };
  const bool cores_known = workers.has_total_cores() && workers.total_cores() > 0.0;
  const double concurrency = metrics.efficiency().speedup_factor();
  const bool wall_reported = metrics.workflow().has_summed_chunk_wall_seconds();

  table.rows.push_back({"Workers (Time-Averaged)",
                        tracked_value(true, absl::StrFormat("%.2f", workers.avg_workers()))});
  table.rows.push_back({"Peak Workers", tracked_value(true, absl::StrCat(workers.peak_workers()))});
  table.rows.push_back(
      {"Cores per Worker", tracked_value(workers.has_cores_per_worker(),
                                         absl::StrFormat("%.1f", workers.cores_per_worker()))});
  table.rows.push_back(
      {"Total Cores", tracked_value(workers.has_total_cores(),
                                    absl::StrFormat("%.0f", workers.total_cores()))});
  // Under churn the workers ever seen overstate capacity: the time-weighted cores are what the
  // core-seconds figures divide by.
  if (tracked && workers.has_avg_cores_over_window()) {
    table.rows.push_back({"Cores (Time-Averaged)",
                          absl::StrFormat("%.2f", workers.avg_cores_over_window())});
  }
  // The original's speedup_factor and core_efficiency: how busy the workers were (summed chunk
  // wall time), not how much CPU they got. CPU Efficiency above is the CPU figure.
  table.rows.push_back({"Busy-Worker Concurrency (summed chunk wall / elapsed)",
                        wall_reported ? absl::StrFormat("%.2f", concurrency)
                                      : std::string(kNotReported)});
  table.rows.push_back(
      {"Worker Occupancy (concurrency / total cores)",
       !wall_reported ? std::string(kNotReported)
                      : tracked_value(cores_known,
                                      cores_known ? Percent(concurrency / workers.total_cores())
                                                  : "")});
  const v1::EfficiencyMetrics& efficiency = metrics.efficiency();
  if (tracked && wall_reported && efficiency.has_core_efficiency_over_core_seconds_fraction()) {
    table.rows.push_back({"Worker Occupancy (over core-seconds)",
                          Percent(efficiency.core_efficiency_over_core_seconds_fraction())});
  }
  if (tracked && workers.has_core_seconds()) {
    table.rows.push_back({"Tracked Core-Seconds",
                          absl::StrFormat("%.1f core-s", workers.core_seconds())});
  }
  // No worker has ever used 0 bytes: zero means the backend does not measure memory use
  // (TaskVine logs give limits only), which must not read as a measured zero.
  const bool memory_measured =
      workers.peak_memory_bytes() > 0.0 || workers.avg_memory_per_worker_bytes() > 0.0;
  const std::string not_measured = "N/A (not measured by this backend)";
  // Thread-pool "workers" are threads of one process: its resident memory, counted once.
  const std::string scope =
      workers.memory_is_process_wide()
          ? absl::StrCat("(process RSS, shared by ", workers.threads_sharing_memory(),
                         workers.threads_sharing_memory() == 1 ? " thread)" : " threads)")
          : std::string("(per worker)");
  table.rows.push_back(
      {absl::StrCat("Peak Memory ", scope),
       tracked ? (memory_measured ? FormatBytes(workers.peak_memory_bytes()) : not_measured)
               : tracked_value(false, "")});
  table.rows.push_back({absl::StrCat("Avg Memory ", scope),
                        tracked ? (memory_measured
                                       ? FormatBytes(workers.avg_memory_per_worker_bytes())
                                       : not_measured)
                                : tracked_value(false, "")});
  return table;
}

// "12.3 µs": per-event times are far below FormatDuration's 0.1 s resolution.
std::string FormatMicroseconds(double seconds) {
  if (!std::isfinite(seconds)) return "N/A";
  return absl::StrFormat("%.1f \u00B5s", seconds * 1e6);
}

// The original's "Section Timing" block: the top kTopSections sections by total duration.
constexpr int kTopSections = 5;

void AppendSectionTiming(const v1::ChunkMetrics& chunks, Table* table) {
  std::vector<const v1::SectionSummary*> sections;
  // Bytes sections have no duration: their totals are in "Section Statistics", and here they
  // would read as 0.0s next to the timer of the same name.
  for (const v1::SectionSummary& section : chunks.sections()) {
    if (section.type() != "bytes") sections.push_back(&section);
  }
  if (sections.empty()) return;
  std::stable_sort(sections.begin(), sections.end(), [](const auto* a, const auto* b) {
    return a->total_duration_seconds() > b->total_duration_seconds();
  });
  if (sections.size() > kTopSections) sections.resize(kTopSections);
  table->rows.push_back({"", ""});
  table->rows.push_back({"Section Timing", ""});
  for (const v1::SectionSummary* section : sections) {
    std::string value = absl::StrCat(FormatDuration(section->total_duration_seconds()), " (",
                                     section->count(), "x)");
    if (section->type() == "memory" && section->has_mean_memory_delta_bytes()) {
      absl::StrAppend(&value, ", ", FormatBytes(section->mean_memory_delta_bytes()), " avg");
    }
    table->rows.push_back({absl::StrCat("  ", ReplaceControlCharacters(section->name())), value});
  }
}

// The chunk count the original shows: the chunk records' count overrides the report's.
int64_t NumChunks(const v1::AggregatedMetrics& metrics) {
  return metrics.has_chunks() ? metrics.chunks().num_chunks() : metrics.workflow().num_chunks();
}

Table TimingTable(const v1::AggregatedMetrics& metrics) {
  const v1::WorkflowMetrics& workflow = metrics.workflow();
  Table table{"Timing Breakdown", {}};
  table.rows.push_back({"Elapsed Time", FormatDuration(workflow.elapsed_time_seconds())});
  // Coffea's processtime: wall time summed over chunks. Never shown under a CPU label.
  table.rows.push_back({"Summed Chunk Wall Time (reported)",
                        workflow.has_summed_chunk_wall_seconds()
                            ? FormatDuration(workflow.summed_chunk_wall_seconds())
                            : std::string(kNotReported)});
  if (NumChunks(metrics) > 0) {
    table.rows.push_back({"Number of Chunks", WithThousandsSeparators(NumChunks(metrics))});
  }
  return table;
}

Table ChunkTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Chunk Metrics", {}};
  table.rows.push_back({"Total Chunks", absl::StrCat(NumChunks(metrics))});
  if (!metrics.has_chunks()) return table;  // Only the report's count is known.
  const v1::ChunkMetrics& chunks = metrics.chunks();

  if (chunks.num_failed_chunks() > 0) {
    table.rows.push_back({Bullet(box, "Successful"), absl::StrCat(chunks.num_successful_chunks())});
    table.rows.push_back({Bullet(box, "Failed"), absl::StrCat(chunks.num_failed_chunks())});
  }
  const v1::DistributionStats& duration = chunks.duration_seconds();
  if (duration.count() > 0) {
    table.rows.push_back({"Mean Chunk Time", FormatDuration(duration.mean())});
    table.rows.push_back({Bullet(box, "Min"), FormatDuration(duration.min())});
    table.rows.push_back({Bullet(box, "Max"), FormatDuration(duration.max())});
    if (duration.std() > 0.0) {
      table.rows.push_back({Bullet(box, "Std Dev"), FormatDuration(duration.std())});
    }
    if (duration.has_percentiles()) {
      const v1::Percentiles& p = duration.percentiles();
      table.rows.push_back({Bullet(box, "p50 / p90 / p95 / p99"),
                            absl::StrCat(FormatDuration(p.p50()), " / ", FormatDuration(p.p90()),
                                         " / ", FormatDuration(p.p95()), " / ",
                                         FormatDuration(p.p99()))});
    }
  }
  const v1::DistributionStats& per_event = chunks.time_per_event_seconds();
  if (per_event.count() > 0) {
    table.rows.push_back({"Mean Time/Event", FormatMicroseconds(per_event.mean())});
    if (per_event.has_percentiles()) {
      table.rows.push_back(
          {Bullet(box, "p50 / p99"), absl::StrCat(FormatMicroseconds(per_event.percentiles().p50()),
                                                  " / ",
                                                  FormatMicroseconds(per_event.percentiles().p99()))});
    }
  }
  const v1::DistributionStats& peak_live = chunks.peak_live_bytes();
  if (peak_live.count() > 0) {
    // Exact and per chunk: the chunk's own thread's heap (allocation counting).
    table.rows.push_back({"Mean Chunk Heap Peak (own thread)", FormatBytes(peak_live.mean())});
    table.rows.push_back({Bullet(box, "Max"), FormatBytes(peak_live.max())});
  }
  const v1::DistributionStats& memory = chunks.memory_delta_bytes();
  if (memory.count() > 0) {
    if (chunks.memory_delta_source() == v1::MEMORY_SOURCE_SHARED_PROCESS_RSS) {
      // Other threads' allocations and frees are in it: say so rather than attribute it.
      table.rows.push_back({"Mean Process RSS Delta per Chunk",
                            absl::StrCat(FormatBytes(memory.mean()),
                                         " (shared process: not attributable to chunks)")});
    } else {
      table.rows.push_back({"Mean Memory Delta (process RSS)", FormatBytes(memory.mean())});
    }
    table.rows.push_back({Bullet(box, "Min"), FormatBytes(memory.min())});
    table.rows.push_back({Bullet(box, "Max"), FormatBytes(memory.max())});
  }
  const v1::DistributionStats& events = chunks.events();
  if (events.count() > 0) {
    table.rows.push_back({"Mean Events/Chunk", absl::StrFormat("%.0f", events.mean())});
    table.rows.push_back({Bullet(box, "Min"), absl::StrFormat("%.0f", events.min())});
    table.rows.push_back({Bullet(box, "Max"), absl::StrFormat("%.0f", events.max())});
  }
  if (chunks.per_dataset_size() > 1) {
    table.rows.push_back({"", ""});
    table.rows.push_back({"Per-Dataset Breakdown", ""});
    for (const v1::DatasetChunkMetrics& dataset : chunks.per_dataset()) {
      const std::string name = dataset.dataset().empty() ? std::string("unknown")
                                                         : ReplaceControlCharacters(dataset.dataset());
      std::string value = absl::StrCat(dataset.num_chunks(), " chunks, ",
                                       FormatDuration(dataset.mean_duration_seconds()), " avg");
      const v1::DistributionStats& durations = dataset.duration_distribution_seconds();
      if (durations.count() > 0 && durations.has_percentiles()) {
        absl::StrAppend(&value, ", p50 ", FormatDuration(durations.percentiles().p50()), ", p95 ",
                        FormatDuration(durations.percentiles().p95()));
      }
      table.rows.push_back({absl::StrCat("  ", name), value});
    }
  }
  AppendSectionTiming(chunks, &table);
  return table;
}

// "Fine Metrics (from Dask Spans)": the original's rows, in its order and with its conditions.
// Engines that do not split thread time into CPU and the rest (Dask's task stream before
// spans, TaskVine) report other activities: their largest time totals, per task prefix.
Table ActivityTable(const v1::FineMetricsSummary& fine) {
  Table table{"Fine Metrics (activities)", {}};
  std::vector<const v1::ActivityTotal*> totals;
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.unit() == "seconds" && total.value() > 0.0) totals.push_back(&total);
  }
  std::sort(totals.begin(), totals.end(), [](const auto* a, const auto* b) {
    return a->value() != b->value() ? a->value() > b->value()
                                    : std::tie(a->task_prefix(), a->activity()) <
                                          std::tie(b->task_prefix(), b->activity());
  });
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < totals.size() && i < kShown; ++i) {
    table.rows.push_back({absl::StrCat(totals[i]->task_prefix(), ": ", totals[i]->activity()),
                          FormatDuration(totals[i]->value())});
  }
  if (totals.size() > kShown) {
    table.rows.push_back({absl::StrCat("(", totals.size() - kShown, " more)"), ""});
  }
  return table;
}


// Where the thread-time split comes from, for the fine-metrics table's title.
std::string FineTitle(absl::string_view backend) {
  if (backend == "threadpool") return "Thread Time Split (worker threads' CPU clocks)";
  // The collect window's span; the workload's own spans are a breakdown of it.
  if (backend == "dask") return "Fine Metrics (Dask: collect window)";
  if (backend.empty()) return "Fine Metrics";
  return absl::StrCat("Fine Metrics (", backend, ")");
}

Table FineTable(const v1::FineMetricsSummary& fine, absl::string_view backend,
                const BoxStyle& box) {
  Table table{FineTitle(backend), {}};
  table.rows.push_back({"Processor CPU Time", FormatDuration(fine.processor_cpu_time_seconds())});
  table.rows.push_back(
      {"Processor I/O & Waiting Time", FormatDuration(fine.processor_io_wait_time_seconds())});
  table.rows.push_back({"  CPU %", absl::StrFormat("%.1f%%", fine.processor_cpu_percent())});
  table.rows.push_back(
      {"  I/O & Wait %", absl::StrFormat("%.1f%%", fine.processor_io_wait_percent())});
  if (fine.overhead_cpu_time_seconds() > 0.0) {
    table.rows.push_back({"Overhead CPU Time", FormatDuration(fine.overhead_cpu_time_seconds())});
  }
  if (fine.overhead_io_wait_time_seconds() > 0.0) {
    table.rows.push_back({"Overhead I/O & Waiting Time",
                          FormatDuration(fine.overhead_io_wait_time_seconds())});
  }
  if (fine.disk_read_bytes() > 0.0) {
    table.rows.push_back({"Disk Read", FormatBytes(fine.disk_read_bytes())});
  }
  if (fine.disk_write_bytes() > 0.0) {
    table.rows.push_back({"Disk Write", FormatBytes(fine.disk_write_bytes())});
  }
  if (fine.total_compression_overhead_seconds() > 0.0) {
    table.rows.push_back(
        {"Compression Overhead", FormatDuration(fine.total_compression_overhead_seconds())});
    if (fine.compression_time_seconds() > 0.0) {
      table.rows.push_back(
          {Bullet(box, "Compress"), FormatDuration(fine.compression_time_seconds())});
    }
    if (fine.decompression_time_seconds() > 0.0) {
      table.rows.push_back(
          {Bullet(box, "Decompress"), FormatDuration(fine.decompression_time_seconds())});
    }
  }
  if (fine.total_serialization_overhead_seconds() > 0.0) {
    table.rows.push_back({"Serialization Overhead",
                          FormatDuration(fine.total_serialization_overhead_seconds())});
    if (fine.serialization_time_seconds() > 0.0) {
      table.rows.push_back(
          {Bullet(box, "Serialize"), FormatDuration(fine.serialization_time_seconds())});
    }
    if (fine.deserialization_time_seconds() > 0.0) {
      table.rows.push_back(
          {Bullet(box, "Deserialize"), FormatDuration(fine.deserialization_time_seconds())});
    }
  }
  return table;
}

// A SectionStats value in its kind's unit.
std::string SectionValue(v1::SectionRecord::Kind kind, double value) {
  switch (kind) {
    case v1::SectionRecord::KIND_MEMORY:
    case v1::SectionRecord::KIND_BYTES:
      return FormatBytes(value);
    default:
      return FormatDuration(value);
  }
}

// New: per-section statistics across chunks, the top `top_n` by total time (then by total).
Table SectionStatsTable(const v1::ChunkMetrics& chunks, int top_n) {
  std::vector<const v1::SectionStats*> sections;
  for (const v1::SectionStats& section : chunks.section_stats()) sections.push_back(&section);
  std::stable_sort(sections.begin(), sections.end(), [](const auto* a, const auto* b) {
    return a->total_duration_seconds() > b->total_duration_seconds();
  });
  const size_t shown = std::min(sections.size(), static_cast<size_t>(std::max(top_n, 0)));
  Table table{absl::StrCat("Section Statistics (top ", shown, " of ", sections.size(), ")"), {}};
  for (size_t i = 0; i < shown; ++i) {
    const v1::SectionStats& section = *sections[i];
    const v1::DistributionStats& values = section.values();
    std::string value = absl::StrCat("total ", SectionValue(section.kind(), section.total()));
    if (section.kind() == v1::SectionRecord::KIND_TIME) {
      absl::StrAppend(&value, " (", Percent(section.share_of_chunk_time_fraction()),
                      " of chunk time)");
    }
    absl::StrAppend(&value, ", mean ", SectionValue(section.kind(), values.mean()));
    if (values.has_percentiles()) {
      absl::StrAppend(&value, ", p50 ", SectionValue(section.kind(), values.percentiles().p50()),
                      ", p95 ", SectionValue(section.kind(), values.percentiles().p95()));
    }
    absl::StrAppend(&value, ", ", values.count(), " chunks");
    table.rows.push_back({ReplaceControlCharacters(section.name()), value});
  }
  return table;
}

// New: the failed chunks with their error text (first line, shortened), at most `limit`.
Table FailedChunksTable(const v1::ChunkMetrics& chunks, int limit) {
  Table table{"Failed Chunks", {}};
  constexpr size_t kMaxErrorColumns = 100;
  int shown = 0;
  for (const v1::FailedChunk& failed : chunks.failed_chunks()) {
    if (shown++ >= limit) break;
    std::string where = absl::StrCat(failed.file().empty() ? "?" : failed.file(), " [",
                                     failed.entry_start(), ", ", failed.entry_stop(), ")");
    if (failed.attempt() > 0) absl::StrAppend(&where, " attempt ", failed.attempt());
    std::string error = failed.error_text().substr(0, failed.error_text().find('\n'));
    if (error.size() > kMaxErrorColumns) error = absl::StrCat(error.substr(0, kMaxErrorColumns), "...");
    if (error.empty()) error = "(no error text)";
    table.rows.push_back({ReplaceControlCharacters(where), ReplaceControlCharacters(error)});
  }
  if (chunks.failed_chunks_size() > limit) {
    table.rows.push_back(
        {absl::StrCat("... and ", chunks.failed_chunks_size() - limit, " more"), ""});
  }
  return table;
}

std::string RunHeader(const v1::Measurement& measurement) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  std::string out;
  const auto line = [&](absl::string_view label, absl::string_view value) {
    if (!value.empty()) absl::StrAppend(&out, label, ": ", ReplaceControlCharacters(value), "\n");
  };
  line("Measurement", metadata.name());
  line("Backend", metadata.backend());
  line("Host", metadata.host());
  if (metadata.has_start_time()) {
    const absl::Time start = absl::FromUnixSeconds(metadata.start_time().seconds()) +
                             absl::Nanoseconds(metadata.start_time().nanos());
    line("Started", absl::StrCat(absl::FormatTime("%Y-%m-%d %H:%M:%S", start, absl::UTCTimeZone()),
                                 " UTC"));
  }
  const double elapsed = metadata.elapsed_seconds() > 0.0
                             ? metadata.elapsed_seconds()
                             : measurement.metrics().workflow().elapsed_time_seconds();
  line("Elapsed", FormatDuration(elapsed));
  if (metadata.has_host_facts()) line("Machine", DescribeHost(metadata.host_facts()));
  if (metadata.has_analysis_build()) {
    line("Measured code", DescribeBuild(metadata.analysis_build()));
  } else if (metadata.has_tool_build()) {
    line("collect build", DescribeBuild(metadata.tool_build()));
  }
  for (const v1::Warning& warning : measurement.warnings()) {
    line("WARNING", warning.message());
  }
  return out;
}

}  // namespace

std::string DescribeHost(const v1::HostFacts& host) {
  std::string out = absl::StrFormat("%d online CPUs", host.online_cpus());
  if (host.usable_cpus() > 0 && host.usable_cpus() != host.online_cpus()) {
    absl::StrAppendFormat(&out, " (%g usable)", host.usable_cpus());
  }
  if (!host.cpu_model().empty()) absl::StrAppend(&out, ", ", host.cpu_model());
  if (host.has_load_average_1m_start() || host.has_load_average_1m_end()) {
    absl::StrAppend(&out, ", load ",
                    host.has_load_average_1m_start()
                        ? absl::StrFormat("%.2f", host.load_average_1m_start())
                        : std::string("?"),
                    " -> ",
                    host.has_load_average_1m_end()
                        ? absl::StrFormat("%.2f", host.load_average_1m_end())
                        : std::string("?"));
  }
  if (host.has_steal_fraction()) {
    absl::StrAppend(&out, ", steal ", Percent(host.steal_fraction()));
  }
  return out;
}

std::string DescribeBuild(const v1::BuildInfo& build) {
  std::string out = build.build_mode().empty() ? std::string("unknown mode") : build.build_mode();
  if (!build.compiler().empty()) absl::StrAppend(&out, ", ", build.compiler());
  if (!build.optimized()) absl::StrAppend(&out, " (NOT optimised)");
  return out;
}

bool UseUnicodeTables() {
  return isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
}

namespace {

std::vector<Table> AllTables(const v1::Measurement& measurement, const TableOptions& options) {
  const BoxStyle& box = options.unicode ? kUnicodeBox : kAsciiBox;
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  std::vector<Table> tables = {CpuTable(metrics, box), ThroughputTable(metrics),
                               EventTable(metrics), ResourceTable(metrics), TimingTable(metrics)};
  if (metrics.has_fine()) {
    if (HasThreadTimeSplit(metrics.fine())) {
      tables.push_back(FineTable(metrics.fine(), measurement.metadata().backend(), box));
    } else if (Table activities = ActivityTable(metrics.fine()); !activities.rows.empty()) {
      tables.push_back(std::move(activities));
    }
  }
  if (NumChunks(metrics) > 0) tables.push_back(ChunkTable(metrics, box));
  if (metrics.has_chunks() && metrics.chunks().section_stats_size() > 0 &&
      options.top_sections > 0) {
    tables.push_back(SectionStatsTable(metrics.chunks(), options.top_sections));
  }
  if (metrics.has_chunks() && metrics.chunks().failed_chunks_size() > 0) {
    tables.push_back(FailedChunksTable(metrics.chunks(), options.max_failed_chunks));
  }
  return tables;
}

}  // namespace

std::vector<SummaryTable> BuildSummaryTables(const v1::Measurement& measurement,
                                             const TableOptions& options) {
  std::vector<SummaryTable> out;
  for (Table& table : AllTables(measurement, options)) {
    SummaryTable summary{std::move(table.title), {}};
    for (Row& row : table.rows) summary.rows.emplace_back(std::move(row.metric), std::move(row.value));
    out.push_back(std::move(summary));
  }
  return out;
}

std::string FormatSummaryTables(const v1::Measurement& measurement, const TableOptions& options) {
  const BoxStyle& box = options.unicode ? kUnicodeBox : kAsciiBox;
  std::string out = RunHeader(measurement);
  for (const Table& table : AllTables(measurement, options)) {
    absl::StrAppend(&out, "\n", RenderTable(table, box));
  }
  return out;
}

std::string FormatTextTable(const TextTable& table, const TableOptions& options) {
  return RenderColumns(table, options.unicode ? kUnicodeBox : kAsciiBox);
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return "N/A";
  // Below 0.1 s the original's "%.1fs" prints 0.0s for every chunk of a fast analysis: there,
  // milli- and microseconds say what the time was. Zero stays the original's "0.0s".
  const double magnitude = std::fabs(seconds);
  if (magnitude > 0.0 && magnitude < 1e-3) return absl::StrFormat("%.1fµs", seconds * 1e6);
  if (magnitude > 0.0 && magnitude < 0.1) return absl::StrFormat("%.1fms", seconds * 1e3);
  if (seconds < 60.0) return absl::StrFormat("%.1fs", seconds);
  // Whole units by truncation, as the original's int() does; computed in floating point so
  // that huge values cannot overflow an integer.
  const double whole_seconds = std::floor(seconds);
  if (seconds < 3600.0) {
    return absl::StrFormat("%.0fm %.0fs", std::floor(whole_seconds / 60.0),
                           std::fmod(whole_seconds, 60.0));
  }
  return absl::StrFormat("%.0fh %.0fm %.0fs", std::floor(whole_seconds / 3600.0),
                         std::floor(std::fmod(whole_seconds, 3600.0) / 60.0),
                         std::fmod(whole_seconds, 60.0));
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "N/A";
  static constexpr absl::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  constexpr size_t kLastUnit = sizeof(kUnits) / sizeof(kUnits[0]) - 1;
  size_t unit = 0;
  // 1023.995 would print as "1024.00": move to the next unit instead.
  while (unit < kLastUnit && std::fabs(bytes) >= 1023.995) {
    bytes /= 1024.0;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", bytes, kUnits[unit]);
}

}  // namespace roastcoffea
