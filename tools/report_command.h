// `collect report DIR`: one self-contained HTML file (metadata, tables, SVG plots) for a saved
// measurement.
#ifndef ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_
#define ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "export/html_report.h"
#include "export/report_chunks.h"
#include "export/report_worker_lines.h"
#include "schema/measurement.pb.h"
#include "tools/exit_code.h"

namespace roastcoffea {

struct ReportConfig {
  // --html_output: the file to write; empty: <DIR>.html, else ./<name>.html, else
  // $TMPDIR/<name>.html (a shared measurement is often read-only).
  std::string html_output;
};

ExitCode ReportCommand(const ReportConfig& config, const std::string& directory);

// What the page of a saved measurement is drawn from, read as `collect report` reads it: the
// measurement without its records, the records' plotted fields streamed into `chunks`, the
// worker charts' lines streamed from the series (options.plots.worker_lines points at
// `worker_lines`). For the report mode and for benchmarks that time it.
struct LoadedReport {
  v1::Measurement measurement;
  ReportChunks chunks;
  std::optional<ReportWorkerLines> worker_lines;
  HtmlReportOptions options;
};
absl::StatusOr<std::unique_ptr<LoadedReport>> LoadReport(const std::string& directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_REPORT_COMMAND_H_
