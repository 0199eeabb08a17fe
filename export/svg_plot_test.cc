#include "export/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// Well-formedness that matters here: one root, balanced groups, no raw markup from data.
void ExpectWellFormed(const std::string& svg) {
  EXPECT_TRUE(absl::StartsWith(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"")) << svg;
  EXPECT_TRUE(absl::EndsWith(svg, "</svg>\n"));
  EXPECT_EQ(Count(svg, "<svg"), 1);
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_FALSE(absl::StrContains(svg, "nan")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, "inf\"")) << svg;
}

TEST(NiceTicksTest, OneTwoFiveSteps) {
  EXPECT_EQ(NiceTicks(0, 100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  const std::vector<double> fifths = NiceTicks(0, 1, 5);
  ASSERT_EQ(fifths.size(), 6u);
  for (size_t i = 0; i < fifths.size(); ++i) EXPECT_NEAR(fifths[i], 0.2 * i, 1e-12);
  EXPECT_EQ(NiceTicks(3, 3), (std::vector<double>{3}));
  EXPECT_TRUE(NiceTicks(0, std::nan("")).empty());
  const std::vector<double> ticks = NiceTicks(-7, 13, 4);
  ASSERT_FALSE(ticks.empty());
  EXPECT_GE(ticks.front(), -7);
  EXPECT_LE(ticks.back(), 13);
  EXPECT_EQ(ticks[1] - ticks[0], 5);
}

TEST(TimeTicksTest, ClockFriendlySteps) {
  const double start = 1795335303;  // 08:15:03
  const std::vector<double> ticks = TimeTicks(start, start + 120);
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks[1] - ticks[0], 30);
  EXPECT_EQ(std::fmod(ticks[0], 30), 0);
  EXPECT_EQ(TimeTicks(start, start + 7200)[1] - TimeTicks(start, start + 7200)[0], 1800);
}

TEST(RenderLineChartTest, SubSecondRunsGetFractionalClockLabels) {
  LineChart chart;
  chart.time_axis = true;
  const double start = 1795335303;
  chart.series.push_back({"w", {start, start + 0.5}, {1, 2}});
  const std::string svg = RenderLineChart(chart);
  EXPECT_TRUE(absl::StrContains(svg, ">08:15:03.1</text>")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, ">08:15:03.5</text>")) << svg;
}

TEST(TickLabelTest, IntegersAndFractions) {
  EXPECT_EQ(TickLabel(20), "20");
  EXPECT_EQ(TickLabel(0.25), "0.25");
  EXPECT_EQ(TickLabel(2.5e9), "2.5e+09");
}

