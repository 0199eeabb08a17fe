#include "export/html_report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "export/report_plots.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(RenderHtmlReportTest, WarningsHostAndBuildComeFirst) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  measurement.add_warnings()->set_message("4 worker threads on <2> usable CPUs");
  measurement.mutable_metadata()->mutable_host_facts()->set_online_cpus(2);
  v1::BuildInfo& build = *measurement.mutable_metadata()->mutable_analysis_build();
  build.set_build_mode("fastbuild");
  build.set_optimized(false);
  const std::string html = RenderHtmlReport(measurement);
  const size_t warnings = html.find("<h2>Warnings</h2>");
  ASSERT_NE(warnings, std::string::npos);
  EXPECT_LT(html.find("<section id=\"headline\">"), warnings);
  EXPECT_LT(warnings, html.find("<h2 id=\"summary\">"));
  EXPECT_LT(warnings, html.find("<h2 id=\"run\">Run details</h2>"));
  EXPECT_TRUE(absl::StrContains(html, "<li><a href=\"#warnings\">Warnings</a></li>"));
  EXPECT_TRUE(absl::StrContains(html, "<li>4 worker threads on &lt;2&gt; usable CPUs</li>"));
  EXPECT_TRUE(absl::StrContains(html, "<th>Machine</th><td>2 online CPUs"));
  EXPECT_TRUE(absl::StrContains(html, "<th>Measured code</th><td>fastbuild (NOT optimised)"));
}

// Issue #23 item 12: impossible figures are warnings at the top, also without other warnings.
TEST(RenderHtmlReportTest, ImpossibleFiguresAreWarnings) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  measurement.clear_warnings();
  v1::ImpossibleFigure& figure = *measurement.mutable_metrics()->add_impossible_figures();
  figure.set_code("invalid_efficiency");
  figure.set_figure("task_execution_core_efficiency");
  figure.set_message("task_execution_core_efficiency 1.40 <is> impossible");
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StrContains(html, "<h2>Warnings</h2>"));
  EXPECT_TRUE(absl::StrContains(html, "<li><a href=\"#warnings\">Warnings</a></li>"));
  EXPECT_TRUE(absl::StrContains(
      html, "<li>task_execution_core_efficiency 1.40 &lt;is&gt; impossible</li>"));
}

// Issue #16: a crafted start time near INT64_MAX seconds was shown as "292277026596-12-04" and
// moved the plots' origin. It is shown as invalid, with its raw value; the plots keep the run's
// elapsed time from the earliest chunk.
TEST(RenderHtmlReportTest, AnAbsurdStartTimeIsShownAsInvalid) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  const std::string plain = RenderHtmlReport(measurement);
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(9223372036854775807);
  measurement.mutable_metadata()->mutable_end_time()->set_seconds(-5);
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_FALSE(absl::StrContains(html, "292277026596")) << html;
  EXPECT_TRUE(
      absl::StrContains(html, "<th>Started</th><td>N/A (invalid: 9223372036854775807 s)</td>"));
  EXPECT_TRUE(absl::StrContains(html, "<th>Ended</th><td>N/A (invalid: -5 s)</td>"));
  EXPECT_TRUE(absl::StrContains(html, "N/A (invalid: 9223372036854775807 s)</p>"));  // subtitle
  // The test run's chunks start at its start time: the plots are the same without it.
  const size_t plots = plain.find("<h2 id=\"plots-0\"");
  ASSERT_NE(plots, std::string::npos);
  EXPECT_EQ(html.substr(html.find("<h2 id=\"plots-0\""), 4000), plain.substr(plots, 4000));
}

