#include "export/html_report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
  EXPECT_LT(warnings, html.find("<h2>Run</h2>"));
  EXPECT_TRUE(absl::StrContains(html, "<li>4 worker threads on &lt;2&gt; usable CPUs</li>"));
  EXPECT_TRUE(absl::StrContains(html, "<th>Machine</th><td>2 online CPUs"));
  EXPECT_TRUE(absl::StrContains(html, "<th>Measured code</th><td>fastbuild (NOT optimised)"));
}

TEST(RenderHtmlReportTest, TitleTablesAndEveryPlot) {
  const v1::Measurement measurement = testing_export::RichMeasurement();
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(
      html, "<title>roastcoffea report: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
            "&quot;run&quot;</title>"))
      << html.substr(0, 600);
  for (const char* title : {"CPU Efficiency", "Throughput Metrics", "Event Processing Metrics",
                            "Resource Utilization", "Timing Breakdown",
                            "Thread Time Split (worker threads' CPU clocks)", "Chunk Metrics",
                            "Failed Chunks"}) {
    EXPECT_TRUE(absl::StrContains(html, "<caption>" + HtmlEscape(title) + "</caption>")) << title;
  }
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  EXPECT_EQ(Count(html, "<figure class=\"plot\""), static_cast<int>(plots.size()));
  for (const ReportPlot& plot : plots) {
    EXPECT_TRUE(absl::StrContains(html, "id=\"plot-" + plot.id + "\"")) << plot.id;
  }
  EXPECT_EQ(Count(html, "<svg"), static_cast<int>(plots.size()));
  // No markup from the data, no script, no external resource.
  EXPECT_FALSE(absl::StrContains(html, "<script"));
  EXPECT_FALSE(absl::StrContains(html, "<b>"));
  EXPECT_FALSE(absl::StrContains(html, "</td><script>"));
  EXPECT_FALSE(absl::StrContains(html, "http://") &&
               !absl::StrContains(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_FALSE(absl::StrContains(html, "src="));
  EXPECT_TRUE(absl::StrContains(html, "Content-Security-Policy"));
  EXPECT_TRUE(absl::StrContains(html, "ValueError: &lt;bad&gt; &amp; worse"));
  EXPECT_TRUE(absl::StrContains(html, "ttbar&lt;&amp;&gt;&quot;&#39;"));
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
  const int plots = static_cast<int>(BuildReportPlots(measurement).size());
  EXPECT_FALSE(absl::StrContains(RenderHtmlReport(measurement), "<h2>Profile</h2>"));
  *measurement.add_profiles() =
      ProfileOf(testing_export::kHostileWorker, {0, 1, 1}, {"main", "std::vector<int>::at", "b"},
                {10, 6, 3});
  *measurement.add_profiles() = ProfileOf("w2", {0, 1}, {"main", "b"}, {10, 10});
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_EQ(Count(html, "<h2>Profile</h2>"), 1);
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
      html, "<tr><td class=\"value\">1</td><td class=\"value\">13</td><td "
            "class=\"value\">0.130</td><td class=\"value\">65.0%</td><td>b</td><td>main;b</td>"
            "</tr>"))
      << html;
  // Top stacks show short names (aggregation/profile_frames.h); the hover title the full one.
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
