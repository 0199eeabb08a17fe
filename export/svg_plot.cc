#include "export/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "export/time_text.h"

namespace roastcoffea {
namespace {

// matplotlib's tab10, so the charts look familiar.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char* Color(size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

// Darker colours for sections inside Gantt bars, apart from the bars' own.
constexpr const char* kSlicePalette[] = {"#1b5e20", "#4a148c", "#bf360c", "#01579b",
                                         "#827717", "#880e4f", "#3e2723", "#263238"};
const char* SliceColor(size_t i) {
  return kSlicePalette[i % (sizeof(kSlicePalette) / sizeof(kSlicePalette[0]))];
}

std::string Num(double value) { return absl::StrFormat("%.2f", value); }

// A bar's value: one decimal, or whole numbers with thousands separators from 1000 up.
std::string ValueLabel(double value) {
  if (!(std::fabs(value) >= 1000) || std::fabs(value) >= 1e15) {
    return absl::StrFormat("%.1f", value);
  }
  std::string digits = absl::StrFormat("%.0f", std::fabs(value));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return value < 0 ? "-" + digits : digits;
}

// The plot area inside the frame, and the mapping of data to pixels.
struct Area {
  double left, top, width, height;
  double x_low, x_high, y_low, y_high;
  double X(double x) const {
    return left + (x_high > x_low ? (x - x_low) / (x_high - x_low) : 0.5) * width;
  }
  double Y(double y) const {
    return top + height - (y_high > y_low ? (y - y_low) / (y_high - y_low) : 0.5) * height;
  }
};

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  bool Empty() const { return low > high; }
};

// The x range: fixed ends win (a reversed pair is ignored).
void FixX(const ChartFrame& frame, Range* xs) {
  const double low = frame.x_min.value_or(xs->low);
  const double high = frame.x_max.value_or(xs->high);
  if (high > low) {
    xs->low = low;
    xs->high = high;
  }
}

// The y range: fixed ends win; otherwise the data, from 0 when all values are >= 0, and a
// little head room so that the highest point is not on the frame.
void ResolveY(const ChartFrame& frame, Range data, double* low, double* high) {
  if (data.Empty()) data = Range{0, 1};
  *low = frame.y_min.value_or(data.low >= 0 ? 0.0 : data.low);
  *high = frame.y_max.value_or(data.high + 0.05 * (data.high - *low));
  if (!(*high > *low)) *high = *low + 1.0;
}

std::string Open(const ChartFrame& frame) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<title>%s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text class=\"chart-title\" x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
      "font-weight=\"bold\">%s</text>\n",
      frame.width, frame.height, frame.width, frame.height, XmlEscape(frame.title), frame.width / 2,
      XmlEscape(frame.title));
}

Area MakeArea(const ChartFrame& frame, bool legend, double x_low, double x_high, double y_low,
              double y_high) {
  const double right = legend ? 170 : 20;
  return Area{70,    40,    frame.width - 70 - right, frame.height - 40.0 - 75.0, x_low, x_high,
              y_low, y_high};
}

