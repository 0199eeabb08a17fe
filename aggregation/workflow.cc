#include "aggregation/workflow.h"

#include <cstdint>
#include <optional>

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// What the report says it processed; nullopt where it does not say.
struct ReportTotals {
  std::optional<int64_t> events;
  std::optional<int64_t> compressed_bytes;
  std::optional<int64_t> uncompressed_bytes;
  std::optional<double> process_time_seconds;
};

ReportTotals TotalsFromDatasets(const v1::WorkflowReport& report) {
  ReportTotals totals{0, 0, 0, 0.0};
  int64_t uncompressed = 0;
  for (const v1::DatasetCounters& dataset : report.datasets()) {
    *totals.events += dataset.events();
    *totals.compressed_bytes += dataset.compressed_bytes_read();
    uncompressed += dataset.uncompressed_bytes_read();
    *totals.process_time_seconds += dataset.process_time_seconds();
  }
  // Per-dataset counters have no "absent": a reader that does not count leaves 0. No analysis
  // reads 0 bytes, so a 0 sum is unknown unless the report itself says it counted.
  if (uncompressed > 0) totals.uncompressed_bytes = uncompressed;
  if (*totals.compressed_bytes == 0 && !report.has_compressed_bytes_read()) {
    totals.compressed_bytes.reset();
  }
  return totals;
}

ReportTotals TotalsFromReport(const v1::WorkflowReport& report) {
  // Documented error of the original (docs/reference.md §2.1, §6.8): without "bytesread" it drops
  // the whole report, so events and process time become 0 too. Here only the bytes are unknown.
  ReportTotals totals;
  if (report.has_events()) totals.events = report.events();
  if (report.has_compressed_bytes_read()) totals.compressed_bytes = report.compressed_bytes_read();
  if (report.has_uncompressed_bytes_read()) {
    totals.uncompressed_bytes = report.uncompressed_bytes_read();
  }
  if (report.has_process_time_seconds())
    totals.process_time_seconds = report.process_time_seconds();
  return totals;
}

}  // namespace

v1::WorkflowMetrics ComputeWorkflowMetrics(const v1::WorkflowReport* report,
                                           double elapsed_seconds) {
  const double elapsed = elapsed_seconds;
  v1::WorkflowMetrics workflow;
  workflow.set_elapsed_time_seconds(elapsed);
  if (report == nullptr) return workflow;

  // The original's custom metrics (per-dataset counters) replace the report's totals.
  const ReportTotals totals =
      report->datasets_size() > 0 ? TotalsFromDatasets(*report) : TotalsFromReport(*report);
  // The original's total_cpu_time is the summed chunk wall time; unknown without it (the
  // original's stand-in, the elapsed time, would make speedup and efficiency up).
  const std::optional<double> cpu = totals.process_time_seconds;
  if (cpu.has_value()) {
    workflow.set_total_cpu_time_seconds(*cpu);
    workflow.set_summed_chunk_wall_seconds(*cpu);
  }
  // The report's chunk count, also when chunk records later give their own count.
  workflow.set_num_chunks(report->chunks());
  if (cpu.has_value() && report->chunks() > 0) {
    workflow.set_avg_cpu_time_per_chunk_seconds(*cpu / static_cast<double>(report->chunks()));
  }
  if (totals.events.has_value()) {
    const double events = static_cast<double>(*totals.events);
    workflow.set_total_events(*totals.events);
    if (elapsed > 0) workflow.set_event_rate_elapsed_khz(events / elapsed / 1000);
    if (cpu.value_or(0) > 0) workflow.set_event_rate_cpu_total_khz(events / *cpu / 1000);
  }
  if (totals.compressed_bytes.has_value()) {
    const double bytes = static_cast<double>(*totals.compressed_bytes);
    workflow.set_total_bytes_read(*totals.compressed_bytes);
    if (elapsed > 0) {
      workflow.set_data_rate_gbps(bytes * 8 / 1e9 / elapsed);
      workflow.set_data_rate_mbytes_per_second(bytes / 1e6 / elapsed);
    }
  }
  if (totals.uncompressed_bytes.has_value()) {
    workflow.set_total_uncompressed_bytes_read(*totals.uncompressed_bytes);
    if (totals.compressed_bytes.value_or(0) > 0 && *totals.uncompressed_bytes > 0) {
      workflow.set_compression_factor(static_cast<double>(*totals.uncompressed_bytes) /
                                      static_cast<double>(*totals.compressed_bytes));
    }
  }
  return workflow;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
