#include "export/html_report.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "export/flame_graph.h"
#include "export/profile_tables.h"
#include "export/span_tables.h"
#include "export/svg_plot.h"
#include "export/tables.h"
#include "export/time_text.h"
#include "export/worker_tables.h"
#include "store/atomic_file.h"

namespace roastcoffea {
namespace {

constexpr char kStyle[] = R"css(
* { box-sizing: border-box; }
body { font-family: sans-serif; margin: 0 auto; padding: 1em 1.5em; max-width: 1480px;
       color: #222; line-height: 1.35; }
h1 { font-size: 1.5em; margin: 0.2em 0; } .subtitle { color: #555; margin: 0 0 0.8em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; } h3 { margin: 1.2em 0 0.4em; }
nav.toc { background: #f4f6f8; padding: 0.4em 0.8em; border-radius: 4px; }
nav.toc ul { margin: 0.2em 0; padding-left: 1.2em; columns: 2 16em; }
.kpis { display: grid; grid-template-columns: repeat(auto-fill, minmax(11em, 1fr));
        gap: 0.6em; margin: 1em 0; }
.kpi { border: 1px solid #d6dde3; border-radius: 4px; padding: 0.4em 0.7em; background: #fbfcfd; }
.kpi-label { font-size: 0.8em; color: #555; } .kpi-value { font-size: 1.15em; font-weight: bold;
  overflow-wrap: anywhere; }
.table-wrap { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0; }
caption { font-weight: bold; text-align: left; padding: 0.3em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: middle;
         overflow-wrap: anywhere; }
th { background: #eef4f8; }
td.value { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.metadata td { max-width: 60em; }
.tables { display: flex; flex-wrap: wrap; gap: 0 2em; align-items: flex-start; }
.tables > .table-wrap { flex: 0 1 auto; }
.plot-grid { display: grid; gap: 1em 1.5em;
             grid-template-columns: repeat(auto-fill, minmax(min(100%, 600px), 1fr)); }
figure { margin: 0; min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figure svg { display: block; width: 100%; height: auto; max-width: 100%; }
figure.wide svg { max-width: 1200px; }
figcaption, .note { font-size: 0.88em; color: #444; margin: 0.3em 0; }
ul.plot-notes { font-size: 0.92em; } ul.plot-notes li { margin: 0.2em 0; }
figure.flame-graph { margin: 1em 0; } figure.flame-graph svg { max-width: 100%; height: auto; }
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

// "Profile": the flame graph merged over every worker (hover titles only: the page's CSP
// forbids scripts) and its top exclusive stacks.
void AppendProfileSection(const v1::Measurement& measurement, std::string* out) {
  if (measurement.profiles_size() == 0) return;
  *out += "<h2 id=\"profile\">Profile</h2>\n";
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
                    XmlEscape((graph.ok() ? table.status() : graph.status()).message()), "</p>\n");
    return;
  }
  absl::StrAppend(
      out, "<p class=\"profile-header\">", HtmlEscape(ProfileHeader(*merged)),
      merged_count > 1 ? absl::StrCat(" (merged over ", merged_count, " profiles)") : std::string(),
      "</p>\n<figure class=\"flame-graph\" id=\"flame-graph\">\n", graph->svg,
      "<figcaption>Flame graph: width is the share of samples; hover a frame for its "
      "samples and seconds.</figcaption>\n</figure>\n");
  absl::StrAppend(out, "<div class=\"table-wrap\"><table class=\"profile-stacks\">\n<caption>",
                  HtmlEscape(table->title), "</caption>\n<tr>");
  for (const std::string& column : table->header) {
    absl::StrAppend(out, "<th>", HtmlEscape(column), "</th>");
  }
  *out += "</tr>\n";
  for (const std::vector<std::string>& row : table->rows) {
    *out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool number = c < table->right_aligned.size() && table->right_aligned[c];
      absl::StrAppend(out, number ? "<td class=\"value\">" : "<td>", HtmlEscape(row[c]), "</td>");
    }
    *out += "</tr>\n";
  }
  *out += "</table></div>\n";
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
  if (metrics.findings_evaluated() && metrics.findings_size() > 0) {
    if (const std::string states = RuleStatesLine(metrics); !states.empty()) {
      absl::StrAppend(out, "<p class=\"rule-states\">", HtmlEscape(states), "</p>\n");
    }
  }
  *out += "</section>\n";
}

void AppendSummaryTable(const SummaryTable& table, std::string* out) {
  absl::StrAppend(out, "<div class=\"table-wrap\"><table class=\"summary\">\n<caption>",
                  HtmlEscape(table.title), "</caption>\n<tr>");
  for (const std::string& column : table.header) {
    absl::StrAppend(out, "<th>", HtmlEscape(column), "</th>");
  }
  *out += "</tr>\n";
  const bool key_value = table.header.size() == 2 && table.header[0] == "Metric";
  for (const std::vector<std::string>& cells : table.rows) {
    *out += "<tr>";
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool number =
          key_value ? c == 1 : c < table.right_aligned.size() && table.right_aligned[c];
      absl::StrAppend(out, number ? "<td class=\"value\">" : "<td>", HtmlEscape(cells[c]), "</td>");
    }
    *out += "</tr>\n";
  }
  *out += "</table></div>\n";
}

// Up to six headline numbers, each the value of a summary-table row (same label, same
// formatting as the terminal); a figure the measurement does not know is left out.
void AppendKeyFigures(const std::vector<SummaryTable>& tables, std::string* out) {
  constexpr const char* kLabels[] = {"Elapsed Time",   "Total Events", "Event Rate (Elapsed Time)",
                                     "CPU Efficiency", "Data Rate",    "Total Chunks"};
  std::string cards;
  for (const char* label : kLabels) {
    for (const SummaryTable& table : tables) {
      const auto row = std::find_if(
          table.rows.begin(), table.rows.end(), [&](const std::vector<std::string>& cells) {
            return cells.size() >= 2 && absl::StripAsciiWhitespace(cells[0]) == label;
          });
      if (row == table.rows.end()) continue;
      if (!absl::StartsWith((*row)[1], "N/A")) {
        absl::StrAppend(&cards, "<div class=\"kpi\"><div class=\"kpi-label\">", label,
                        "</div><div class=\"kpi-value\">", HtmlEscape((*row)[1]), "</div></div>\n");
      }
      break;
    }
  }
  if (!cards.empty()) absl::StrAppend(out, "<div class=\"kpis\">\n", cards, "</div>\n");
}

// The run's metadata: where, when, what was measured and how.
void AppendRunDetails(const v1::Measurement& measurement, const std::string& name,
                      std::string* out) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  std::vector<std::pair<std::string, std::string>> rows;
  const auto row = [&](const std::string& key, const std::string& value) {
    if (!value.empty()) rows.emplace_back(key, value);
  };
  row("Measurement", name);
  row("Backend", metadata.backend());
  row("Host", metadata.host());
  if (metadata.has_start_time()) row("Started", FormatUtcTimestamp(metadata.start_time()));
  if (metadata.has_end_time()) row("Ended", FormatUtcTimestamp(metadata.end_time()));
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
  *out += "<h2 id=\"run\">Run details</h2>\n<div class=\"table-wrap\"><table class=\"metadata\">\n";
  for (const auto& [key, value] : rows) {
    absl::StrAppend(out, "<tr><th>", HtmlEscape(key), "</th><td>", HtmlEscape(value),
                    "</td></tr>\n");
  }
  *out += "</table></div>\n";
}

// Contents: every section of the page, plot groups included.
void AppendContents(const v1::Measurement& measurement, bool spans, bool workers,
                    const std::vector<std::string>& groups, std::string* out) {
  *out +=
      "<nav class=\"toc\" id=\"contents\"><strong>Contents</strong>\n<ul>\n"
      "<li><a href=\"#headline\">Key figures and findings</a></li>\n";
  if (measurement.warnings_size() > 0 || measurement.metrics().impossible_figures_size() > 0) {
    *out += "<li><a href=\"#warnings\">Warnings</a></li>\n";
  }
  *out += "<li><a href=\"#summary\">Summary tables</a></li>\n";
  if (spans) *out += "<li><a href=\"#spans\">Spans and task prefixes</a></li>\n";
  if (workers) *out += "<li><a href=\"#workers\">Workers that left</a></li>\n";
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::StrAppend(out, "<li><a href=\"#plots-", g, "\">Plots: ", HtmlEscape(groups[g]),
                    "</a></li>\n");
  }
  if (measurement.profiles_size() > 0) *out += "<li><a href=\"#profile\">Profile</a></li>\n";
  *out += "<li><a href=\"#run\">Run details</a></li>\n</ul>\n</nav>\n";
}

// Warnings: they change how every number below reads.
void AppendWarnings(const v1::Measurement& measurement, std::string* out) {
  if (measurement.warnings_size() == 0 && measurement.metrics().impossible_figures_size() == 0) {
    return;
  }
  *out += "<div class=\"warnings\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
  for (const v1::Warning& warning : measurement.warnings()) {
    absl::StrAppend(out, "<li>", HtmlEscape(warning.message()), "</li>\n");
  }
  for (const v1::ImpossibleFigure& figure : measurement.metrics().impossible_figures()) {
    absl::StrAppend(out, "<li>", HtmlEscape(figure.message()), "</li>\n");
  }
  *out += "</ul>\n</div>\n";
}

// A heading and its tables side by side; nothing without tables, but the summary heading.
void AppendTableSection(absl::string_view id, absl::string_view heading,
                        const std::vector<SummaryTable>& tables, std::string* out) {
  if (tables.empty() && id != "summary") return;
  absl::StrAppend(out, "<h2 id=\"", id, "\">", heading, "</h2>\n<div class=\"tables\">\n");
  for (const SummaryTable& table : tables) AppendSummaryTable(table, out);
  *out += "</div>\n";
}

// Plots, by group, in a grid; plots replaced by a sentence are listed after their group.
void AppendPlots(const std::vector<ReportPlot>& plots, const std::vector<std::string>& groups,
                 std::string* out) {
  if (plots.empty()) *out += "<h2>Plots</h2>\n<p>No plot has data in this measurement.</p>\n";
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::StrAppend(out, "<h2 id=\"plots-", g, "\">", HtmlEscape(groups[g]),
                    "</h2>\n<div class=\"plot-grid\">\n");
    std::string notes;
    for (const ReportPlot& plot : plots) {
      if (plot.group != groups[g]) continue;
      if (plot.svg.empty()) {
        absl::StrAppend(&notes, "<li id=\"plot-", HtmlEscape(plot.id), "\"><strong>",
                        HtmlEscape(plot.title), ":</strong> ", HtmlEscape(plot.note), "</li>\n");
        continue;
      }
      const bool wide = plot.id == "chunk-gantt";
      absl::StrAppend(out, "<figure class=\"plot", wide ? " wide" : "", "\" id=\"plot-",
                      HtmlEscape(plot.id), "\">\n", plot.svg);
      if (!plot.note.empty()) {
        absl::StrAppend(out, "<figcaption>", HtmlEscape(plot.note), "</figcaption>\n");
      }
      *out += "</figure>\n";
    }
    *out += "</div>\n";
    if (!notes.empty()) absl::StrAppend(out, "<ul class=\"plot-notes\">\n", notes, "</ul>\n");
  }
}

}  // namespace

std::string HtmlEscape(absl::string_view text) { return XmlEscape(text); }

std::string RenderHtmlReport(const v1::Measurement& measurement, const HtmlReportOptions& options) {
  return RenderHtmlReport(measurement, ReportChunksOf(measurement), options);
}

std::string RenderHtmlReport(const v1::Measurement& measurement, const ReportChunks& chunks,
                             const HtmlReportOptions& options) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  const std::string name = metadata.name().empty() ? "measurement" : metadata.name();
  TableOptions table_options;
  table_options.unicode = true;
  const std::vector<SummaryTable> tables = BuildSummaryTables(measurement, table_options);
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement, chunks, options.plots);
  std::vector<std::string> groups;  // in order of first plot
  for (const ReportPlot& plot : plots) {
    if (std::find(groups.begin(), groups.end(), plot.group) == groups.end()) {
      groups.push_back(plot.group);
    }
  }
  const std::vector<SummaryTable> span_tables = BuildSpanTables(measurement);
  const std::vector<SummaryTable> worker_tables = BuildWorkerTables(measurement);

  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n<title>roastcoffea report: ",
      HtmlEscape(name), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n<h1>",
      "roastcoffea report: ", HtmlEscape(name), "</h1>\n");
  std::vector<std::string> subtitle;
  if (!metadata.backend().empty()) subtitle.push_back(HtmlEscape(metadata.backend()));
  if (!metadata.host().empty()) subtitle.push_back(HtmlEscape(metadata.host()));
  if (metadata.has_start_time()) subtitle.push_back(FormatUtcTimestamp(metadata.start_time()));
  absl::StrAppend(&out, "<p class=\"subtitle\">", absl::StrJoin(subtitle, " \u00b7 "), "</p>\n");
  AppendContents(measurement, !span_tables.empty(), !worker_tables.empty(), groups, &out);

  // Headline: the key figures (as the terminal tables name them), then the findings.
  out += "<section id=\"headline\">\n<h2>Key figures and findings</h2>\n";
  AppendKeyFigures(tables, &out);
  AppendFindings(measurement, &out);
  out += "</section>\n";
  AppendWarnings(measurement, &out);
  AppendTableSection("summary", "Summary tables", tables, &out);
  // The workload's own spans and the engine's per-task-prefix (or category) figures.
  AppendTableSection("spans", "Spans and task prefixes", span_tables, &out);
  // Workers that died with tasks on them, and since when the silent ones were silent.
  AppendTableSection("workers", "Workers that left", worker_tables, &out);
  AppendPlots(plots, groups, &out);
  AppendProfileSection(measurement, &out);
  AppendRunDetails(measurement, name, &out);
  out += "</body>\n</html>\n";
  return out;
}

absl::Status WriteHtmlReport(const v1::Measurement& measurement, const std::string& path,
                             const HtmlReportOptions& options) {
  return WriteHtmlReport(measurement, ReportChunksOf(measurement), path, options);
}

absl::Status WriteHtmlReport(const v1::Measurement& measurement, const ReportChunks& chunks,
                             const std::string& path, const HtmlReportOptions& options) {
  const std::string html = RenderHtmlReport(measurement, chunks, options);
  if (absl::Status written = WriteOutputFileAtomically(path, html); !written.ok()) {
    return absl::Status(written.code(), absl::StrCat("the report: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace roastcoffea
