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
    "td.no_noise_estimate{background:#eee}td.from_rereading{background:#fed}"
    "tr.differs th{color:#a00}p.verdict{font-size:1.15em}li.warning{color:#a50}"
    "pre{white-space:pre-wrap}table{max-width:100%;display:block;overflow-x:auto}";

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

namespace {

// Without a fit (fewer than 3 core counts, e.g. on a 2-CPU host): the measured speedups
// against the reference core count, with their standard errors, and ideal linear scaling.
std::string MeasuredScalingPlotSvg(const ComparisonResult& result) {
  if (result.speedups.size() < 2 || !(result.speedup_reference_cores > 0)) return "";
  const double reference = result.speedup_reference_cores;
  LineChart chart;
  chart.frame.title = absl::StrFormat("Scaling: measured speedup against %s (no Amdahl fit)",
                                      absl::StrCat(reference, reference == 1 ? " core" : " cores"));
  chart.frame.x_label = "Cores";
  chart.frame.y_label = absl::StrCat("Speedup vs ", reference, reference == 1 ? " core" : " cores");
  chart.frame.y_min = 0;
  LineSeries measured{"Measured"};
  LineSeries oversubscribed{"Oversubscribed"};
  measured.markers = oversubscribed.markers = true;
  double x_max = reference;
  for (const MeasuredSpeedup& s : result.speedups) {
    LineSeries& series = s.oversubscribed ? oversubscribed : measured;
    series.x.push_back(s.cores);
    series.y.push_back(s.speedup.value);
    const double error = s.speedup.standard_error.value_or(0);
    series.band_low.push_back(s.speedup.value - error);
    series.band_high.push_back(s.speedup.value + error);
    x_max = std::max(x_max, s.cores);
  }
  measured.band_name = "\u00B1 standard error";
  oversubscribed.band_low.clear();
  oversubscribed.band_high.clear();
  LineSeries ideal{"Ideal"};
  ideal.dashed = true;
  ideal.x = {reference, x_max};
  ideal.y = {1.0, x_max / reference};
  chart.series = {measured, ideal};
  if (!oversubscribed.x.empty()) chart.series.push_back(oversubscribed);
  return RenderLineChart(chart);
}

}  // namespace

std::string ScalingPlotSvg(const ComparisonResult& result) {
  if (!result.fit.has_value()) return MeasuredScalingPlotSvg(result);
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
  absl::StrAppend(&out, "</table>\n");
  for (const std::string& verdict : result.verdicts) {
    absl::StrAppend(&out, "<p class=\"verdict\"><b>Verdict:</b> ", Escape(verdict), "</p>\n");
  }
  absl::StrAppend(&out, "<p>\u25BC ", Escape(result.regression_rule), ": ", result.regressions,
                  result.regressions == 1 ? " regression" : " regressions",
                  ". ~ worse than the threshold but within the noise. * worse, as expected "
                  "with more (or fewer) cores (not a regression). ? worse than the threshold, "
                  "but no noise estimate (one run per side, no chunk records): not a "
                  "regression unless --regression_threshold is given. ^ Data Rate rose because "
                  "the chunks re-read bytes: not an improvement.</p>\n");
  for (const std::string& note : result.rereading_notes) {
    absl::StrAppend(&out, "<p class=\"rereading\">^ ", Escape(note), "</p>\n");
  }
  if (!result.run_warnings.empty() || !result.run_findings.empty()) {
    absl::StrAppend(&out, "<h2>Warnings and findings of each run</h2>\n<ul>\n");
    for (const std::string& line : result.run_warnings) {
      absl::StrAppend(&out, "<li class=\"warning\">", Escape(line), "</li>\n");
    }
    for (const std::string& line : result.run_findings) {
      absl::StrAppend(&out, "<li>", Escape(line), "</li>\n");
    }
    absl::StrAppend(&out, "</ul>\n");
  }
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