TEST(XmlEscapeTest, MarkupAndControls) {
  EXPECT_EQ(XmlEscape("<a href=\"x\">&'</a>\x01"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

TEST(FitLineTest, ExactLineAndDegenerateInput) {
  const std::optional<LinearFit> fit = FitLine({1, 2, 3}, {3, 5, 7});
  ASSERT_TRUE(fit.has_value());
  EXPECT_DOUBLE_EQ(fit->slope, 2);
  EXPECT_DOUBLE_EQ(fit->intercept, 1);
  EXPECT_FALSE(FitLine({1, 1}, {2, 3}).has_value());
  EXPECT_FALSE(FitLine({1}, {2}).has_value());
}

// The vertices of the first series line of `svg`.
std::vector<std::pair<double, double>> LinePoints(const std::string& svg) {
  std::vector<std::pair<double, double>> points;
  const size_t line = svg.find("class=\"line\"");
  if (line == std::string::npos) return points;
  const size_t begin = svg.find("points=\"", line) + 8;
  const std::string list = svg.substr(begin, svg.find('"', begin) - begin);
  for (absl::string_view pair : absl::StrSplit(list, ' ')) {
    const std::vector<std::string> xy = absl::StrSplit(pair, ',');
    points.emplace_back(std::stod(xy[0]), std::stod(xy[1]));
  }
  return points;
}

bool EverySegmentIsHorizontalOrVertical(const std::vector<std::pair<double, double>>& points) {
  for (size_t i = 1; i < points.size(); ++i) {
    if (points[i].first != points[i - 1].first && points[i].second != points[i - 1].second) {
      return false;
    }
  }
  return true;
}

TEST(RenderLineChartTest, StepSeriesAreDrawnHorizontalThenVertical) {
  // 1 until 10, then 3 for no time and 2 (two changes at 10), 2 until 20.
  LineChart chart;
  LineSeries series{"count", {0, 10, 10, 20}, {1, 1, 3, 2}};
  series.step = true;
  chart.series.push_back(series);
  std::string svg = RenderLineChart(chart);
  ExpectWellFormed(svg);
  std::vector<std::pair<double, double>> points = LinePoints(svg);
  // (0,1) (10,1) (10,3) (20,3) (20,2): the 3 holds until the next instant; the corner (10,1)
  // that the point repeating the state before the change would draw again is drawn once.
  ASSERT_EQ(points.size(), 5u);
  EXPECT_TRUE(EverySegmentIsHorizontalOrVertical(points));
  EXPECT_EQ(points[2].second, points[3].second);  // horizontal at 3, then down to 2 at 20
  EXPECT_EQ(points[3].first, points[4].first);
  // The same points as samples: a line through them, the last segment a ramp.
  chart.series[0].step = false;
  svg = RenderLineChart(chart);
  points = LinePoints(svg);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_FALSE(EverySegmentIsHorizontalOrVertical(points));
}

// A step series with a point repeating the state before each change (saved before #25) and
// the same series without them draw the same picture, byte for byte.
TEST(RenderLineChartTest, StepSeriesWithAndWithoutBeforePointsDrawTheSame) {
  LineChart with_before, without;
  LineSeries before{"executing", {0, 10, 10, 25, 25, 30}, {1, 1, 3, 3, 0, 0}};
  LineSeries plain{"executing", {0, 10, 25, 30}, {1, 3, 0, 0}};
  before.step = plain.step = true;
  before.fill = plain.fill = true;
  with_before.series.push_back(before);
  without.series.push_back(plain);
  const std::string svg = RenderLineChart(without);
  EXPECT_EQ(RenderLineChart(with_before), svg);
  EXPECT_EQ(LinePoints(svg).size(), 6u);  // (0,1) (10,1) (10,3) (25,3) (25,0) (30,0)
}

TEST(RenderLineChartTest, TimeAxisTicksLabelsAndLegend) {
  LineChart chart;
  chart.frame.title = "Memory <Utilization>";
  chart.frame.x_label = "Time (UTC)";
  chart.frame.y_label = "Memory Utilization (%)";
  chart.frame.y_min = 0;
  chart.frame.y_max = 100;
  chart.time_axis = true;
  const double start = 1795335303;
  LineSeries series{"worker <1> & co", {start, start + 60, start + 120}, {10, 50, 150}};
  series.markers = true;
  series.band_low = {5, 40, 60};
  series.band_high = {20, 70, 90};
  chart.series.push_back(series);
  const std::string svg = RenderLineChart(chart);
  ExpectWellFormed(svg);
  EXPECT_TRUE(absl::StrContains(svg, "Memory &lt;Utilization&gt;"));
  EXPECT_TRUE(absl::StrContains(svg, "worker &lt;1&gt; &amp; co"));
  EXPECT_FALSE(absl::StrContains(svg, "<1>"));
  EXPECT_TRUE(absl::StrContains(svg, ">08:15:30</text>")) << svg;  // a 30 s tick, UTC
  EXPECT_TRUE(absl::StrContains(svg, ">08:17:00</text>")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "rotate(-45"));
  EXPECT_TRUE(absl::StrContains(svg, "class=\"x-label\""));
  EXPECT_TRUE(absl::StrContains(svg, ">Memory Utilization (%)</text>"));
  EXPECT_EQ(Count(svg, "class=\"y-tick\""), 6);  // 0, 20, ..., 100
  EXPECT_TRUE(absl::StrContains(svg, ">100</text>"));
  EXPECT_EQ(Count(svg, "class=\"marker\""), 3);
  EXPECT_EQ(Count(svg, "class=\"band\""), 1);
  EXPECT_TRUE(absl::StrContains(svg, ">Min-Max Range</text>"));
  EXPECT_TRUE(absl::StrContains(svg, "class=\"legend\""));
}

TEST(RenderLineChartTest, FiveHundredWorkersKeepTheChartReadable) {
  LineChart chart;
  chart.frame.title = "CPU";
  chart.frame.series_noun = "workers";
  chart.time_axis = true;
  for (int w = 0; w < 500; ++w) {
    chart.series.push_back({absl::StrCat("w", w), {0, 1, 2}, {1.0 * w, 2.0, 3.0}});
  }
  const std::string svg = RenderLineChart(chart);
  ExpectWellFormed(svg);
  EXPECT_FALSE(absl::StrContains(svg, "class=\"legend\""));
  EXPECT_TRUE(absl::StrContains(svg, ">Showing 500 workers</text>"));
  EXPECT_EQ(Count(svg, "class=\"line\""), 500);
  EXPECT_TRUE(absl::StrContains(svg, "stroke-opacity=\"0.5\""));
}

TEST(RenderLineChartTest, NoDataSaysSo) {
  LineChart chart;
  chart.frame.title = "Empty";
  const std::string svg = RenderLineChart(chart);
  ExpectWellFormed(svg);
  EXPECT_TRUE(absl::StrContains(svg, ">No data</text>"));
}

TEST(RenderBarChartTest, GroupedAndStackedBars) {
  BarChart chart;
  chart.frame.title = "CPU vs I/O";
  chart.frame.y_label = "Time (seconds)";
  chart.categories = {"Proc<A>", "lambda"};
  chart.groups = {{"CPU Time", {3, 1}}, {"I/O Time", {1, 0.5}}};
  std::string svg = RenderBarChart(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 4);
  EXPECT_TRUE(absl::StrContains(svg, ">Proc&lt;A&gt;</text>"));
  EXPECT_TRUE(absl::StrContains(svg, ">CPU Time</text>"));
  EXPECT_TRUE(absl::StrContains(svg, ">Time (seconds)</text>"));
  chart.stacked = true;
  chart.value_labels = true;
  svg = RenderBarChart(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"value-label\""), 4);
  // Stacked: the axis reaches the tallest stack (4).
  EXPECT_TRUE(absl::StrContains(svg, ">4</text>")) << svg;
}

TEST(RenderHistogramTest, BinsMeanAndMedian) {
  HistogramChart chart;
  chart.frame.title = "Runtime";
  chart.values = {1, 2, 2, 3, 10};
  chart.bins = 9;
  chart.value_unit = "s";
  const std::string svg = RenderHistogram(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 9);
  EXPECT_TRUE(absl::StrContains(svg, ">Mean: 3.60s</text>"));
  EXPECT_TRUE(absl::StrContains(svg, ">Median: 2.00s</text>"));
  EXPECT_EQ(Count(svg, "class=\"stat-line\""), 2);
}

// The heights of the histogram's bars, in order.
std::vector<double> BarHeights(const std::string& svg) {
  std::vector<double> heights;
  for (size_t at = svg.find("class=\"bar\""); at != std::string::npos;
       at = svg.find("class=\"bar\"", at + 1)) {
    const size_t h = svg.find("height=\"", at) + 8;
    heights.push_back(std::stod(svg.substr(h, svg.find('"', h) - h)));
  }
  return heights;
}

// Above 2^16 values the histogram sorts them by their bits (negatives, zeros of both signs,
// fractions): the mean, the median and the bars are those std::sort gives.
TEST(RenderHistogramTest, ManyValuesGiveTheMeanMedianAndBarsOfTheSortedValues) {
  HistogramChart chart;
  chart.bins = 4;
  chart.value_unit = "s";
  uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 100001; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    const double v = static_cast<double>(state % 20000) * 0.37 - 3000;
    chart.values.push_back(i % 1000 == 0 ? (i % 2000 == 0 ? -0.0 : 0.0) : v);
  }
  std::vector<double> sorted = chart.values;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : sorted) sum += v;
  const std::string svg = RenderHistogram(chart);
  ExpectWellFormed(svg);
  EXPECT_TRUE(absl::StrContains(
      svg, absl::StrFormat(">Mean: %.2fs</text>", sum / static_cast<double>(sorted.size()))))
      << svg;
  EXPECT_TRUE(
      absl::StrContains(svg, absl::StrFormat(">Median: %.2fs</text>", sorted[sorted.size() / 2])))
      << svg;
  std::vector<double> counts(4, 0);
  for (double v : sorted) {
    ++counts[static_cast<size_t>(std::clamp(
        static_cast<int>((v - sorted.front()) / (sorted.back() - sorted.front()) * 4), 0, 3))];
  }
  const std::vector<double> heights = BarHeights(svg);
  ASSERT_EQ(heights.size(), 4u);
  for (size_t b = 1; b < 4; ++b) {
    EXPECT_NEAR(heights[b] / heights[0], counts[b] / counts[0], 0.01) << b;
  }
}

