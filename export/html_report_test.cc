#include "export/html_report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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

TEST(RenderHtmlReportTest, TitleTablesAndEveryPlot) {
  const v1::Measurement measurement = testing_export::RichMeasurement();
  const std::string html = RenderHtmlReport(measurement);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(
      html, "<title>roastcoffea report: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
            "&quot;run&quot;</title>"))
      << html.substr(0, 600);
  for (const char* title : {"Throughput Metrics", "Event Processing Metrics",
                            "Resource Utilization", "Timing Breakdown",
                            "Fine Metrics (from Dask Spans)", "Chunk Metrics", "Failed Chunks"}) {
    EXPECT_TRUE(absl::StrContains(html, std::string("<caption>") + title + "</caption>")) << title;
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
