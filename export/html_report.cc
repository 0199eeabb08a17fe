#include "export/html_report.h"

#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "store/atomic_file.h"
#include "export/flame_graph.h"
#include "export/profile_tables.h"
#include "export/svg_plot.h"
#include "export/tables.h"

namespace roastcoffea {
namespace {

constexpr char kStyle[] = R"css(
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; }
caption { font-weight: bold; text-align: left; padding: 0.3em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.7em; text-align: left; vertical-align: top; }
th { background: #eef4f8; }
td.value { font-family: monospace; }
figure.plot { margin: 1.5em 0; } figure.plot svg { max-width: 100%; height: auto; }
figure.flame-graph { margin: 1.5em 0; } figure.flame-graph svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #555; }
.tables { display: flex; flex-wrap: wrap; gap: 0 2em; }
.finding { border-left: 6px solid #888; padding: 0.2em 0.8em; margin: 0.6em 0; background: #f6f6f6; }
.finding p { margin: 0.25em 0; }
.finding.critical { border-color: #b00; background: #fdecec; }
.finding.warning { border-color: #c60; background: #fff4e5; }
.finding.info { border-color: #36c; background: #eef3fb; }
.finding-title { font-weight: bold; }
.severity { font-size: 0.8em; letter-spacing: 0.05em; margin-right: 0.4em; }
.try { font-style: italic; }
.warnings { border: 2px solid #c60; background: #fff4e5; padding: 0 1em; margin: 1em 0; }
.warnings h2 { margin-top: 0.5em; border: none; color: #a40; }
)css";

std::string Utc(const google::protobuf::Timestamp& time) {
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%d %H:%M:%S",
                       absl::FromUnixSeconds(time.seconds()) + absl::Nanoseconds(time.nanos()),
                       absl::UTCTimeZone()),
      " UTC");
}

// "Profile": the flame graph merged over every worker (hover titles only: the page's CSP
// forbids scripts) and its top exclusive stacks.
void AppendProfileSection(const v1::Measurement& measurement, std::string* out) {
  if (measurement.profiles_size() == 0) return;
  *out += "<h2>Profile</h2>\n";
  absl::StatusOr<v1::Profile> merged = MergedProfile(measurement);
  if (!merged.ok()) {
    absl::StrAppend(out, "<p class=\"profile-error\">The profiles cannot be shown: ",
                    XmlEscape(merged.status().message()), "</p>\n");
    return;
  }
  const size_t merged_count = ProfilesToMerge(measurement).size();
  FlameGraphOptions graph_options;
  graph_options.title = "Flame graph";
  graph_options.subtitle = absl::StrCat("all workers (", merged_count,
                                        merged_count == 1 ? " profile)" : " profiles merged)");
  graph_options.search_script = false;
  absl::StatusOr<FlameGraph> graph = RenderFlameGraph(*merged, graph_options);
  ProfileTableOptions table_options;
  table_options.table.unicode = true;
  // A page wraps long cells; elide only what would be unreadable anyway.
  table_options.max_frame_width = 80;
  table_options.max_stack_width = 160;
  absl::StatusOr<TextTable> table =
      TopStacksTable(*merged, "Top Stacks (all workers)", table_options);
  if (!graph.ok() || !table.ok()) {
    absl::StrAppend(out, "<p class=\"profile-error\">The profiles cannot be shown: ",
                    XmlEscape((graph.ok() ? table.status() : graph.status()).message()),
                    "</p>\n");
    return;
  }
  absl::StrAppend(out, "<p class=\"profile-header\">", HtmlEscape(ProfileHeader(*merged)),
                  merged_count > 1 ? absl::StrCat(" (merged over ", merged_count, " profiles)")
                                   : std::string(),
                  "</p>\n<figure class=\"flame-graph\" id=\"flame-graph\">\n", graph->svg,
                  "<figcaption>Flame graph: width is the share of samples; hover a frame for its "
                  "samples and seconds.</figcaption>\n</figure>\n");
  absl::StrAppend(out, "<table class=\"profile-stacks\">\n<caption>", HtmlEscape(table->title),
                  "</caption>\n<tr>");
  for (const std::string& column : table->header) {
    absl::StrAppend(out, "<th>", HtmlEscape(column), "</th>");
  }
  *out += "</tr>\n";
  for (const std::vector<std::string>& row : table->rows) {
    *out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool number = c < table->right_aligned.size() && table->right_aligned[c];
      absl::StrAppend(out, number ? "<td class=\"value\">" : "<td>", HtmlEscape(row[c]),
                      "</td>");
    }
    *out += "</tr>\n";
  }
  *out += "</table>\n";
}

void AppendFindings(const v1::Measurement& measurement, std::string* out) {
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  *out += "<section class=\"findings\" id=\"findings\">\n<h2>Findings</h2>\n";
  if (!metrics.findings_evaluated() || metrics.findings_size() == 0) {
    absl::StrAppend(out, "<p>", HtmlEscape(FormatFindings(measurement, TableOptions{})), "</p>\n");
  }
  for (const v1::Finding& finding : metrics.findings()) {
    const std::string severity = absl::AsciiStrToLower(SeverityLabel(finding.severity()));
    absl::StrAppend(out, "<div class=\"finding ", severity, "\">\n<p class=\"finding-title\">",
                    "<span class=\"severity\">", SeverityLabel(finding.severity()), "</span> ",
                    HtmlEscape(finding.title()), "</p>\n<p>", HtmlEscape(finding.evidence()),
                    "</p>\n<p class=\"try\">Try: ", HtmlEscape(finding.suggestion()),
                    "</p>\n</div>\n");
  }
  *out += "</section>\n";
}

}  // namespace

std::string HtmlEscape(absl::string_view text) { return XmlEscape(text); }

std::string RenderHtmlReport(const v1::Measurement& measurement,
                             const HtmlReportOptions& options) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  const std::string name = metadata.name().empty() ? "measurement" : metadata.name();
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n<title>roastcoffea report: ",
      HtmlEscape(name), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n<h1>",
      "roastcoffea report: ", HtmlEscape(name), "</h1>\n");

  // Findings first: what limited the run, then the warnings that change how numbers read.
  AppendFindings(measurement, &out);

  // Warnings: they change how every number below reads.
  if (measurement.warnings_size() > 0) {
    out += "<div class=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
    for (const v1::Warning& warning : measurement.warnings()) {
      absl::StrAppend(&out, "<li>", HtmlEscape(warning.message()), "</li>\n");
    }
    out += "</ul>\n</div>\n";
  }

  // Metadata.
  std::vector<std::pair<std::string, std::string>> rows;
  const auto row = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) rows.emplace_back(key, value);
  };
  row("Measurement", name);
  row("Backend", metadata.backend());
  row("Host", metadata.host());
  if (metadata.has_start_time()) row("Started", Utc(metadata.start_time()));
  if (metadata.has_end_time()) row("Ended", Utc(metadata.end_time()));
  row("Elapsed", FormatDuration(metadata.elapsed_seconds() > 0
                                    ? metadata.elapsed_seconds()
                                    : measurement.metrics().workflow().elapsed_time_seconds()));
  if (metadata.has_host_facts()) row("Machine", DescribeHost(metadata.host_facts()));
  if (metadata.has_host_facts() && !metadata.host_facts().kernel().empty()) {
    row("Kernel", metadata.host_facts().kernel());
  }
  if (metadata.has_analysis_build()) row("Measured code", DescribeBuild(metadata.analysis_build()));
  if (metadata.has_tool_build()) row("collect build", DescribeBuild(metadata.tool_build()));
  row("Tool version", metadata.tool_version());
  row("Command line", absl::StrJoin(metadata.command_line(), " "));
  // Sorted, so the page does not depend on the map's order.
  const std::map<std::string, std::string> configuration(metadata.configuration().begin(),
                                                         metadata.configuration().end());
  for (const auto& [key, value] : configuration) row(absl::StrCat("config: ", key), value);
  out += "<h2>Run</h2>\n<table class=\"metadata\">\n";
  for (const auto& [key, value] : rows) {
    absl::StrAppend(&out, "<tr><th>", HtmlEscape(key), "</th><td>", HtmlEscape(value),
                    "</td></tr>\n");
  }
  out += "</table>\n";

  // Tables.
  TableOptions table_options;
  table_options.unicode = true;
  out += "<h2>Summary</h2>\n<div class=\"tables\">\n";
  for (const SummaryTable& table : BuildSummaryTables(measurement, table_options)) {
    absl::StrAppend(&out, "<table class=\"summary\">\n<caption>", HtmlEscape(table.title),
                    "</caption>\n<tr>");
    for (const std::string& column : table.header) {
      absl::StrAppend(&out, "<th>", HtmlEscape(column), "</th>");
    }
    out += "</tr>\n";
    const bool key_value = table.header.size() == 2 && table.header[0] == "Metric";
    for (const std::vector<std::string>& cells : table.rows) {
      out += "<tr>";
      for (size_t c = 0; c < cells.size(); ++c) {
        const bool number = key_value ? c == 1
                                      : c < table.right_aligned.size() && table.right_aligned[c];
        absl::StrAppend(&out, number ? "<td class=\"value\">" : "<td>", HtmlEscape(cells[c]),
                        "</td>");
      }
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  out += "</div>\n";

  // Plots.
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement, options.plots);
  out += "<h2>Plots</h2>\n";
  if (plots.empty()) out += "<p>No plot has data in this measurement.</p>\n";
  for (const ReportPlot& plot : plots) {
    absl::StrAppend(&out, "<figure class=\"plot\" id=\"plot-", HtmlEscape(plot.id), "\">\n",
                    plot.svg, "<figcaption>", HtmlEscape(plot.title), "</figcaption>\n</figure>\n");
  }
  AppendProfileSection(measurement, &out);
  out += "</body>\n</html>\n";
  return out;
}

absl::Status WriteHtmlReport(const v1::Measurement& measurement, const std::string& path,
                             const HtmlReportOptions& options) {
  const std::string html = RenderHtmlReport(measurement, options);
  if (absl::Status written = WriteOutputFileAtomically(path, html); !written.ok()) {
    return absl::Status(written.code(), absl::StrCat("the report: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace roastcoffea