// Grid, ticks, tick labels and axis labels. `x_labels` replaces numeric x ticks (bar charts).
// `log10_x`: the x values (and ticks) are decimal logarithms, labelled with their powers.
std::string Axes(const ChartFrame& frame, const Area& area, const std::vector<double>& x_ticks,
                 bool time_axis, const std::vector<double>& y_ticks, bool log10_x = false) {
  std::string out = "<g class=\"axes\" stroke=\"#000\" stroke-width=\"1\">\n";
  const double bottom = area.top + area.height;
  const double right = area.left + area.width;
  absl::StrAppend(&out, "<line class=\"x-axis\" x1=\"", Num(area.left), "\" y1=\"", Num(bottom),
                  "\" x2=\"", Num(right), "\" y2=\"", Num(bottom), "\"/>\n");
  absl::StrAppend(&out, "<line class=\"y-axis\" x1=\"", Num(area.left), "\" y1=\"", Num(area.top),
                  "\" x2=\"", Num(area.left), "\" y2=\"", Num(bottom), "\"/>\n");
  out += "</g>\n<g class=\"ticks\" font-size=\"10\">\n";
  // Sub-second tick steps (short runs) need fractional seconds to tell the ticks apart.
  const double step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1.0;
  const char* time_format = step >= 0.999    ? "%H:%M:%S"
                            : step >= 0.0999 ? "%H:%M:%E1S"
                                             : "%H:%M:%E3S";
  for (double tick : x_ticks) {
    const double x = area.X(tick);
    const std::string label = time_axis ? FormatUtcSeconds(tick, time_format)
                                        : TickLabel(log10_x ? std::pow(10.0, tick) : tick);
    absl::StrAppend(&out, "<line class=\"x-tick\" x1=\"", Num(x), "\" y1=\"", Num(bottom),
                    "\" x2=\"", Num(x), "\" y2=\"", Num(bottom + 5),
                    "\" stroke=\"#000\"/>\n<line x1=\"", Num(x), "\" y1=\"", Num(area.top),
                    "\" x2=\"", Num(x), "\" y2=\"", Num(bottom),
                    "\" stroke=\"#000\" stroke-opacity=\"0.1\"/>\n");
    if (time_axis) {  // Rotated 45 degrees, like the original's timelines.
      absl::StrAppend(&out, "<text class=\"x-tick-label\" x=\"", Num(x), "\" y=\"",
                      Num(bottom + 16), "\" text-anchor=\"end\" transform=\"rotate(-45 ", Num(x),
                      " ", Num(bottom + 16), ")\">", XmlEscape(label), "</text>\n");
    } else {
      absl::StrAppend(&out, "<text class=\"x-tick-label\" x=\"", Num(x), "\" y=\"",
                      Num(bottom + 18), "\" text-anchor=\"middle\">", XmlEscape(label),
                      "</text>\n");
    }
  }
  for (double tick : y_ticks) {
    const double y = area.Y(tick);
    absl::StrAppend(&out, "<line class=\"y-tick\" x1=\"", Num(area.left - 5), "\" y1=\"", Num(y),
                    "\" x2=\"", Num(area.left), "\" y2=\"", Num(y),
                    "\" stroke=\"#000\"/>\n<line x1=\"", Num(area.left), "\" y1=\"", Num(y),
                    "\" x2=\"", Num(right), "\" y2=\"", Num(y),
                    "\" stroke=\"#000\" stroke-opacity=\"0.1\"/>\n");
    absl::StrAppend(&out, "<text class=\"y-tick-label\" x=\"", Num(area.left - 8), "\" y=\"",
                    Num(y + 3), "\" text-anchor=\"end\">", XmlEscape(TickLabel(tick)), "</text>\n");
  }
  out += "</g>\n";
  absl::StrAppend(&out, "<text class=\"x-label\" x=\"", Num(area.left + area.width / 2), "\" y=\"",
                  frame.height - 8, "\" text-anchor=\"middle\">", XmlEscape(frame.x_label),
                  "</text>\n");
  absl::StrAppend(&out, "<text class=\"y-label\" x=\"16\" y=\"", Num(area.top + area.height / 2),
                  "\" text-anchor=\"middle\" transform=\"rotate(-90 16 ",
                  Num(area.top + area.height / 2), ")\">", XmlEscape(frame.y_label), "</text>\n");
  return out;
}

struct LegendEntry {
  std::string name;
  std::string color;
  bool dashed = false;
  bool band = false;  // a translucent area (a min-max band), not a line
};

std::string Legend(const Area& area, const std::vector<LegendEntry>& entries) {
  std::string out = "<g class=\"legend\" font-size=\"10\">\n";
  const double x = area.left + area.width + 12;
  for (size_t i = 0; i < entries.size(); ++i) {
    const double y = area.top + 8 + 16.0 * static_cast<double>(i);
    if (entries[i].band) {
      absl::StrAppend(&out, "<rect x=\"", Num(x), "\" y=\"", Num(y - 5), "\" width=\"18\" ",
                      "height=\"10\" fill=\"", entries[i].color, "\" fill-opacity=\"0.25\"/>\n");
    } else {
      absl::StrAppend(&out, "<line x1=\"", Num(x), "\" y1=\"", Num(y), "\" x2=\"", Num(x + 18),
                      "\" y2=\"", Num(y), "\" stroke=\"", entries[i].color, "\" stroke-width=\"3\"",
                      entries[i].dashed ? " stroke-dasharray=\"4 3\"" : "", "/>\n");
    }
    absl::StrAppend(&out, "<text class=\"legend-entry\" x=\"", Num(x + 24), "\" y=\"", Num(y + 3),
                    "\">", XmlEscape(entries[i].name.substr(0, 24)), "</text>\n");
  }
  out += "</g>\n";
  return out;
}

