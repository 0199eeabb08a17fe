#include "tools/report_command.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "export/html_report.h"
#include "export/report_chunks.h"
#include "export/report_worker_stream.h"
#include "ingest/any_measurement.h"
#include "store/measurement_io.h"
#include "tools/command_failure.h"
#include "tools/paths.h"

namespace roastcoffea {
namespace {

// The measurement without its chunk records, which go to `chunks` as they are read: a saved
// run's are streamed from its files one at a time (a million records held as protobufs took
// 1.4 GB). The original's per-record chunk_info, which only stands in for records, is read
// only when there are none. The worker series of a measurement saved in parts are cut to their
// ends: the charts stream them (StreamReportWorkerLines); a smaller one's are read whole.
absl::StatusOr<v1::Measurement> LoadForReport(const std::string& directory, ReportChunks* chunks,
                                              WorkerLinesSurvey* survey) {
  LoadOptions without_records;
  without_records.chunk_records = false;
  without_records.chunk_info = false;
  without_records.whole_worker_series = !SavedInParts(directory);
  if (!without_records.whole_worker_series) {  // the charts' first pass, as the series are read
    without_records.visit_whole_worker_series = [survey](const v1::WorkerSeries& series,
                                                         const v1::Measurement& read_so_far) {
      survey->Visit(series, read_so_far);
    };
  }
  absl::StatusOr<v1::Measurement> measurement = LoadAnyMeasurement(directory, {}, without_records);
  if (!measurement.ok()) return measurement;
  size_t records_read = 0;
  // Room for the records the metrics count (a damaged count only costs memory up to a bound).
  chunks->Reserve(static_cast<size_t>(
      std::clamp<int64_t>(measurement->metrics().chunks().num_chunks(), 0, int64_t{1} << 26)));
  if (measurement->chunks_size() > 0) {  // not ours (read whole): its records are here
    for (const v1::ChunkRecord& record : measurement->chunks()) chunks->Add(record);
    measurement->clear_chunks();
  } else if (absl::Status streamed = ForEachSerializedChunkRecord(
                 directory,
                 [&](auto bytes) {
                   // Only the fields the plots read are parsed (the whole records were 0.4 s).
                   ++records_read;
                   if (chunks->AddSerialized(bytes)) return absl::OkStatus();
                   return absl::DataLossError(absl::StrCat("'", directory, "': chunk record ",
                                                           records_read, " does not parse"));
                 });
             !streamed.ok() && !absl::IsNotFound(streamed)) {  // NotFound: not ours, no records
    return streamed;
  }
  if (chunks->size() > 0) return measurement;
  LoadOptions with_chunk_info;
  with_chunk_info.chunk_records = false;
  with_chunk_info.whole_worker_series = without_records.whole_worker_series;
  return LoadAnyMeasurement(directory, {}, with_chunk_info);
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedReport>> LoadReport(const std::string& directory) {
  auto report = std::make_unique<LoadedReport>();
  WorkerLinesSurvey survey(report->options.plots.max_legend_entries);
  absl::StatusOr<v1::Measurement> measurement = LoadForReport(directory, &report->chunks, &survey);
  if (!measurement.ok()) return measurement.status();
  report->measurement = *std::move(measurement);
  // The worker charts read each series as it is streamed, twice (the first time while loading),
  // never all the samples at once (10^4 workers x 360 samples loaded whole were 170 MB).
  absl::StatusOr<ReportWorkerLines> worker_lines =
      StreamReportWorkerLines(directory, report->measurement, report->chunks,
                              report->options.plots.max_legend_entries, &survey);
  if (!worker_lines.ok()) return worker_lines.status();
  report->worker_lines.emplace(*std::move(worker_lines));
  report->options.plots.worker_lines = &*report->worker_lines;
  return report;
}

ExitCode ReportCommand(const ReportConfig& config, const std::string& user_directory) {
  const std::string directory = MeasurementDirectoryFor(ResolveUserPath(user_directory));
  absl::StatusOr<std::unique_ptr<LoadedReport>> report = LoadReport(directory);
  if (!report.ok()) return Fail(report.status());
  const v1::Measurement& measurement = (*report)->measurement;
  const ReportChunks& chunks = (*report)->chunks;
  const HtmlReportOptions& options = (*report)->options;
  const std::string& requested = config.html_output;
  if (!requested.empty()) {
    const std::string output = ResolveUserPath(requested);
    if (absl::Status written = WriteHtmlReport(measurement, chunks, output, options);
        !written.ok()) {
      return Fail(written);
    }
    std::cout << "HTML report written to " << output << "\n";
    return ExitCode::kOk;
  }
  // A shared measurement is often read-only: like `profile`, fall back to the current directory,
  // then $TMPDIR, and say so.
  const std::string base = directory.substr(directory.find_last_of('/') + 1);
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string file =
      (base.empty() || base == "." || base == ".." ? "measurement" : base) + ".html";
  const std::vector<std::string> candidates = {
      directory + ".html", ResolveUserPath(file),
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp", "/", file)};
  absl::Status last;
  for (const std::string& output : candidates) {
    last = WriteHtmlReport(measurement, chunks, output, options);
    if (last.ok()) {
      std::cout << "HTML report written to " << output << "\n";
      return ExitCode::kOk;
    }
    std::cerr << "collect: note: cannot write the report to " << output << ": " << last.message()
              << "\n";
  }
  return Fail(last);
}

}  // namespace roastcoffea