TEST(RenderHistogramTest, WideRangeGetsLogBinsAndAxis) {
  HistogramChart chart;
  chart.frame.x_label = "Runtime (seconds)";
  chart.values = {0.001, 0.001, 0.001, 0.001, 0.001, 0.01, 0.1, 1, 10};
  chart.bins = 4;  // one per decade
  chart.log_x_when_wide = true;
  std::string svg = RenderHistogram(chart);
  ExpectWellFormed(svg);
  EXPECT_TRUE(absl::StrContains(svg, ">Runtime (seconds) (log scale)</text>")) << svg;
  for (const char* tick :
       {">0.001</text>", ">0.01</text>", ">0.1</text>", ">1</text>", ">10</text>"}) {
    EXPECT_TRUE(absl::StrContains(svg, tick)) << tick;
  }
  std::vector<double> heights = BarHeights(svg);
  ASSERT_EQ(heights.size(), 4u);
  // Counts 5, 1, 1, 2: the 1 ms chunks are one bar, the rest spread over the decades.
  EXPECT_NEAR(heights[1], heights[0] / 5, 0.02);  // coordinates have 2 decimals
  EXPECT_NEAR(heights[2], heights[1], 0.02);      // coordinates have 2 decimals
  EXPECT_NEAR(heights[3], 2 * heights[1], 0.02);  // coordinates have 2 decimals

  // Within two decades, or with a zero, the axis stays linear.
  chart.values = {1, 2, 50};
  svg = RenderHistogram(chart);
  EXPECT_FALSE(absl::StrContains(svg, "log scale"));
  chart.values = {0, 0.001, 10};
  EXPECT_FALSE(absl::StrContains(RenderHistogram(chart), "log scale"));
  chart.values = {0.001, 10};
  chart.log_x_when_wide = false;
  EXPECT_FALSE(absl::StrContains(RenderHistogram(chart), "log scale"));
}