TEST(RenderHtmlReportTest, TitleTablesAndEveryPlot) {
  const v1::Measurement measurement = testing_export::RichMeasurement();
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(
      html,
      "<title>roastcoffea report: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
      "&quot;run&quot;</title>"))
      << html.substr(0, 600);
  for (const char* title :
       {"CPU Efficiency", "Throughput Metrics", "Event Processing Metrics", "Resource Utilization",
        "Timing Breakdown", "Thread Time Split (worker threads' CPU clocks)", "Chunk Metrics",
        "Failed Chunks"}) {
    EXPECT_TRUE(absl::StrContains(html, "<caption>" + HtmlEscape(title) + "</caption>")) << title;
  }
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  int drawn = 0;
  for (const ReportPlot& plot : plots) {
    EXPECT_EQ(Count(html, "id=\"plot-" + plot.id + "\""), 1) << plot.id;
    if (!plot.svg.empty()) ++drawn;
  }
  EXPECT_GT(drawn, 10);
  EXPECT_EQ(Count(html, "<figure class=\"plot"), drawn);
  EXPECT_EQ(Count(html, "<svg"), drawn);
  // No markup from the data, no script, no external resource.
  EXPECT_FALSE(absl::StrContains(html, "<script"));
  EXPECT_FALSE(absl::StrContains(html, "<b>"));
  EXPECT_FALSE(absl::StrContains(html, "</td><script>"));
  // The SVG namespace is a name, not a resource: every other URL would be one.
  const std::string without_namespace =
      absl::StrReplaceAll(html, {{"xmlns=\"http://www.w3.org/2000/svg\"", ""}});
  EXPECT_LT(without_namespace.size(), html.size());
  EXPECT_FALSE(absl::StrContains(without_namespace, "http://"));
  EXPECT_FALSE(absl::StrContains(without_namespace, "https://"));
  EXPECT_FALSE(absl::StrContains(without_namespace, "//www."));
  EXPECT_FALSE(absl::StrContains(html, "src="));
  EXPECT_FALSE(absl::StrContains(html, "url("));
  EXPECT_FALSE(absl::StrContains(html, "@import"));
  EXPECT_TRUE(absl::StrContains(html, "Content-Security-Policy"));
  EXPECT_TRUE(absl::StrContains(html, "ValueError: &lt;bad&gt; &amp; worse"));
  EXPECT_TRUE(absl::StrContains(html, "ttbar&lt;&amp;&gt;&quot;&#39;"));
}

TEST(RenderHtmlReportTest, HeadlineContentsAndPlotGroups) {
  const v1::Measurement measurement = testing_export::RichMeasurement();
  const std::string html = RenderHtmlReport(measurement);
  // Key figures with the terminal tables' labels, before the findings and the tables.
  const size_t figures = html.find("<div class=\"kpis\">");
  ASSERT_NE(figures, std::string::npos);
  EXPECT_LT(figures, html.find("id=\"findings\""));
  EXPECT_LT(html.find("id=\"findings\""), html.find("<h2 id=\"summary\">"));
  const int cards = Count(html, "<div class=\"kpi\">");
  EXPECT_GE(cards, 4);
  EXPECT_LE(cards, 6);
  EXPECT_TRUE(absl::StrContains(html, "<div class=\"kpi-label\">Total Events</div>"));
  EXPECT_TRUE(absl::StrContains(html, "<div class=\"kpi-label\">Elapsed Time</div>"));
  // Contents: a link to every section that exists.
  for (const char* anchor : {"#headline", "#summary", "#plots-0", "#plots-1", "#run"}) {
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("<a href=\"", anchor, "\">"))) << anchor;
    EXPECT_TRUE(absl::StrContains(html, absl::StrCat("id=\"", std::string(anchor + 1), "\"")))
        << anchor;
  }
  EXPECT_TRUE(absl::StrContains(html, "<h2 id=\"plots-0\">Workers over time</h2>"));
  EXPECT_TRUE(absl::StrContains(html, "<div class=\"plot-grid\">"));
  EXPECT_TRUE(absl::StrContains(html, "<figure class=\"plot wide\" id=\"plot-chunk-gantt\">"));
  // A figure's caption says what the plot leaves out, never its title again.
  for (const ReportPlot& plot : BuildReportPlots(measurement)) {
    EXPECT_FALSE(absl::StrContains(
        html, absl::StrCat("<figcaption>", HtmlEscape(plot.title), "</figcaption>")))
        << plot.id;
  }
}

TEST(RenderHtmlReportTest, FindingsSayWhichRulesWereNotEvaluated) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  metrics.clear_findings();
  metrics.clear_rule_evaluations();
  metrics.set_findings_evaluated(true);
  v1::RuleEvaluation& checked = *metrics.add_rule_evaluations();
  checked.set_code("io_bound");
  checked.set_evaluated(true);
  v1::RuleEvaluation& unknown = *metrics.add_rule_evaluations();
  unknown.set_code("debug_build");
  unknown.set_reason("no build info");
  std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StrContains(html,
                                "Findings: none of the 1 rule checked fired; not "
                                "evaluated: debug_build (no build info)"));
  v1::Finding& finding = *metrics.add_findings();
  finding.set_code("io_bound");
  finding.set_title("I/O-bound");
  html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StrContains(
      html, "<p class=\"rule-states\">Not evaluated: debug_build (no build info).</p>"));
}