std::string TooManySeriesNote(const Area& area, size_t count, const std::string& noun) {
  return absl::StrCat("<text class=\"series-note\" x=\"", Num(area.left + 8), "\" y=\"",
                      Num(area.top + 14), "\">",
                      XmlEscape(absl::StrCat("Showing ", count, " ", noun)), "</text>\n");
}

std::string NoData(const ChartFrame& frame) {
  return absl::StrCat(Open(frame), "<text class=\"no-data\" x=\"", frame.width / 2, "\" y=\"",
                      frame.height / 2, "\" text-anchor=\"middle\">No data</text>\n</svg>\n");
}

std::string Polyline(const Area& area, const std::vector<double>& x, const std::vector<double>& y) {
  std::string points;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    absl::StrAppend(&points, points.empty() ? "" : " ", Num(area.X(x[i])), ",",
                    Num(area.Y(std::clamp(y[i], area.y_low, area.y_high))));
  }
  return points;
}

// The corners of a step function through (x, y): before each point, the previous y held up to
// its x. Points sharing an x stay in their order. With `drop_repeats` a corner equal to the one
// before it is drawn once, so that a series with a point repeating the state before each change
// (saved before #25) draws the same line as one without (not for a band, whose two edges must
// keep one x each).
void StepCorners(const std::vector<double>& x, const std::vector<double>& y,
                 std::vector<double>* sx, std::vector<double>* sy, bool drop_repeats = false) {
  const size_t n = std::min(x.size(), y.size());
  const auto corner = [&](double cx, double cy) {
    if (drop_repeats && !sx->empty() && sx->back() == cx && sy->back() == cy) return;
    sx->push_back(cx);
    sy->push_back(cy);
  };
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && x[i] != x[i - 1]) corner(x[i], y[i - 1]);
    corner(x[i], y[i]);
  }
}

}  // namespace

std::string XmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out.push_back(c);
    }
  }
  return out;
}

std::vector<double> NiceTicks(double low, double high, int target) {
  if (!std::isfinite(low) || !std::isfinite(high)) return {};
  if (high < low) std::swap(low, high);
  if (high == low) return {low};
  const double raw = (high - low) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::ceil(low / step - 1e-9);
  for (int i = 0; i <= 100; ++i) {
    const double tick = (first + i) * step;  // no accumulated rounding
    if (tick > high + step * 1e-9) break;
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0.0 : tick);
  }
  return ticks;
}

std::vector<double> TimeTicks(double low, double high, int target) {
  if (!std::isfinite(low) || !std::isfinite(high) || high < low) return {};
  if (high == low) return {low};
  static constexpr double kSteps[] = {1,   2,   5,    10,   15,   30,    60,    120,   300,
                                      600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400};
  const double raw = (high - low) / std::max(target, 1);
  double step = kSteps[sizeof(kSteps) / sizeof(kSteps[0]) - 1];
  for (double candidate : kSteps) {
    if (candidate >= raw) {
      step = candidate;
      break;
    }
  }
  if (raw < 1) return NiceTicks(low, high, target);
  std::vector<double> ticks;
  for (double tick = std::ceil(low / step) * step; tick <= high; tick += step) {
    ticks.push_back(tick);
    if (ticks.size() > 100) break;
  }
  return ticks;
}

std::string TickLabel(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e6) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.3g", value);
}

std::optional<LinearFit> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::nullopt;
  double mean_x = 0;
  double mean_y = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double sxx = 0;
  double sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
  }
  if (!(sxx > 0)) return std::nullopt;
  LinearFit fit;
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  return fit;
}