TEST(RenderScatterTest, TrendLineLabel) {
  ScatterChart chart;
  chart.frame.title = "Runtime vs events";
  chart.x = {1000, 2000, 3000};
  chart.y = {1.0, 2.0, 3.0};
  const std::string svg = RenderScatter(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"point\""), 3);
  EXPECT_TRUE(absl::StrContains(svg, "class=\"fit-line\""));
  EXPECT_TRUE(absl::StrContains(svg, ">Trend: 1.00e-03*x + 0.00</text>")) << svg;
}

TEST(RenderScatterTest, NegativeInterceptReadsAsASubtraction) {
  ScatterChart chart;
  chart.x = {1000, 2000};
  chart.y = {0.5, 1.5};
  EXPECT_TRUE(absl::StrContains(RenderScatter(chart), ">Trend: 1.00e-03*x - 0.50</text>"));
}

TEST(RenderGanttTest, LanesBarsFailuresAndTooltips) {
  GanttChart chart;
  chart.frame.title = "Chunks";
  chart.rows = {"w<1> #0", "w2 #1"};
  const double start = 1795335303;
  chart.bars = {{0, start, start + 2, false, "ds <a> [0, 10)"},
                {1, start + 1, start + 3, true, "failed & gone"}};
  const std::string svg = RenderGantt(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"bar\""), 1);
  EXPECT_EQ(Count(svg, "class=\"bar failed\""), 1);
  EXPECT_TRUE(absl::StrContains(svg, ">w&lt;1&gt; #0</text>"));
  EXPECT_TRUE(absl::StrContains(svg, "<title>ds &lt;a&gt; [0, 10)</title>"));
  EXPECT_TRUE(absl::StrContains(svg, ">08:15:04.0</text>")) << svg;  // 0.5 s ticks
}

