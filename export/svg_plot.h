// Charts as standalone SVG text, written by the project (no plotting runtime): line charts over
// time or numbers (with an optional min-max band or filled area), bar charts (grouped or
// stacked), histograms with mean and median lines, scatter plots with a least-squares line, and
// Gantt charts. Every chart has a title, axes with "nice" ticks (1, 2, 5 x 10^k; clock times
// "HH:MM:SS" UTC on time axes), axis labels with units, and a legend. Per-series legends are
// drawn only up to `max_legend_entries` series; above that the chart says "Showing N series"
// instead, so a plot of 500 workers stays readable. All text is XML-escaped.
//
// Thread-safety: pure functions. Cost: linear in the number of points.
#ifndef ROASTCOFFEA_EXPORT_SVG_PLOT_H_
#define ROASTCOFFEA_EXPORT_SVG_PLOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace roastcoffea {

// Shared by every chart.
struct ChartFrame {
  std::string title = {};
  std::string x_label = {};  // with its unit, e.g. "Time (UTC)", "Runtime (seconds)"
  std::string y_label = {};
  int width = 800;
  int height = 400;
  // Fixed y range (e.g. 0-100 for percentages); unset: from the data, starting at 0 when all
  // values are >= 0.
  std::optional<double> y_min = {};
  std::optional<double> y_max = {};
  // Fixed x range (line and Gantt charts), e.g. one time range for every plot of a run;
  // unset: from the data.
  std::optional<double> x_min = {};
  std::optional<double> x_max = {};
  size_t max_legend_entries = 10;
  // What the series are, for "Showing N <series_noun>" when the legend is left out.
  std::string series_noun = "series";
};

struct LineSeries {
  std::string name = {};
  std::vector<double> x = {};  // unix seconds on time axes
  std::vector<double> y = {};
  bool markers = false;
  bool fill = false;    // fill the area under the line
  bool dashed = false;  // e.g. a limit drawn as a reference line
  // A step function (SERIES_KIND_STEP): each y holds from its x to the next point's x, drawn
  // horizontal then vertical. Points sharing an x are successive changes, in order. false: a
  // line through the points (SERIES_KIND_SAMPLED).
  bool step = false;
  // A min-max band drawn under the line (same length as x when set).
  std::vector<double> band_low = {};
  std::vector<double> band_high = {};
  std::string band_name = {};  // legend entry of the band
};

struct LineChart {
  ChartFrame frame = {};
  bool time_axis = false;  // x in unix seconds, ticks as HH:MM:SS (UTC)
  std::vector<LineSeries> series = {};
};

struct BarGroup {
  std::string name = {};            // legend entry
  std::vector<double> values = {};  // one per category
};

struct BarChart {
  ChartFrame frame = {};
  std::vector<std::string> categories = {};
  std::vector<BarGroup> groups = {};
  bool stacked = false;
  bool value_labels = false;  // print each bar's value above it
};

struct HistogramChart {
  ChartFrame frame = {};
  std::vector<double> values = {};
  int bins = 30;
  bool mean_line = true;        // dashed, labelled "Mean: <value>"
  bool median_line = true;      // dashed, labelled "Median: <value>"
  int value_decimals = 2;       // of the mean/median labels
  std::string value_unit = {};  // appended to the labels, e.g. "s", "%"
  // Positive values spanning 100x or more get bins of equal width in log10 and a log axis
  // (the x label says "(log scale)").
  bool log_x_when_wide = false;
};

struct ScatterChart {
  ChartFrame frame = {};
  std::vector<double> x = {};
  std::vector<double> y = {};
  // With more than one distinct x: a least-squares line, labelled
  // "Trend: <slope>*x + <intercept>" (slope %.2e, intercept %.2f; "- <|intercept|>" when
  // negative).
  bool fit_line = true;
};

// A timed part of a bar (a section inside a chunk), drawn in the lower part of the bar.
struct GanttSlice {
  double start = 0;
  double end = 0;
  size_t color = 0;  // index into GanttChart.slice_legend
};

struct GanttBar {
  size_t row = 0;
  double start = 0;  // unix seconds (clock_time) or seconds since start
  double end = 0;
  bool failed = false;
  std::string tooltip = {};  // shown by the browser on hover (<title>)
  size_t color = 0;          // index into GanttChart.legend (e.g. the dataset)
  double opacity = 1.0;      // e.g. the busy fraction of an aggregated time bin
  std::vector<GanttSlice> slices = {};
};

struct GanttChart {
  ChartFrame frame = {};
  std::vector<std::string> rows = {};  // one per lane (worker / thread)
  std::vector<GanttBar> bars = {};
  // x in unix seconds with HH:MM:SS ticks; false: plain numbers (e.g. seconds since start).
  bool clock_time = true;
  // Names of the bar colours (one legend entry each, up to max_legend_entries) and of the slice
  // colours; empty: no legend.
  std::vector<std::string> legend = {};
  std::vector<std::string> slice_legend = {};
};

std::string RenderLineChart(const LineChart& chart);
std::string RenderBarChart(const BarChart& chart);
std::string RenderHistogram(const HistogramChart& chart);
std::string RenderScatter(const ScatterChart& chart);
std::string RenderGantt(const GanttChart& chart);

// Tick positions covering [low, high]: about `target` values at 1, 2 or 5 x 10^k steps.
std::vector<double> NiceTicks(double low, double high, int target = 6);

// Tick positions for a time axis in unix seconds, at 1/2/5/10/15/30 s, 1/2/5/10/15/30 min, or
// 1/2/3/6/12/24 h steps.
std::vector<double> TimeTicks(double low, double high, int target = 6);

// A tick label: integers plainly, otherwise up to 3 significant decimals ("0.25", "1.5e+06").
std::string TickLabel(double value);

// Text with &, <, >, " and ' replaced by entities; other control characters removed.
std::string XmlEscape(absl::string_view text);

// The least-squares line y = slope * x + intercept; nullopt with fewer than two distinct x.
struct LinearFit {
  double slope = 0;
  double intercept = 0;
};
std::optional<LinearFit> FitLine(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_SVG_PLOT_H_