namespace {

// The series' band between band_low and band_high, when it has one for every x; false
// without.
bool AppendBand(const Area& area, const LineSeries& series, const char* color, std::string& out) {
  if (series.band_low.empty() || series.band_low.size() != series.x.size() ||
      series.band_high.size() != series.x.size()) {
    return false;
  }
  std::vector<double> band_x = series.x, high = series.band_high, low = series.band_low;
  if (series.step) {
    band_x.clear();
    high.clear();
    std::vector<double> ignored;
    StepCorners(series.x, series.band_high, &band_x, &high);
    low.clear();
    StepCorners(series.x, series.band_low, &ignored, &low);
  }
  std::string polygon = Polyline(area, band_x, high);
  std::vector<double> rx(band_x.rbegin(), band_x.rend());
  std::vector<double> rlow(low.rbegin(), low.rend());
  absl::StrAppend(&polygon, " ", Polyline(area, rx, rlow));
  absl::StrAppend(&out, "<polygon class=\"band\" points=\"", polygon, "\" fill=\"", color,
                  "\" fill-opacity=\"0.25\" stroke=\"none\"/>\n");
  return true;
}

// The series' line, with the area under it filled down to `y_low` and its markers when
// asked (no markers when `crowded`).
void AppendSeriesLine(const Area& area, const LineSeries& series, const char* color, double y_low,
                      bool crowded, std::string& out) {
  std::vector<double> step_x, step_y;
  if (series.step) StepCorners(series.x, series.y, &step_x, &step_y, /*drop_repeats=*/true);
  const std::vector<double>& line_x = series.step ? step_x : series.x;
  const std::vector<double>& line_y = series.step ? step_y : series.y;
  const std::string line = Polyline(area, line_x, line_y);
  if (series.fill && !series.x.empty()) {
    absl::StrAppend(&out, "<polygon class=\"area\" points=\"", Num(area.X(series.x.front())), ",",
                    Num(area.Y(y_low)), " ", line, " ", Num(area.X(series.x.back())), ",",
                    Num(area.Y(y_low)), "\" fill=\"", color,
                    "\" fill-opacity=\"0.3\" stroke=\"none\"/>\n");
  }
  absl::StrAppend(&out, "<polyline class=\"line\" data-series=\"", XmlEscape(series.name),
                  "\" points=\"", line, "\" fill=\"none\" stroke=\"", color, "\" stroke-width=\"",
                  crowded ? "0.8" : "1.8", "\"", crowded ? " stroke-opacity=\"0.5\"" : "",
                  series.dashed ? " stroke-dasharray=\"6 4\"" : "", "/>\n");
  if (series.markers && !crowded) {
    for (size_t p = 0; p < series.x.size() && p < series.y.size(); ++p) {
      if (!std::isfinite(series.y[p])) continue;
      absl::StrAppend(&out, "<circle class=\"marker\" cx=\"", Num(area.X(series.x[p])), "\" cy=\"",
                      Num(area.Y(series.y[p])), "\" r=\"3\" fill=\"", color, "\"/>\n");
    }
  }
}

}  // namespace

std::string RenderLineChart(const LineChart& chart) {
  Range xs;
  Range ys;
  size_t points = 0;
  for (const LineSeries& series : chart.series) {
    for (double x : series.x) xs.Add(x);
    for (double y : series.y) ys.Add(y);
    for (double y : series.band_low) ys.Add(y);
    for (double y : series.band_high) ys.Add(y);
    points += series.x.size();
  }
  if (points == 0 || xs.Empty()) return NoData(chart.frame);
  FixX(chart.frame, &xs);
  double y_low;
  double y_high;
  ResolveY(chart.frame, ys, &y_low, &y_high);
  const bool legend = chart.series.size() <= chart.frame.max_legend_entries;
  const Area area = MakeArea(chart.frame, legend, xs.low, xs.high, y_low, y_high);
  std::string out = Open(chart.frame);
  absl::StrAppend(&out,
                  Axes(chart.frame, area,
                       chart.time_axis ? TimeTicks(xs.low, xs.high) : NiceTicks(xs.low, xs.high),
                       chart.time_axis, NiceTicks(y_low, y_high)));
  std::vector<LegendEntry> entries;
  // Many series: thin, translucent lines so that the shape of the crowd shows.
  const bool crowded = !legend;
  out += "<g class=\"series\">\n";
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const LineSeries& series = chart.series[i];
    const char* color = Color(i);
    if (AppendBand(area, series, color, out)) {
      entries.push_back(
          {series.band_name.empty() ? "Min-Max Range" : series.band_name, color, false, true});
    }
    AppendSeriesLine(area, series, color, y_low, crowded, out);
    entries.push_back({series.name, color, series.dashed});
  }
  out += "</g>\n";
  if (legend) {
    absl::StrAppend(&out, Legend(area, entries));
  } else {
    absl::StrAppend(&out, TooManySeriesNote(area, chart.series.size(), chart.frame.series_noun));
  }
  return out + "</svg>\n";
}

