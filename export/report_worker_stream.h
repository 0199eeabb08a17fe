// The report's per-worker chart lines (export/report_worker_lines.h) streamed from a saved
// measurement: two passes over its worker series (store/measurement_io.h ForEachWorkerSeries),
// one series held at a time, so that `collect report` loads the measurement with its series cut
// to their ends (LoadOptions::whole_worker_series = false) and never holds the samples.
//
// Thread-safety: no shared state. Cost: two reads of the tracking.
#ifndef ROASTCOFFEA_EXPORT_REPORT_WORKER_STREAM_H_
#define ROASTCOFFEA_EXPORT_REPORT_WORKER_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "export/report_chunks.h"
#include "export/report_worker_lines.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The first pass over the worker series made while LoadMeasurement reads them
// (LoadOptions::visit_whole_worker_series, a measurement saved in parts), when the run's start
// time gives the plots' origin in advance: StreamReportWorkerLines then reads the series once
// more, not twice. Used only when it surveyed every series with the origin the plots take.
class WorkerLinesSurvey {
 public:
  explicit WorkerLinesSurvey(size_t max_legend_entries) : max_legend_entries_(max_legend_entries) {}
  // For LoadOptions::visit_whole_worker_series.
  void Visit(const v1::WorkerSeries& series, const v1::Measurement& read_so_far);
  // StreamReportWorkerLines used it for its first pass.
  bool used() const { return used_; }

 private:
  friend absl::StatusOr<ReportWorkerLines> StreamReportWorkerLines(absl::string_view,
                                                                   const v1::Measurement&,
                                                                   const ReportChunks&, size_t,
                                                                   WorkerLinesSurvey*);
  size_t max_legend_entries_;
  std::optional<ReportWorkerLines> lines_;
  int64_t origin_ = 0;
  int visited_ = 0;
  bool unusable_ = false;  // no start time before the series
  bool used_ = false;
};

// The lines for the report of `measurement` (loaded from `directory`) with `chunks` its
// records, as BuildReportPlots draws them with `max_legend_entries`. Streamed from a measurement
// saved in parts (store's SavedInParts), which `measurement` may hold with its series cut;
// anything else (at most 64 MiB in binary, the original tool's, a checkpoint) is read whole
// once, and its lines are those of `measurement`'s own series, which must then be whole.
// Errors of the reading, naming the file.
// With `survey` (made while `measurement` was read), its pass stands for the first one when
// usable.
absl::StatusOr<ReportWorkerLines> StreamReportWorkerLines(absl::string_view directory,
                                                          const v1::Measurement& measurement,
                                                          const ReportChunks& chunks,
                                                          size_t max_legend_entries,
                                                          WorkerLinesSurvey* survey = nullptr);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_WORKER_STREAM_H_
