// The plots of a measurement, as SVG (export/svg_plot.h): the original tool's plots
// (docs/reference.md §1.9) that have data, plus a per-worker Gantt chart of chunks. Used by the
// HTML report.
//
// Thread-safety: pure function. Cost: linear in samples and chunk records (the throughput
// timeline is 100 samples x chunks).
#ifndef ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_
#define ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_

#include <string>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ReportPlot {
  std::string id;     // stable, e.g. "worker-count"; unique within a report
  std::string title;  // the chart's title, e.g. "Worker Count Over Time"
  std::string svg;    // a complete <svg> element
};

struct ReportPlotOptions {
  // Per-worker charts draw a legend up to this many workers, then say "Showing N workers".
  size_t max_legend_entries = 10;
};

// Every plot that has data, in this order (id: title):
//   worker-count: Worker Count Over Time                       (tracking worker_count)
//   memory-utilization: Memory Utilization Over Time           (mean, min-max band; needs limits)
//   memory-per-worker: Memory Utilization Per Worker Over Time
//   cpu-utilization: CPU Utilization Over Time                 (mean, min-max band)
//   cpu-per-worker: CPU Utilization Per Worker Over Time
//   occupancy: Worker Occupancy Over Time
//   executing-tasks: Executing Tasks Per Worker Over Time
//   active-tasks: Worker Activity Over Time
//   total-active-tasks: Total Active Tasks Over Time
//   throughput: Data Throughput Over Time                      (chunk records or chunk_info)
//   runtime-distribution: Chunk Runtime Distribution
//   runtime-vs-events: Chunk Runtime vs Number of Events
//   compression-ratio: Compression Ratio Distribution Across Files
//   bytes-read-percent: Bytes Read Percentage Distribution
//   branches-per-chunk: Branches Accessed Per Chunk
//   bytes-per-chunk: Bytes Accessed Per Chunk (Compressed vs Uncompressed)
//   task-cpu-io: CPU vs I/O Time per Task                      (fine metrics, context "execute")
//   task-bytes-read: Bytes Read per Task
//   task-overhead: Compression & Serialization Overhead per Task
//   efficiency-summary: Efficiency Metrics Summary
//   resource-summary: Resource Utilization Summary             (with worker tracking)
//   chunk-gantt: Chunks per Worker Thread                      (chunk records with times)
// Time axes are UTC clock times. Tracking series are drawn by their kind (TrackingData
// worker_count_kind, WorkerSeries.kind): STEP series as steps (each value held until the next
// change; changes at one instant in stored order), SAMPLED as lines. The mean/min-max and total
// charts take a STEP worker's held value at every instant of its life, a SAMPLED worker's
// samples where it has them.
std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportPlotOptions& options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_