std::string RenderBarChart(const BarChart& chart) {
  const size_t categories = chart.categories.size();
  if (categories == 0 || chart.groups.empty()) return NoData(chart.frame);
  Range ys;
  ys.Add(0);
  for (size_t c = 0; c < categories; ++c) {
    double stack = 0;
    for (const BarGroup& group : chart.groups) {
      const double v = c < group.values.size() ? group.values[c] : 0;
      if (chart.stacked) {
        stack += v;
        ys.Add(stack);
      } else {
        ys.Add(v);
      }
    }
  }
  double y_low;
  double y_high;
  ResolveY(chart.frame, ys, &y_low, &y_high);
  const bool legend =
      chart.groups.size() > 1 && chart.groups.size() <= chart.frame.max_legend_entries;
  const Area area =
      MakeArea(chart.frame, legend, 0, static_cast<double>(categories), y_low, y_high);
  std::string out = Open(chart.frame);
  // Category labels instead of numeric x ticks.
  absl::StrAppend(&out, Axes(chart.frame, area, {}, false, NiceTicks(y_low, y_high)));
  const double slot = area.width / static_cast<double>(categories);
  const double bar_width =
      slot * 0.8 / (chart.stacked ? 1.0 : static_cast<double>(chart.groups.size()));
  out += "<g class=\"bars\">\n";
  const bool label_categories = categories <= 40;
  for (size_t c = 0; c < categories; ++c) {
    double stack = 0;
    for (size_t g = 0; g < chart.groups.size(); ++g) {
      const double v = c < chart.groups[g].values.size() ? chart.groups[g].values[c] : 0;
      if (!std::isfinite(v)) continue;
      const double base = chart.stacked ? stack : 0;
      const double x = area.left + slot * (static_cast<double>(c) + 0.1) +
                       (chart.stacked ? 0 : bar_width * static_cast<double>(g));
      const double top = area.Y(std::min(base + v, y_high));
      const double height = std::max(0.0, area.Y(base) - top);
      absl::StrAppend(&out, "<rect class=\"bar\" x=\"", Num(x), "\" y=\"", Num(top), "\" width=\"",
                      Num(bar_width), "\" height=\"", Num(height), "\" fill=\"", Color(g),
                      "\"><title>",
                      XmlEscape(absl::StrCat(chart.categories[c], " ", chart.groups[g].name, ": ",
                                             TickLabel(v))),
                      "</title></rect>\n");
      if (chart.value_labels) {
        absl::StrAppend(&out, "<text class=\"value-label\" x=\"", Num(x + bar_width / 2), "\" y=\"",
                        Num(top - 4), "\" text-anchor=\"middle\">", XmlEscape(ValueLabel(v)),
                        "</text>\n");
      }
      stack += v;
    }
    if (label_categories) {
      const double cx = area.left + slot * (static_cast<double>(c) + 0.5);
      const double y = area.top + area.height + 14;
      absl::StrAppend(&out, "<text class=\"x-tick-label\" x=\"", Num(cx), "\" y=\"", Num(y),
                      "\" text-anchor=\"end\" transform=\"rotate(-30 ", Num(cx), " ", Num(y),
                      ")\">", XmlEscape(chart.categories[c].substr(0, 28)), "</text>\n");
    }
  }
  out += "</g>\n";
  if (legend) {
    std::vector<LegendEntry> entries;
    for (size_t g = 0; g < chart.groups.size(); ++g) {
      entries.push_back({chart.groups[g].name, Color(g)});
    }
    absl::StrAppend(&out, Legend(area, entries));
  }
  return out + "</svg>\n";
}

