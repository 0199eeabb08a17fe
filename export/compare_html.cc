#include "export/compare_html.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "export/svg_plot.h"
#include "store/atomic_file.h"

namespace roastcoffea {
namespace {

constexpr char kStyle[] =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #ccc;padding:0.25em 0.6em}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.regression{background:#fdd}td.within_noise{background:#ffd}"
    "td.expected_with_more_cores{background:#eef}"
    "tr.differs th{color:#a00}";

std::string Escape(const std::string& text) { return XmlEscape(text); }

// The mean time per event at each core count (oversubscribed runs separately).
std::map<double, double> MeanTimes(const ComparisonResult& result, bool oversubscribed) {
  std::map<double, std::vector<double>> by_cores;
  for (const ScalingPoint& point : result.scaling_points) {
    if (point.oversubscribed == oversubscribed && point.seconds_per_event > 0) {
      by_cores[point.cores].push_back(point.seconds_per_event);
    }
  }
  std::map<double, double> means;
  for (const auto& [cores, times] : by_cores) means[cores] = SummarizeReplicates(times).mean;
  return means;
}

}  // namespace

std::string ScalingPlotSvg(const ComparisonResult& result) {
  if (!result.fit.has_value()) return "";
  const AmdahlFit& fit = *result.fit;
  LineChart chart;
  chart.frame.title = absl::StrFormat("Scaling: Amdahl fit, serial fraction %.3f, R\u00B2 %.4f",
                                      fit.serial_fraction, fit.r_squared);
  chart.frame.x_label = "Cores";
  chart.frame.y_label = "Speedup vs fitted 1-core time";
  chart.frame.y_min = 0;
  double x_max = 2 * fit.max_cores;
  LineSeries measured{"Measured"};
  measured.markers = true;
  for (const auto& [cores, time] : MeanTimes(result, false)) {
    measured.x.push_back(cores);
    measured.y.push_back(fit.single_core_seconds_per_event / time);
  }
  LineSeries oversubscribed{"Oversubscribed"};
  oversubscribed.markers = true;
  for (const auto& [cores, time] : MeanTimes(result, true)) {
    oversubscribed.x.push_back(cores);
    oversubscribed.y.push_back(fit.single_core_seconds_per_event / time);
    x_max = std::max(x_max, cores);
  }
  LineSeries curve{absl::StrFormat("Amdahl s=%.3f", fit.serial_fraction)};
  LineSeries ideal{"Ideal"};
  constexpr int kSteps = 64;
  for (int i = 0; i <= kSteps; ++i) {
    const double cores = 1.0 + (x_max - 1.0) * i / kSteps;
    curve.x.push_back(cores);
    curve.y.push_back(AmdahlSpeedup(fit.serial_fraction, cores));
  }
  ideal.x = {1.0, x_max};
  ideal.y = {1.0, x_max};
  chart.series = {measured, curve, ideal};
  if (!oversubscribed.x.empty()) chart.series.push_back(oversubscribed);
  return RenderLineChart(chart);
}

std::string ComparisonHtml(const ComparisonResult& result) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>collect compare</title>"
      "<style>",
      kStyle, "</style></head><body>\n<h1>Comparison of ", result.labels.size(), " runs</h1>\n");
  absl::StrAppend(&out, "<h2>Configuration</h2>\n<table><tr><th></th>");
  for (const std::string& label : result.labels) {
    absl::StrAppend(&out, "<th>", Escape(label), "</th>");
  }
  absl::StrAppend(&out, "</tr>\n");
  for (const ConfigurationFact& fact : result.configuration) {
    absl::StrAppend(&out, "<tr", fact.differs ? " class=\"differs\"" : "", "><th>",
                    Escape(fact.key), fact.differs ? " (differs)" : "", "</th>");
    for (const std::string& value : fact.values) {
      absl::StrAppend(&out, "<td>", value.empty() ? "N/A" : Escape(value), "</td>");
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n<h2>Comparison against the baseline (",
                  Escape(result.groups.front().name),
                  ")</h2>\n<table><tr><th>Metric</th>"
                  "<th>Unit</th>");
  for (const RunGroup& group : result.groups) {
    absl::StrAppend(&out, "<th>", Escape(group.name), "</th>");
  }
  absl::StrAppend(&out, "</tr>\n");
  for (const MetricComparison& metric : result.metrics) {
    absl::StrAppend(&out, "<tr><td>", Escape(metric.label), "</td><td>", Escape(metric.unit),
                    "</td>");
    for (const GroupValue& value : metric.groups) {
      absl::StrAppend(&out, "<td class=\"num ", ChangeStatusName(value.status), "\">",
                      Escape(ComparisonCell(value)), "</td>");
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n<p>\u25BC ", Escape(result.regression_rule), ": ",
                  result.regressions, result.regressions == 1 ? " regression" : " regressions",
                  ". ~ worse than the threshold but within the noise. * worse, as expected "
                  "with more cores (not a regression).</p>\n");
  const std::string fit = AmdahlFitText(result);
  if (!fit.empty()) {
    absl::StrAppend(&out, "<h2>Scaling</h2>\n<pre>", Escape(fit), "</pre>\n",
                    ScalingPlotSvg(result), "\n");
  }
  absl::StrAppend(&out, "</body></html>\n");
  return out;
}

absl::Status WriteComparisonHtml(const std::string& path, const ComparisonResult& result) {
  return WriteOutputFileAtomically(path, ComparisonHtml(result));
}

}  // namespace roastcoffea
