#include "aggregation/workflow.h"

#include <cstdint>

namespace roastcoffea {
namespace aggregation_internal {
namespace {

struct ReportTotals {
  int64_t events = 0;
  int64_t compressed_bytes = 0;
  int64_t uncompressed_bytes = 0;
  double process_time_seconds = 0;
};

ReportTotals TotalsFromDatasets(const v1::WorkflowReport& report) {
  ReportTotals totals;
  for (const v1::DatasetCounters& dataset : report.datasets()) {
    totals.events += dataset.events();
    totals.compressed_bytes += dataset.compressed_bytes_read();
    totals.uncompressed_bytes += dataset.uncompressed_bytes_read();
    totals.process_time_seconds += dataset.process_time_seconds();
  }
  return totals;
}

ReportTotals TotalsFromReport(const v1::WorkflowReport& report, double elapsed_seconds) {
  // Documented error of the original (reference §2.1, §6.8): without "bytesread" it drops the
  // whole report, so events and process time become 0 too. Here only the bytes are 0.
  ReportTotals totals;
  totals.events = report.events();
  totals.compressed_bytes = report.has_compressed_bytes_read() ? report.compressed_bytes_read() : 0;
  totals.uncompressed_bytes =
      report.has_uncompressed_bytes_read() ? report.uncompressed_bytes_read() : 0;
  // As the original: no process time means the elapsed time stands in for it.
  totals.process_time_seconds =
      report.has_process_time_seconds() ? report.process_time_seconds() : elapsed_seconds;
  return totals;
}

}  // namespace

v1::WorkflowMetrics ComputeWorkflowMetrics(const v1::WorkflowReport& report,
                                           double elapsed_seconds) {
  // The original's custom metrics (per-dataset counters) replace the report's totals.
  const ReportTotals totals = report.datasets_size() > 0
                                  ? TotalsFromDatasets(report)
                                  : TotalsFromReport(report, elapsed_seconds);
  const double elapsed = elapsed_seconds;
  const double events = static_cast<double>(totals.events);
  const double bytes = static_cast<double>(totals.compressed_bytes);
  const double cpu = totals.process_time_seconds;

  v1::WorkflowMetrics workflow;
  workflow.set_elapsed_time_seconds(elapsed);
  workflow.set_total_events(totals.events);
  workflow.set_total_cpu_time_seconds(cpu);
  workflow.set_total_bytes_read(totals.compressed_bytes);
  workflow.set_total_uncompressed_bytes_read(totals.uncompressed_bytes);
  // The report's chunk count, also when chunk records later give their own count.
  workflow.set_num_chunks(report.chunks());
  if (elapsed > 0) {
    workflow.set_data_rate_gbps(bytes * 8 / 1e9 / elapsed);
    workflow.set_data_rate_mbytes_per_second(bytes / 1e6 / elapsed);
    workflow.set_event_rate_elapsed_khz(events / elapsed / 1000);
  }
  if (cpu > 0) workflow.set_event_rate_cpu_total_khz(events / cpu / 1000);
  if (report.chunks() > 0) {
    workflow.set_avg_cpu_time_per_chunk_seconds(cpu / static_cast<double>(report.chunks()));
  }
  if (totals.compressed_bytes > 0 && totals.uncompressed_bytes > 0) {
    workflow.set_compression_factor(static_cast<double>(totals.uncompressed_bytes) / bytes);
  }
  return workflow;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