namespace {

// Finite values in ascending order, as std::sort puts them (only 0.0 and -0.0, equal, may trade
// places): above 2^16 values by their bits in 16-bit counting passes (a 10^6-chunk report's
// runtimes: a quarter of std::sort's time; the mean line sums them in this order).
void SortAscending(std::vector<double>& values) {
  if (values.size() < (size_t{1} << 16)) {
    std::sort(values.begin(), values.end());
    return;
  }
  // Keys whose unsigned order is the values' order: negatives' bits flipped, the sign bit set
  // on the others (0.0 for -0.0, which equals it).
  std::vector<uint64_t> keys(values.size()), scratch(values.size());
  uint64_t differing = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits;
    const double v = values[i] == 0 ? 0.0 : values[i];
    std::memcpy(&bits, &v, sizeof(bits));
    keys[i] = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
    differing |= keys[i] ^ keys[0];
  }
  for (int shift = 0; shift < 64; shift += 16) {
    if (((differing >> shift) & 0xFFFF) == 0) continue;  // every key has the same digit
    std::vector<size_t> start(size_t{1} << 16, 0);
    for (uint64_t k : keys) ++start[(k >> shift) & 0xFFFF];
    size_t sum = 0;
    for (size_t& s : start) sum += std::exchange(s, sum);
    for (uint64_t k : keys) scratch[start[(k >> shift) & 0xFFFF]++] = k;
    keys.swap(scratch);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const uint64_t bits = (keys[i] >> 63) != 0 ? keys[i] & ~(uint64_t{1} << 63) : ~keys[i];
    std::memcpy(&values[i], &bits, sizeof(bits));
  }
}

}  // namespace

std::string RenderHistogram(const HistogramChart& chart) {
  std::vector<double> values;
  for (double v : chart.values) {
    if (std::isfinite(v)) values.push_back(v);
  }
  if (values.empty()) return NoData(chart.frame);
  SortAscending(values);
  // Values spanning two decades or more (1 ms chunks beside 30 s stragglers): on a linear axis
  // every short value falls in the first bin, so the bins are equal in log10 instead.
  const bool log_x =
      chart.log_x_when_wide && values.front() > 0 && values.back() >= 100 * values.front();
  const auto to_axis = [log_x](double v) { return log_x ? std::log10(v) : v; };
  double low = to_axis(values.front());
  double high = to_axis(values.back());
  if (high == low) {
    low -= 0.5;
    high += 0.5;
  }
  const int bins = std::max(1, chart.bins);
  std::vector<double> counts(static_cast<size_t>(bins), 0);
  for (double v : values) {
    const int bin =
        std::clamp(static_cast<int>((to_axis(v) - low) / (high - low) * bins), 0, bins - 1);
    counts[static_cast<size_t>(bin)] += 1;
  }
  Range ys;
  ys.Add(0);
  for (double c : counts) ys.Add(c);
  double y_low;
  double y_high;
  ResolveY(chart.frame, ys, &y_low, &y_high);
  const bool legend = chart.mean_line || chart.median_line;
  ChartFrame frame = chart.frame;
  if (log_x) frame.x_label += " (log scale)";
  const Area area = MakeArea(frame, legend, low, high, y_low, y_high);
  std::string out = Open(frame);
  std::vector<double> x_ticks;
  if (log_x) {  // the powers of ten inside the range
    for (double e = std::ceil(low - 1e-9); e <= high + 1e-9; e += 1) x_ticks.push_back(e);
  } else {
    x_ticks = NiceTicks(low, high);
  }
  absl::StrAppend(&out, Axes(frame, area, x_ticks, false, NiceTicks(y_low, y_high), log_x));
  out += "<g class=\"bars\">\n";
  const double bin_width = (high - low) / bins;
  for (int b = 0; b < bins; ++b) {
    const double x0 = area.X(low + bin_width * b);
    const double x1 = area.X(low + bin_width * (b + 1));
    const double top = area.Y(counts[static_cast<size_t>(b)]);
    absl::StrAppend(&out, "<rect class=\"bar\" x=\"", Num(x0), "\" y=\"", Num(top), "\" width=\"",
                    Num(std::max(0.0, x1 - x0 - 1)), "\" height=\"", Num(area.Y(0) - top),
                    "\" fill=\"", Color(0), "\" fill-opacity=\"0.75\"/>\n");
  }
  out += "</g>\n";
  std::vector<LegendEntry> entries;
  const auto vertical = [&](double value, const char* color, const std::string& label) {
    const double x = area.X(to_axis(value));
    absl::StrAppend(&out, "<line class=\"stat-line\" x1=\"", Num(x), "\" y1=\"", Num(area.top),
                    "\" x2=\"", Num(x), "\" y2=\"", Num(area.top + area.height), "\" stroke=\"",
                    color, "\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n");
    entries.push_back({label, color, true});
  };
  const auto format = [&](double v) {
    return absl::StrCat(absl::StrFormat("%.*f", chart.value_decimals, v), chart.value_unit);
  };
  if (chart.mean_line) {
    double sum = 0;
    for (double v : values) sum += v;
    const double mean = sum / static_cast<double>(values.size());
    vertical(mean, "#d62728", absl::StrCat("Mean: ", format(mean)));
  }
  if (chart.median_line) {
    const size_t n = values.size();
    const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    vertical(median, "#2ca02c", absl::StrCat("Median: ", format(median)));
  }
  if (legend) absl::StrAppend(&out, Legend(area, entries));
  return out + "</svg>\n";
}

