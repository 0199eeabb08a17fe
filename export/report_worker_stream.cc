#include "export/report_worker_stream.h"

#include <cstdint>

#include "absl/status/status.h"
#include "aggregation/timeline.h"
#include "store/measurement_io.h"

namespace roastcoffea {

absl::StatusOr<ReportWorkerLines> StreamReportWorkerLines(absl::string_view directory,
                                                          const v1::Measurement& measurement,
                                                          const ReportChunks& chunks,
                                                          size_t max_legend_entries) {
  // The origin BuildReportPlots takes: the series' first instants are kept by their cut.
  const int64_t origin = TimelineOriginUnixNs(measurement, chunks.timeline());
  if (!SavedInParts(directory)) return ReportWorkerLinesOf(measurement, origin, max_legend_entries);
  ReportWorkerLines lines(origin, max_legend_entries);
  const absl::Status surveyed = ForEachWorkerSeries(directory, [&](const v1::WorkerSeries& s) {
    lines.Survey(s);
    return absl::OkStatus();
  });
  if (!surveyed.ok()) return surveyed;
  if (lines.NeedsLines()) {
    const absl::Status added = ForEachWorkerSeries(directory, [&](const v1::WorkerSeries& s) {
      lines.AddLines(s);
      return absl::OkStatus();
    });
    if (!added.ok()) return added;
  }
  lines.Finish();
  return lines;
}

}  // namespace roastcoffea
