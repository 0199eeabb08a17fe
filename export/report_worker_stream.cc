#include "export/report_worker_stream.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "aggregation/timeline.h"
#include "store/measurement_io.h"

namespace roastcoffea {

namespace {

// The second pass over the series of `directory` into `lines` (surveyed), then Finish.
absl::Status AddLines(absl::string_view directory, ReportWorkerLines& lines) {
  if (lines.NeedsLines()) {
    // Only the columns the lines read are parsed (4 of a TaskVine series' 6 are not).
    const absl::Status added = ForEachWorkerSeriesColumns(
        directory, ReportWorkerLines::LineColumns(), [&](const v1::WorkerSeries& s) {
          lines.AddLines(s);
          return absl::OkStatus();
        });
    if (!added.ok()) return added;
  }
  lines.Finish();
  return absl::OkStatus();
}

}  // namespace

void WorkerLinesSurvey::Visit(const v1::WorkerSeries& series, const v1::Measurement& read_so_far) {
  if (unusable_) return;
  if (!lines_.has_value()) {
    // The origin from the start time alone (else it depends on every instant: not known yet).
    v1::Measurement metadata_only;
    *metadata_only.mutable_metadata() = read_so_far.metadata();
    origin_ = TimelineOriginUnixNs(metadata_only, TimelineChunks());
    if (origin_ <= 0) {
      unusable_ = true;
      return;
    }
    lines_.emplace(origin_, max_legend_entries_);
  }
  lines_->Survey(series);
  ++visited_;
}

absl::StatusOr<ReportWorkerLines> StreamReportWorkerLines(absl::string_view directory,
                                                          const v1::Measurement& measurement,
                                                          const ReportChunks& chunks,
                                                          size_t max_legend_entries,
                                                          WorkerLinesSurvey* survey) {
  // The origin BuildReportPlots takes: the series' first instants are kept by their cut.
  const int64_t origin = TimelineOriginUnixNs(measurement, chunks.timeline());
  if (!SavedInParts(directory)) return ReportWorkerLinesOf(measurement, origin, max_legend_entries);
  if (survey != nullptr && survey->lines_.has_value() && !survey->unusable_ &&
      survey->origin_ == origin && survey->visited_ == measurement.tracking().workers_size() &&
      survey->max_legend_entries_ == max_legend_entries) {
    ReportWorkerLines lines = *std::move(survey->lines_);
    survey->lines_.reset();
    survey->used_ = true;
    if (absl::Status added = AddLines(directory, lines); !added.ok()) return added;
    return lines;
  }
  ReportWorkerLines lines(origin, max_legend_entries);
  const absl::Status surveyed = ForEachWorkerSeries(directory, [&](const v1::WorkerSeries& s) {
    lines.Survey(s);
    return absl::OkStatus();
  });
  if (!surveyed.ok()) return surveyed;
  if (absl::Status added = AddLines(directory, lines); !added.ok()) return added;
  return lines;
}

}  // namespace roastcoffea