std::string RenderScatter(const ScatterChart& chart) {
  Range xs;
  Range ys;
  const size_t n = std::min(chart.x.size(), chart.y.size());
  for (size_t i = 0; i < n; ++i) {
    xs.Add(chart.x[i]);
    ys.Add(chart.y[i]);
  }
  if (xs.Empty()) return NoData(chart.frame);
  double y_low;
  double y_high;
  ResolveY(chart.frame, ys, &y_low, &y_high);
  const std::optional<LinearFit> fit =
      chart.fit_line ? FitLine(chart.x, chart.y) : std::optional<LinearFit>();
  const Area area = MakeArea(chart.frame, fit.has_value(), xs.low, xs.high, y_low, y_high);
  std::string out = Open(chart.frame);
  absl::StrAppend(
      &out, Axes(chart.frame, area, NiceTicks(xs.low, xs.high), false, NiceTicks(y_low, y_high)));
  out += "<g class=\"points\">\n";
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(chart.x[i]) || !std::isfinite(chart.y[i])) continue;
    absl::StrAppend(&out, "<circle class=\"point\" cx=\"", Num(area.X(chart.x[i])), "\" cy=\"",
                    Num(area.Y(std::clamp(chart.y[i], y_low, y_high))), "\" r=\"3\" fill=\"",
                    Color(0), "\" fill-opacity=\"0.6\"/>\n");
  }
  out += "</g>\n";
  if (fit.has_value()) {
    const auto clamp_y = [&](double y) { return std::clamp(y, y_low, y_high); };
    absl::StrAppend(&out, "<line class=\"fit-line\" x1=\"", Num(area.X(xs.low)), "\" y1=\"",
                    Num(area.Y(clamp_y(fit->slope * xs.low + fit->intercept))), "\" x2=\"",
                    Num(area.X(xs.high)), "\" y2=\"",
                    Num(area.Y(clamp_y(fit->slope * xs.high + fit->intercept))),
                    "\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n");
    // "- 0.50" rather than "+ -0.50".
    const std::string trend =
        fit->intercept < 0 ? absl::StrFormat("Trend: %.2e*x - %.2f", fit->slope, -fit->intercept)
                           : absl::StrFormat("Trend: %.2e*x + %.2f", fit->slope, fit->intercept);
    absl::StrAppend(&out, Legend(area, {{trend, "#d62728", true}}));
  }
  return out + "</svg>\n";
}

namespace {

// The datasets' and the sections' colours; beyond `max_entries`, the last one says how many
// more there are.
std::vector<LegendEntry> GanttLegend(const GanttChart& chart, size_t max_entries) {
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < chart.legend.size(); ++i) entries.push_back({chart.legend[i], Color(i)});
  for (size_t i = 0; i < chart.slice_legend.size(); ++i) {
    entries.push_back({chart.slice_legend[i], SliceColor(i)});
  }
  const size_t shown = std::min(entries.size(), max_entries);
  if (shown < entries.size()) {
    const size_t more = entries.size() - shown + 1;
    entries.resize(shown - (shown > 0 ? 1 : 0));
    entries.push_back({absl::StrCat("+", more, " more"), "#ffffff"});
  }
  return entries;
}

// One light background per row, so that idle gaps between bars show as gaps, and the rows'
// names when the lanes are high enough for them (a note instead).
void AppendLanes(const Area& area, const GanttChart& chart, const ChartFrame& frame,
                 double lane_height, std::string& out) {
  const bool label_rows = lane_height >= 9;
  out += "<g class=\"lanes\" font-size=\"9\">\n";
  for (size_t r = 0; r < chart.rows.size(); ++r) {
    absl::StrAppend(&out, "<rect class=\"lane\" x=\"", Num(area.left), "\" y=\"",
                    Num(area.top + lane_height * static_cast<double>(r) + 1), "\" width=\"",
                    Num(area.width), "\" height=\"", Num(std::max(1.0, lane_height - 2)),
                    "\" fill=\"#f3f3f3\"/>\n");
    if (!label_rows) continue;
    absl::StrAppend(&out, "<text class=\"lane-label\" x=\"", Num(area.left - 6), "\" y=\"",
                    Num(area.top + lane_height * (static_cast<double>(r) + 0.5) + 3),
                    "\" text-anchor=\"end\">", XmlEscape(chart.rows[r].substr(0, 26)), "</text>\n");
  }
  if (!label_rows) {
    absl::StrAppend(&out, TooManySeriesNote(area, chart.rows.size(), frame.series_noun));
  }
  out += "</g>\n";
}

