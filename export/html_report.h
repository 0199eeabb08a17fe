// One self-contained HTML file for a measurement: a headline (key figures and the findings), a
// contents list, the summary tables (export/tables.h), the plots (export/report_plots.h) as
// inline SVG in a grid by group, the profile and the run's metadata. No script, no external
// resource (a Content-Security-Policy forbids any), so it opens offline in any browser; the
// layout fits windows from 800 px wide up without horizontal scrolling. Every string from the
// measurement (names, datasets, workers, configuration, error text) is HTML-escaped.
//
// Thread-safety: pure except WriteHtmlReport (writes one file). Cost: that of the plots.
#ifndef ROASTCOFFEA_EXPORT_HTML_REPORT_H_
#define ROASTCOFFEA_EXPORT_HTML_REPORT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "export/report_chunks.h"
#include "export/report_plots.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct HtmlReportOptions {
  ReportPlotOptions plots;
};

// The page. Its <title> is "roastcoffea report: <name>"; <section id="headline"> holds up to
// six key figures (<div class="kpi">, labelled as the summary tables' rows) and the findings
// (severity, evidence, what to try); each summary table is a <table class="summary"> with a
// <caption> of the table's title; each plot group is an <h2 id="plots-<n>"> then a
// <div class="plot-grid"> of <figure class="plot" id="plot-<id>"> holding its <svg> and, when
// the plot leaves something out, a <figcaption> saying what; a plot replaced by a sentence is
// an <li id="plot-<id>"> in the <ul class="plot-notes"> after its group.
// When the measurement has profiles, a last "Profile" section holds the flame graph merged over
// every worker (<figure class="flame-graph">, hover titles, no script) and its top exclusive
// stacks (<table class="profile-stacks">).
std::string RenderHtmlReport(const v1::Measurement& measurement,
                             const HtmlReportOptions& options = {});
// The same with the chunk records given apart (`measurement`'s own are not read): a saved
// run's records streamed into `chunks` (export/report_chunks.h), never all held at once.
std::string RenderHtmlReport(const v1::Measurement& measurement, const ReportChunks& chunks,
                             const HtmlReportOptions& options = {});

// Writes RenderHtmlReport to `path` atomically (a temporary file in the same directory, then
// rename), replacing an existing report. Errors name the path and the OS error.
absl::Status WriteHtmlReport(const v1::Measurement& measurement, const std::string& path,
                             const HtmlReportOptions& options = {});
absl::Status WriteHtmlReport(const v1::Measurement& measurement, const ReportChunks& chunks,
                             const std::string& path, const HtmlReportOptions& options = {});

// &, <, >, " and ' as entities; control characters other than tab and newline removed.
std::string HtmlEscape(absl::string_view text);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_HTML_REPORT_H_
