#include "export/report_plots.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "export/test_measurement.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

std::vector<std::string> Ids(const std::vector<ReportPlot>& plots) {
  std::vector<std::string> ids;
  for (const ReportPlot& plot : plots) ids.push_back(plot.id);
  return ids;
}

TEST(BuildReportPlotsTest, EveryPlotWithDataInOrder) {
  const std::vector<ReportPlot> plots = BuildReportPlots(testing_export::RichMeasurement());
  EXPECT_EQ(Ids(plots),
            (std::vector<std::string>{
                "worker-count", "memory-utilization", "memory-per-worker", "cpu-utilization",
                "cpu-per-worker", "occupancy", "executing-tasks", "active-tasks",
                "total-active-tasks", "throughput", "runtime-distribution", "runtime-vs-events",
                "compression-ratio", "bytes-read-percent", "branches-per-chunk",
                "bytes-per-chunk", "task-cpu-io", "task-bytes-read", "task-overhead",
                "efficiency-summary", "resource-summary", "chunk-gantt"}));
  for (const ReportPlot& plot : plots) {
    EXPECT_TRUE(absl::StartsWith(plot.svg, "<svg")) << plot.id;
    EXPECT_TRUE(absl::StrContains(plot.svg, "class=\"chart-title\"")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, ">No data<")) << plot.id;
    // Hostile names are escaped wherever they appear.
    EXPECT_FALSE(absl::StrContains(plot.svg, "<b>")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, "<&>")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, "Dijet<Processor>")) << plot.id;
  }
  EXPECT_EQ(plots[0].title, "Worker Count Over Time");
  EXPECT_TRUE(absl::StrContains(plots[2].svg, "&lt;b&gt;worker&lt;/b&gt;&amp;1"));
  EXPECT_TRUE(absl::StrContains(plots[16].svg, "Dijet&lt;Processor&gt;"));
  // The failed chunk is red in the Gantt chart.
  EXPECT_TRUE(absl::StrContains(plots.back().svg, "class=\"bar failed\""));
  EXPECT_TRUE(absl::StrContains(plots.back().svg, "ValueError: &lt;bad&gt; &amp; worse"));
}

TEST(BuildReportPlotsTest, LegendsGiveWayToACountWithManyWorkers) {
  ReportPlotOptions options;
  options.max_legend_entries = 5;
  const std::vector<ReportPlot> plots =
      BuildReportPlots(testing_export::RichMeasurement(/*workers=*/12), options);
  ASSERT_GT(plots.size(), 4u);
  EXPECT_EQ(plots[2].id, "memory-per-worker");
  EXPECT_TRUE(absl::StrContains(plots[2].svg, "Showing 12 workers"));
  EXPECT_FALSE(absl::StrContains(plots[2].svg, "class=\"legend\""));
}

TEST(BuildReportPlotsTest, EmptyMeasurementGivesOnlyTheEfficiencySummary) {
  EXPECT_EQ(Ids(BuildReportPlots(v1::Measurement())),
            (std::vector<std::string>{"efficiency-summary"}));
}

TEST(BuildReportPlotsTest, ChunkInfoAloneGivesTheThroughput) {
  v1::Measurement measurement;
  v1::ChunkInfo& info = *measurement.mutable_metrics()->mutable_chunks()->add_chunk_info();
  info.set_start_unix_ns(1795335303LL * 1000000000LL);
  info.set_end_unix_ns(1795335305LL * 1000000000LL);
  info.set_bytes_read(250000000);  // 1 Gbps over 2 s
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  ASSERT_FALSE(plots.empty());
  EXPECT_EQ(plots[0].id, "throughput");
  EXPECT_TRUE(absl::StrContains(plots[0].svg, "Data Rate (Gbps, decimal)"));
}

}  // namespace
}  // namespace roastcoffea