// A bar in its row's lane, its sections in the lower 40 % of it (slices under half a pixel
// are left out).
void AppendGanttBar(const Area& area, const GanttBar& bar, double lane_height, std::string& out) {
  const double bar_height = std::max(1.0, lane_height - 2);
  const double x0 = area.X(bar.start);
  const double x1 = area.X(std::max(bar.end, bar.start));
  const double y = area.top + lane_height * static_cast<double>(bar.row) + 1;
  const std::string opacity =
      bar.opacity < 1.0 ? absl::StrFormat(" fill-opacity=\"%.2f\"", std::max(0.0, bar.opacity))
                        : std::string();
  absl::StrAppend(&out, "<rect class=\"", bar.failed ? "bar failed" : "bar", "\" x=\"", Num(x0),
                  "\" y=\"", Num(y), "\" width=\"", Num(std::max(0.5, x1 - x0)), "\" height=\"",
                  Num(bar_height), "\" fill=\"", bar.failed ? "#d62728" : Color(bar.color), "\"",
                  opacity, ">");
  if (!bar.tooltip.empty()) absl::StrAppend(&out, "<title>", XmlEscape(bar.tooltip), "</title>");
  out += "</rect>\n";
  for (const GanttSlice& slice : bar.slices) {
    const double s0 = area.X(std::max(slice.start, bar.start));
    const double s1 = area.X(std::min(slice.end, std::max(bar.end, bar.start)));
    if (s1 - s0 < 0.5) continue;
    absl::StrAppend(&out, "<rect class=\"slice\" x=\"", Num(s0), "\" y=\"",
                    Num(y + bar_height * 0.6), "\" width=\"", Num(s1 - s0), "\" height=\"",
                    Num(bar_height * 0.4), "\" fill=\"", SliceColor(slice.color), "\"/>\n");
  }
}

}  // namespace

std::string RenderGantt(const GanttChart& chart) {
  Range xs;
  for (const GanttBar& bar : chart.bars) {
    xs.Add(bar.start);
    xs.Add(bar.end);
  }
  if (xs.Empty() || chart.rows.empty()) return NoData(chart.frame);
  FixX(chart.frame, &xs);
  ChartFrame frame = chart.frame;
  // Every lane at least 4 px high, at most 36.
  const double lane = std::clamp(260.0 / static_cast<double>(chart.rows.size()), 4.0, 36.0);
  frame.height = std::max(frame.height, static_cast<int>(lane * chart.rows.size()) + 115);
  const std::vector<LegendEntry> entries = GanttLegend(chart, frame.max_legend_entries);
  const double right = entries.empty() ? 20.0 : 170.0;
  const double left = 150.0;
  const Area area = Area{left,
                         40,
                         frame.width - left - right,
                         frame.height - 40.0 - 75.0,
                         xs.low,
                         xs.high,
                         0,
                         static_cast<double>(chart.rows.size())};
  std::string out = Open(frame);
  absl::StrAppend(
      &out,
      Axes(frame, area, chart.clock_time ? TimeTicks(xs.low, xs.high) : NiceTicks(xs.low, xs.high),
           chart.clock_time, {}));
  const double lane_height = area.height / static_cast<double>(chart.rows.size());
  AppendLanes(area, chart, frame, lane_height, out);
  out += "<g class=\"bars\">\n";
  for (const GanttBar& bar : chart.bars) {
    if (bar.row < chart.rows.size()) AppendGanttBar(area, bar, lane_height, out);
  }
  out += "</g>\n";
  if (!entries.empty()) {
    absl::StrAppend(&out, Legend(area, entries));
  }
  return out + "</svg>\n";
}

}  // namespace roastcoffea
