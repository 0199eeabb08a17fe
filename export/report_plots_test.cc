#include "export/report_plots.h"

#include <set>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
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

// The vertices of the first series line of `svg`, in pixels.
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
  return !points.empty();
}

const ReportPlot* Find(const std::vector<ReportPlot>& plots, const std::string& id) {
  for (const ReportPlot& plot : plots) {
    if (plot.id == id) return &plot;
  }
  return nullptr;
}

// TaskVine's shape: STEP series with the state before and after each change at its instant.
TEST(BuildReportPlotsTest, StepSeriesAreDrawnAsSteps) {
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  constexpr int64_t kS = 1'000'000'000;
  v1::Measurement measurement;
  v1::TrackingData& tracking = *measurement.mutable_tracking();
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  const std::vector<std::pair<int, int>> counts = {{0, 0}, {0, 1}, {1, 1}, {1, 2},
                                                   {2, 2}, {2, 1}, {3, 1}};
  for (const auto& [s, count] : counts) {
    tracking.add_worker_count_time_unix_ns(kT0 + s * kS);
    tracking.add_worker_count(count);
  }
  auto add_worker = [&](const std::string& name, std::vector<int> seconds,
                        std::vector<double> active) {
    v1::WorkerSeries& w = *tracking.add_workers();
    w.set_worker(name);
    w.set_kind(v1::SERIES_KIND_STEP);
    for (size_t i = 0; i < seconds.size(); ++i) {
      w.add_time_unix_ns(kT0 + seconds[i] * kS);
      w.add_active_tasks(active[i]);
      w.add_executing_tasks(active[i]);
    }
  };
  add_worker("w1", {0, 1, 1, 3}, {0, 0, 2, 2});
  add_worker("w2", {1, 2, 2}, {1, 1, 0});  // leaves at 2 s
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  for (const char* id : {"worker-count", "executing-tasks", "active-tasks", "total-active-tasks"}) {
    const ReportPlot* plot = Find(plots, id);
    ASSERT_NE(plot, nullptr) << id;
    EXPECT_TRUE(EverySegmentIsHorizontalOrVertical(LinePoints(plot->svg))) << id;
  }
  // Total: each worker's held value at every instant: 0, 2+1, 2+0, 2 at 0..3 s; as steps
  // (0,0) (1,0) (1,3) (2,3) (2,2) (3,2) (3,2).
  const std::vector<std::pair<double, double>> total =
      LinePoints(Find(plots, "total-active-tasks")->svg);
  ASSERT_EQ(total.size(), 7u);
  EXPECT_LT(total[2].second, total[4].second);  // 3 is above 2 (SVG y grows downwards)
  EXPECT_EQ(total[4].second, total[6].second);  // w1's 2 held to the end
  // The worker count: 1 up to 1 s, 2 up to 2 s, 1 to 3 s, with the 0 before the first change.
  EXPECT_EQ(LinePoints(Find(plots, "worker-count")->svg).size(), 10u);
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
