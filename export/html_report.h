// One self-contained HTML file for a measurement: its metadata, the summary tables
// (export/tables.h) and every plot that has data (export/report_plots.h) as inline SVG. No
// script, no external resource (a Content-Security-Policy forbids any), so it opens offline in
// any browser. Every string from the measurement (names, datasets, workers, configuration,
// error text) is HTML-escaped.
//
// Thread-safety: pure except WriteHtmlReport (writes one file). Cost: that of the plots.
#ifndef ROASTCOFFEA_EXPORT_HTML_REPORT_H_
#define ROASTCOFFEA_EXPORT_HTML_REPORT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "export/report_plots.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct HtmlReportOptions {
  ReportPlotOptions plots;
};

// The page. Its <title> is "roastcoffea report: <name>"; each summary table is a
// <table class="summary"> with a <caption> of the table's title; each plot is a
// <figure class="plot" id="plot-<id>"> holding its <svg> and a <figcaption> of its title.
// When the measurement has profiles, a last "Profile" section holds the flame graph merged over
// every worker (<figure class="flame-graph">, hover titles, no script) and its top exclusive
// stacks (<table class="profile-stacks">).
std::string RenderHtmlReport(const v1::Measurement& measurement,
                             const HtmlReportOptions& options = {});

// Writes RenderHtmlReport to `path` atomically (a temporary file in the same directory, then
// rename), replacing an existing report. Errors name the path and the OS error.
absl::Status WriteHtmlReport(const v1::Measurement& measurement, const std::string& path,
                             const HtmlReportOptions& options = {});

// &, <, >, " and ' as entities; control characters other than tab and newline removed.
std::string HtmlEscape(absl::string_view text);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_HTML_REPORT_H_