TEST(RenderHtmlReportTest, ConstantPlotsBecomeOneSentence) {
  v1::Measurement measurement;
  for (int i = 0; i < 3; ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_events(25000);
    chunk.set_duration_seconds(1.0 + i);
  }
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StrContains(
      html,
      "<li id=\"plot-runtime-vs-events\"><strong>Chunk Runtime vs Number of Events:"
      "</strong> Every chunk has 25,000 events"))
      << html;
  EXPECT_TRUE(absl::StrContains(html, "id=\"plot-runtime-distribution\""));
}

TEST(RenderHtmlReportTest, EmptyMeasurementStillRenders) {
  const std::string html = RenderHtmlReport(v1::Measurement());
  EXPECT_TRUE(absl::StrContains(html, "<title>roastcoffea report: measurement</title>"));
  EXPECT_TRUE(absl::StrContains(html, "<caption>Throughput Metrics</caption>"));
  EXPECT_TRUE(absl::EndsWith(html, "</html>\n"));
}

// A profile with one frame per node: node i+1 has parent parents[i] and function names[i].
v1::Profile ProfileOf(const std::string& worker, const std::vector<int>& parents,
                      const std::vector<std::string>& names, const std::vector<int64_t>& counts) {
  v1::Profile profile;
  profile.set_source("dask");
  profile.set_worker(worker);
  profile.set_sampling_interval_seconds(0.01);
  profile.add_nodes()->set_parent(-1);
  profile.mutable_nodes(0)->set_frame(-1);
  for (size_t i = 0; i < parents.size(); ++i) {
    profile.add_frames()->set_function(names[i]);
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(parents[i]);
    node->set_frame(static_cast<int>(i));
    node->set_count(counts[i]);
  }
  return profile;
}

TEST(RenderHtmlReportTest, ProfileSectionWithFlameGraphAndTopStacks) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  int plots = 0;
  for (const ReportPlot& plot : BuildReportPlots(measurement)) plots += plot.svg.empty() ? 0 : 1;
  EXPECT_FALSE(absl::StrContains(RenderHtmlReport(measurement), ">Profile</h2>"));
  *measurement.add_profiles() = ProfileOf(testing_export::kHostileWorker, {0, 1, 1},
                                          {"main", "std::vector<int>::at", "b"}, {10, 6, 3});
  *measurement.add_profiles() = ProfileOf("w2", {0, 1}, {"main", "b"}, {10, 10});
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_EQ(Count(html, "<h2 id=\"profile\">Profile</h2>"), 1);
  EXPECT_EQ(Count(html, "<figure class=\"flame-graph\""), 1);
  EXPECT_EQ(Count(html, "<svg"), plots + 1);
  // Merged over both workers: 20 samples; hover titles, no script (the CSP forbids it).
  EXPECT_TRUE(absl::StrContains(html, "<title>all \u2014 20 samples (100.00 %, 0.200 s)</title>"))
      << html;
  EXPECT_TRUE(absl::StrContains(html, "<title>std::vector&lt;int&gt;::at \u2014 6 samples"));
  EXPECT_FALSE(absl::StrContains(html, "<script"));
  EXPECT_TRUE(absl::StrContains(html, "(merged over 2 profiles)"));
  EXPECT_TRUE(absl::StrContains(html, "<caption>Top Stacks (all workers)</caption>"));
  EXPECT_TRUE(absl::StrContains(
      html,
      "<tr><td class=\"value\">1</td><td class=\"value\">13</td><td "
      "class=\"value\">0.130</td><td class=\"value\">65.0%</td><td>b</td><td>main;b</td>"
      "</tr>"))
      << html;
  // Top stacks show short names (profile/profile_frames.h); the hover title the full one.
  EXPECT_TRUE(absl::StrContains(html, "<td>std::vector::at</td>"));
  EXPECT_FALSE(absl::StrContains(html, "<b>worker</b>"));

  // Profiles that cannot be merged: the section says why instead.
  measurement.mutable_profiles(1)->set_sampling_interval_seconds(0.5);
  const std::string broken = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StrContains(broken, "<p class=\"profile-error\">The profiles cannot be shown"));
  EXPECT_TRUE(absl::EndsWith(broken, "</html>\n"));
}

TEST(WriteHtmlReportTest, WritesAtomicallyAndNamesBadPaths) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/report.html";
  ASSERT_TRUE(WriteHtmlReport(v1::Measurement(), path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), RenderHtmlReport(v1::Measurement()));
  // Replaces an existing report.
  ASSERT_TRUE(WriteHtmlReport(testing_export::RichMeasurement(), path).ok());
  const absl::Status bad = WriteHtmlReport(v1::Measurement(), "/nonexistent-dir/x/report.html");
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.message(), "/nonexistent-dir/x/report.html")) << bad;
}

}  // namespace
}  // namespace roastcoffea