TEST(RenderGanttTest, DatasetColoursSlicesLegendAndSecondsAxis) {
  GanttChart chart;
  chart.frame.title = "Chunks";
  chart.clock_time = false;
  chart.rows = {"w #0"};
  chart.legend = {"ttbar", "wjets"};
  chart.slice_legend = {"section select"};
  GanttBar first{0, 0.0, 2.0, false, "a"};
  first.slices = {{0.5, 1.5, 0}};
  GanttBar second{0, 3.0, 4.0, false, ""};
  second.color = 1;
  second.opacity = 0.4;
  chart.bars = {first, second};
  chart.frame.x_min = 0;
  chart.frame.x_max = 10;
  const std::string svg = RenderGantt(chart);
  ExpectWellFormed(svg);
  EXPECT_EQ(Count(svg, "class=\"slice\""), 1);
  EXPECT_TRUE(absl::StrContains(svg, "fill=\"#1f77b4\">"));  // ttbar: the first colour
  EXPECT_TRUE(absl::StrContains(svg, "fill=\"#ff7f0e\" fill-opacity=\"0.40\">"));
  EXPECT_TRUE(absl::StrContains(svg, ">ttbar</text>"));
  EXPECT_TRUE(absl::StrContains(svg, ">section select</text>"));
  // Seconds, up to the fixed end of the axis.
  EXPECT_TRUE(absl::StrContains(svg, ">10</text>")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, ":00"));
  EXPECT_EQ(Count(svg, "class=\"lane\""), 1);
}

TEST(RenderBarChartTest, LargeValueLabelsHaveThousandsSeparators) {
  BarChart chart;
  chart.categories = {"a", "b"};
  chart.groups = {{"MiB", {91625.4, 12.25}}};
  chart.value_labels = true;
  const std::string svg = RenderBarChart(chart);
  EXPECT_TRUE(absl::StrContains(svg, ">91,625</text>")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, ">12.2</text>")) << svg;
}

TEST(RenderLineChartTest, FixedXRangeAndDashedLimitAndBandLegend) {
  LineChart chart;
  chart.frame.x_min = 0;
  chart.frame.x_max = 100;
  LineSeries mean{"Mean", {10, 20}, {1, 2}};
  mean.band_low = {0.5, 1};
  mean.band_high = {2, 3};
  LineSeries limit{"Limit", {0, 100}, {4, 4}};
  limit.dashed = true;
  chart.series = {mean, limit};
  const std::string svg = RenderLineChart(chart);
  ExpectWellFormed(svg);
  EXPECT_TRUE(absl::StrContains(svg, ">100</text>")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "data-series=\"Limit\""));
  EXPECT_EQ(Count(svg, "stroke-dasharray=\"6 4\""), 1);
  EXPECT_EQ(Count(svg, "stroke-dasharray=\"4 3\""), 1);  // its legend entry
  // The band's legend entry is an area, not a second line of the mean's colour.
  EXPECT_TRUE(absl::StrContains(svg, "height=\"10\" fill=\"#1f77b4\" fill-opacity=\"0.25\""));
}

}  // namespace
}  // namespace roastcoffea
