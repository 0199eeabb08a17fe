#include "export/compare_html.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

v1::Measurement MakeRun(double cores, double elapsed) {
  v1::Measurement run;
  (*run.mutable_metadata()->mutable_configuration())["threads"] = absl::StrCat(cores);
  run.mutable_metrics()->mutable_workflow()->set_elapsed_time_seconds(elapsed);
  run.mutable_metrics()->mutable_workflow()->set_total_events(1000);
  return run;
}

TEST(ComparisonHtmlTest, TableAndScalingPlot) {
  absl::StatusOr<ComparisonResult> result = CompareRuns(
      {"one", "two", "<four>"}, {MakeRun(1, 10), MakeRun(2, 5.5), MakeRun(4, 3.25)}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->fit.has_value());
  const std::string html = ComparisonHtml(*result);
  EXPECT_TRUE(absl::StartsWith(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::StrContains(html, "<th>threads (differs)</th>")) << html;
  EXPECT_TRUE(absl::StrContains(html, "<th>&lt;four&gt;</th>")) << html;
  EXPECT_FALSE(absl::StrContains(html, "<four>"));
  EXPECT_TRUE(absl::StrContains(html, "<td>Elapsed Time</td>")) << html;
  EXPECT_TRUE(absl::StrContains(html, "Amdahl")) << html;
  EXPECT_TRUE(absl::StrContains(html, "<svg")) << html;
  // Exact Amdahl data (s = 0.1: 10 s, 5.5 s, 3.25 s): measured speedup at 4 cores 10 / 3.25.
  const std::string svg = ScalingPlotSvg(*result);
  EXPECT_TRUE(absl::StrContains(svg, "Measured")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "Amdahl s=0.100")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "Ideal")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "R\u00B2 1.0000")) << svg;
  EXPECT_TRUE(absl::EndsWith(html, "</body></html>\n"));
}

TEST(ComparisonHtmlTest, NoFitSaysWhyAndDrawsTheMeasuredPoints) {
  // Two core counts (a 2-CPU host): 10 s and 5.5 s per 1000 events, speedup 1.82 at 2 cores.
  absl::StatusOr<ComparisonResult> result =
      CompareRuns({"one", "two"}, {MakeRun(1, 10), MakeRun(2, 5.5)}, {});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->speedups.size(), 2u);
  EXPECT_NEAR(result->speedups[1].speedup.value, 10 / 5.5, 1e-12);
  const std::string svg = ScalingPlotSvg(*result);
  EXPECT_TRUE(absl::StrContains(svg, "<svg")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "measured speedup against 1 core (no Amdahl fit)")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "Measured")) << svg;
  EXPECT_TRUE(absl::StrContains(svg, "Ideal")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, "Amdahl s=")) << svg;
  const std::string html = ComparisonHtml(*result);
  EXPECT_TRUE(absl::StrContains(html, "no Amdahl fit: it needs runs on at least 3")) << html;
  EXPECT_TRUE(absl::StrContains(html, "<svg")) << html;
  // One core count: no scaling study, no plot.
  result = CompareRuns({"one", "again"}, {MakeRun(1, 10), MakeRun(1, 11)}, {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(ScalingPlotSvg(*result), "");
}

TEST(ComparisonHtmlTest, VerdictWarningsAndFindingsOfEachRun) {
  v1::Measurement a = MakeRun(2, 10);
  v1::Measurement b = MakeRun(2, 5);
  (*b.mutable_metadata()->mutable_configuration())["label"] = "v2 <fast>";
  v1::Warning& warning = *b.add_warnings();
  warning.set_code("load");
  warning.set_message("the host was busy: load <5.5>");
  b.mutable_metrics()->set_findings_evaluated(true);
  b.mutable_metrics()->add_findings()->set_code("cpu_starvation");
  absl::StatusOr<ComparisonResult> result = CompareRuns({"a", "b"}, {a, b}, {});
  ASSERT_TRUE(result.ok());
  const std::string html = ComparisonHtml(*result);
  EXPECT_TRUE(absl::StrContains(html,
                                "<b>Verdict:</b> b ran 2.00x faster than a (elapsed time "
                                "per event; one run each and no chunk records: no noise "
                                "estimate)"))
      << html;
  EXPECT_TRUE(absl::StrContains(
      html, "<li class=\"warning\">WARNING (b): the host was busy: load &lt;5.5&gt;</li>"))
      << html;
  EXPECT_TRUE(absl::StrContains(html, "Findings (b): cpu_starvation")) << html;
}

TEST(ComparisonHtmlTest, DataRateFromRereadingSaysWhy) {
  v1::Measurement a = MakeRun(2, 10);
  v1::Measurement b = MakeRun(2, 10);
  (*b.mutable_metadata()->mutable_configuration())["chunk_size"] = "2000";
  a.mutable_metrics()->mutable_workflow()->set_data_rate_gbps(1.0);
  a.mutable_metrics()->mutable_workflow()->set_read_amplification(1.0);
  b.mutable_metrics()->mutable_workflow()->set_data_rate_gbps(2.0);
  b.mutable_metrics()->mutable_workflow()->set_read_amplification(4.4);
  absl::StatusOr<ComparisonResult> result = CompareRuns({"a", "b"}, {a, b}, {});
  ASSERT_TRUE(result.ok());
  const std::string html = ComparisonHtml(*result);
  EXPECT_TRUE(absl::StrContains(html, "<td class=\"num from_rereading\">2 (+100.0%) ^</td>"))
      << html;
  EXPECT_TRUE(absl::StrContains(
      html,
      "<p class=\"rereading\">^ b: Data Rate +100.0% while read amplification went from 1 "
      "to 4.4</p>"))
      << html;
}

TEST(WriteComparisonHtmlTest, ErrorNamesThePath) {
  absl::StatusOr<ComparisonResult> result =
      CompareRuns({"one", "two"}, {MakeRun(1, 10), MakeRun(2, 5.5)}, {});
  ASSERT_TRUE(result.ok());
  const absl::Status status = WriteComparisonHtml("/nonexistent-dir/x/c.html", *result);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "/nonexistent-dir/x/c.html")) << status;
}

}  // namespace
}  // namespace roastcoffea
