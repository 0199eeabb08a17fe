// The plots of a measurement, as SVG (export/svg_plot.h), for the HTML report. Renderers only:
// derived series (read rate, running chunks, Gantt lanes) come from aggregation/timeline.h.
// Time axes are seconds since the run's start (TimelineOriginUnixNs). A plot whose data is
// constant or would repeat another plot is replaced by one sentence (ReportPlot.note).
//
// Thread-safety: pure function. Cost: O(samples + chunk records x log); the output is bounded
// (at most kMaxScatterPoints points, kMaxLinePoints per line across workers and, above
// kMaxGanttChunks chunks, time bins per lane).
#ifndef ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_
#define ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "export/report_chunks.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

class ReportWorkerLines;

struct ReportPlot {
  std::string id;     // stable, e.g. "worker-count"; unique within a report
  std::string title;  // the chart's title, e.g. "Worker Count Over Time"
  std::string group;  // the report's section, e.g. "Workers over time"
  // A complete <svg> element; empty when `note` replaces the plot.
  std::string svg;
  // One sentence: why there is no plot (constant data), or what the plot leaves out.
  std::string note;
};

struct ReportPlotOptions {
  // Per-worker charts draw a legend up to this many workers, then say "Showing N workers"
  // (and the memory and CPU charts show the mean and min-max across workers instead).
  size_t max_legend_entries = 10;
  // The per-worker charts' lines made beforehand, with the same origin and max_legend_entries
  // (`collect report` streams them from a saved run: export/report_worker_lines.h); null: made
  // from the measurement's tracking.
  const ReportWorkerLines* worker_lines = nullptr;
};

// Scatter plots draw at most this many points (every k-th chunk above it, said in the note).
inline constexpr size_t kMaxScatterPoints = 4000;
// A line across workers (their mean and range, or their sum) draws at most this many points;
// above, it is averaged in this many equal time bins (said in the note).
inline constexpr size_t kMaxLinePoints = 2000;
// Drawn in time bins, the Gantt chart has at most this many rows: above, each row is a run of
// consecutive worker threads (said in the note).
inline constexpr size_t kMaxGanttRows = 100;
// The Gantt chart draws each chunk up to kMaxGanttChunks (export/report_chunks.h); above, each
// lane is drawn in time bins (busy fraction as opacity, the dominant dataset as colour).

// The plots that apply to the measurement, in this order (id: title):
//   Workers over time
//     worker-count: Worker Count Over Time                   (tracking worker_count)
//     memory: Memory Over Time                               (MiB per worker, limit dashed)
//     cpu: CPU Utilization Over Time
//     occupancy: Worker Occupancy Over Time
//     executing-tasks: Executing Tasks Per Worker Over Time
//     active-tasks: Active Tasks (Executing + Queued) Per Worker Over Time
//   Chunks over time
//     chunk-gantt: Chunks per Worker Thread                  (coloured by dataset, sections)
//     running-chunks: Chunks Running Over Time
//     throughput: Data Throughput Over Time                  (bytes read by chunks, MiB/s)
//   Chunks
//     runtime-distribution: Chunk Runtime Distribution
//     runtime-vs-events: Chunk Runtime vs Number of Events
//     bytes-per-dataset: Bytes Read per Dataset
//     branches-per-chunk: Branches Accessed Per Chunk
//     bytes-accessed-per-chunk: Bytes Accessed Per Chunk
//   Files
//     compression-ratio: Compression Ratio Distribution Across Files
//     bytes-read-percent: Bytes Read Percentage Distribution
//   Fine metrics
//     task-cpu-io: CPU and Off-CPU Time per Task (CPU / run queue / blocked, or off CPU not
//                  split)                                (fine metrics, context "execute")
//     task-overhead: Compression & Serialization Overhead per Task
// Tracking series are drawn by their kind (STEP: steps; SAMPLED: lines). Workers with identical
// memory or CPU series (threads of one process) are drawn once, named for all of them.
std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportPlotOptions& options = {});
// The same with the chunk records given apart, in their report form (`measurement`'s own
// chunks are not read): what `collect report` uses, streaming the records of a saved run.
std::vector<ReportPlot> BuildReportPlots(const v1::Measurement& measurement,
                                         const ReportChunks& chunks,
                                         const ReportPlotOptions& options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_PLOTS_H_
