#include "export/report_plots.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

const ReportPlot* Find(const std::vector<ReportPlot>& plots, const std::string& id) {
  for (const ReportPlot& plot : plots) {
    if (plot.id == id) return &plot;
  }
  return nullptr;
}

TEST(BuildReportPlotsTest, EveryPlotWithDataInOrder) {
  const std::vector<ReportPlot> plots = BuildReportPlots(testing_export::RichMeasurement());
  EXPECT_EQ(Ids(plots), (std::vector<std::string>{
                            "worker-count", "memory", "cpu", "occupancy", "executing-tasks",
                            "active-tasks", "chunk-gantt", "running-chunks", "throughput",
                            "runtime-distribution", "runtime-vs-events", "bytes-per-dataset",
                            "branches-per-chunk", "bytes-accessed-per-chunk", "compression-ratio",
                            "bytes-read-percent", "task-cpu-io", "task-overhead"}));
  for (const ReportPlot& plot : plots) {
    EXPECT_FALSE(plot.group.empty()) << plot.id;
    EXPECT_TRUE(!plot.svg.empty() || !plot.note.empty()) << plot.id;
    if (plot.svg.empty()) continue;
    EXPECT_TRUE(absl::StartsWith(plot.svg, "<svg")) << plot.id;
    EXPECT_TRUE(absl::StrContains(plot.svg, "class=\"chart-title\"")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, ">No data<")) << plot.id;
    // Time axes count seconds since the start, never clock times.
    EXPECT_FALSE(absl::StrContains(plot.svg, "Time (UTC)")) << plot.id;
    // Hostile names are escaped wherever they appear.
    EXPECT_FALSE(absl::StrContains(plot.svg, "<b>")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, "<&>")) << plot.id;
    EXPECT_FALSE(absl::StrContains(plot.svg, "Dijet<Processor>")) << plot.id;
  }
  EXPECT_EQ(plots[0].title, "Worker Count Over Time");
  EXPECT_TRUE(absl::StrContains(Find(plots, "memory")->svg, "&lt;b&gt;worker&lt;/b&gt;&amp;1"));
  EXPECT_TRUE(absl::StrContains(Find(plots, "memory")->svg, "Resident Memory (MiB)"));
  EXPECT_TRUE(absl::StrContains(Find(plots, "task-cpu-io")->svg, "Dijet&lt;Processor&gt;"));
  const ReportPlot& gantt = *Find(plots, "chunk-gantt");
  EXPECT_EQ(gantt.group, "Chunks over time");
  // The failed chunk is red in the Gantt chart; the datasets are its legend.
  EXPECT_TRUE(absl::StrContains(gantt.svg, "class=\"bar failed\""));
  EXPECT_TRUE(absl::StrContains(gantt.svg, "ValueError: &lt;bad&gt; &amp; worse"));
  EXPECT_TRUE(absl::StrContains(gantt.svg, "ttbar&lt;&amp;&gt;&quot;&#39;"));
  EXPECT_TRUE(absl::StrContains(gantt.note, "Idle between chunks"));
  // No chart mixes units on one "Value" axis.
  for (const ReportPlot& plot : plots) {
    EXPECT_FALSE(absl::StrContains(plot.svg, ">Value<")) << plot.id;
  }
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
  add_worker("w2", {1, 2, 2}, {1, 1, 0});               // leaves at 2 s
  tracking.mutable_workers(1)->set_active_tasks(1, 3);  // two tasks queued on w2
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  for (const char* id : {"worker-count", "executing-tasks", "active-tasks"}) {
    const ReportPlot* plot = Find(plots, id);
    ASSERT_NE(plot, nullptr) << id;
    EXPECT_TRUE(EverySegmentIsHorizontalOrVertical(LinePoints(plot->svg))) << id;
  }
  // w1: 0 up to 1 s, then 2 (the change at 1 s drawn vertically) held to 3 s.
  const std::vector<std::pair<double, double>> w1 = LinePoints(Find(plots, "executing-tasks")->svg);
  ASSERT_EQ(w1.size(), 4u);  // (0,0) (1,0) (1,2) (3,2): a repeated corner is drawn once
  EXPECT_EQ(w1[1].first, w1[2].first);
  EXPECT_LT(w1[2].second, w1[1].second);  // 2 is above 0 (SVG y grows downwards)
  // The worker count: 1 up to 1 s, 2 up to 2 s, 1 to 3 s, with the 0 before the first change.
  EXPECT_EQ(LinePoints(Find(plots, "worker-count")->svg).size(), 7u);
}

TEST(BuildReportPlotsTest, ManyWorkersGiveTheMeanAndRange) {
  ReportPlotOptions options;
  options.max_legend_entries = 5;
  const std::vector<ReportPlot> plots =
      BuildReportPlots(testing_export::RichMeasurement(/*workers=*/12), options);
  const ReportPlot* memory = Find(plots, "memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(absl::StrContains(memory->svg, "Min-Max Range"));
  EXPECT_TRUE(absl::StrContains(memory->note, "Mean and range across 12 workers"));
}

// A memory limit stored once for the series (schema/worker_series_columns.h) is the limit at
// every point; one that is not a finite number of bytes (a file edited by hand) is no limit, not
// "Memory limit N/A per worker, infx the peak".
TEST(BuildReportPlotsTest, AMemoryLimitStoredOnceCountsAndANonFiniteOneIsNoLimit) {
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  const auto with_limit = [](double limit) {
    v1::Measurement measurement;
    v1::WorkerSeries& w = *measurement.mutable_tracking()->add_workers();
    w.set_worker("w1");
    w.set_kind(v1::SERIES_KIND_STEP);
    for (int i = 0; i < 4; ++i) {
      w.add_time_unix_ns(kT0 + i * 1'000'000'000LL);
      w.add_memory_bytes((20 + 3 * i) * 1048576.0);
    }
    w.add_memory_limit_bytes(limit);
    return measurement;
  };
  const std::vector<ReportPlot> plots = BuildReportPlots(with_limit(25e9));
  const ReportPlot* memory = Find(plots, "memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(absl::StrContains(memory->note, "Memory limit 23.28 GiB per worker")) << memory->note;
  for (const double bad :
       {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), -4e9}) {
    const std::vector<ReportPlot> bad_plots = BuildReportPlots(with_limit(bad));
    const ReportPlot* bad_memory = Find(bad_plots, "memory");
    ASSERT_NE(bad_memory, nullptr) << bad;
    EXPECT_FALSE(absl::StrContains(bad_memory->note, "Memory limit")) << bad_memory->note;
    EXPECT_FALSE(absl::StrContains(bad_memory->svg, "Limit")) << bad;
    EXPECT_FALSE(absl::StrContains(bad_memory->svg, "inf")) << bad;
  }
}

TEST(BuildReportPlotsTest, ThreadsOfOneProcessAreDrawnOnceAndConstantDataIsASentence) {
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  v1::Measurement measurement;
  v1::TrackingData& tracking = *measurement.mutable_tracking();
  for (const char* name : {"host:1/thread-0", "host:1/thread-1"}) {
    v1::WorkerSeries& w = *tracking.add_workers();
    w.set_worker(name);
    for (int i = 0; i < 4; ++i) {
      w.add_time_unix_ns(kT0 + i * 1'000'000'000LL);
      w.add_memory_bytes((20 + i) * 1048576.0);  // the process's RSS, twice
      w.add_memory_limit_bytes(25e9);            // the host's RAM: far off the scale
      w.add_cpu_percent(50);                     // constant
    }
  }
  for (int i = 0; i < 3; ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_events(25000);
    chunk.set_duration_seconds(0.5 + i);
  }
  v1::Measurement two_sizes = measurement;
  two_sizes.mutable_chunks(2)->set_events(1200);  // a file's last chunk
  const std::vector<ReportPlot> two_size_plots = BuildReportPlots(two_sizes);
  const ReportPlot* sizes = Find(two_size_plots, "runtime-vs-events");
  ASSERT_NE(sizes, nullptr);
  EXPECT_TRUE(sizes->svg.empty());
  EXPECT_EQ(sizes->note,
            "Only 2 chunk sizes: 1 chunk of 1,200 events: median 2.50 s; 2 chunks of 25,000 "
            "events: median 1.00 s.");
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  const ReportPlot* memory = Find(plots, "memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(absl::StrContains(memory->svg, "2 workers, same series"));
  EXPECT_EQ(LinePoints(memory->svg).size(), 4u);
  EXPECT_TRUE(absl::StrContains(memory->note, "Memory limit 23.28 GiB per worker")) << memory->note;
  EXPECT_FALSE(absl::StrContains(memory->svg, "Limit"));
  // A limit on the plot's scale is drawn, dashed, with its value.
  v1::Measurement limited = measurement;
  for (v1::WorkerSeries& worker : *limited.mutable_tracking()->mutable_workers()) {
    for (int i = 0; i < worker.memory_limit_bytes_size(); ++i) {
      worker.set_memory_limit_bytes(i, 32 * 1048576.0);
    }
  }
  const std::vector<ReportPlot> limited_plots = BuildReportPlots(limited);
  const ReportPlot* limited_memory = Find(limited_plots, "memory");
  ASSERT_NE(limited_memory, nullptr);
  EXPECT_TRUE(absl::StrContains(limited_memory->svg, "data-series=\"Limit 32.00 MiB\""))
      << limited_memory->svg;
  EXPECT_TRUE(absl::StrContains(limited_memory->svg, "stroke-dasharray=\"6 4\""));
  EXPECT_TRUE(limited_memory->note.empty()) << limited_memory->note;
  const ReportPlot* cpu = Find(plots, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->svg.empty());
  EXPECT_EQ(cpu->note, "CPU utilization: 50 % for every worker at every sample (1 series).");
  const ReportPlot* events = Find(plots, "runtime-vs-events");
  ASSERT_NE(events, nullptr);
  EXPECT_TRUE(events->svg.empty());
  EXPECT_TRUE(absl::StrContains(events->note, "Every chunk has 25,000 events")) << events->note;
}

// Off-CPU time is not I/O: unsplit, it says so; split, waiting for a CPU and blocked are two
// segments of their own.
TEST(BuildReportPlotsTest, TaskTimeSaysWhatWasMeasured) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  const std::vector<ReportPlot> unsplit_plots = BuildReportPlots(measurement);
  const ReportPlot* unsplit = Find(unsplit_plots, "task-cpu-io");
  ASSERT_NE(unsplit, nullptr);
  EXPECT_EQ(unsplit->title, "CPU and Off-CPU Time per Task");
  EXPECT_TRUE(absl::StrContains(unsplit->svg, "Off CPU (not split)")) << unsplit->svg;
  EXPECT_FALSE(absl::StrContains(unsplit->svg, "I/O Time"));
  EXPECT_FALSE(absl::StrContains(unsplit->svg, "run queue"));

  v1::ActivityTotal& run_queue =
      *measurement.mutable_metrics()->mutable_fine()->add_by_task_prefix();
  run_queue.set_context("execute");
  run_queue.set_task_prefix("Dijet<Processor>");
  run_queue.set_activity("thread-run-queue-wait");
  run_queue.set_unit("seconds");
  run_queue.set_value(4.0);
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  const ReportPlot* split = Find(plots, "task-cpu-io");
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(absl::StrContains(split->svg, "Waiting for a CPU (run queue)")) << split->svg;
  EXPECT_TRUE(absl::StrContains(split->svg, "Blocked (I/O, locks, sleep)"));
  EXPECT_FALSE(absl::StrContains(split->svg, "not split"));
}

TEST(BuildReportPlotsTest, EmptyMeasurementHasNoPlot) {
  EXPECT_TRUE(BuildReportPlots(v1::Measurement()).empty());
}

TEST(BuildReportPlotsTest, ChunkInfoAloneGivesTheThroughput) {
  v1::Measurement measurement;
  v1::ChunkInfo& info = *measurement.mutable_metrics()->mutable_chunks()->add_chunk_info();
  info.set_start_unix_ns(1795335303LL * 1000000000LL);
  info.set_end_unix_ns(1795335305LL * 1000000000LL);
  info.set_bytes_read(250000000);  // 125 MB/s over 2 s
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  ASSERT_FALSE(plots.empty());
  EXPECT_EQ(plots[0].id, "throughput");
  EXPECT_TRUE(absl::StrContains(plots[0].svg, "Data Rate (MB/s, compressed bytes read)"));
  EXPECT_TRUE(absl::StrContains(plots[0].note, "in 10 time bins")) << plots[0].note;
}

TEST(BuildReportPlotsTest, ManyChunksStayBounded) {
  v1::Measurement measurement;
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  for (int i = 0; i < 20000; ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_worker("w");
    chunk.set_thread_index(i % 4);
    chunk.set_dataset(i % 2 ? "a" : "b");
    chunk.set_start_unix_ns(kT0 + (i / 4) * 10'000'000LL);
    chunk.set_end_unix_ns(kT0 + (i / 4) * 10'000'000LL + 9'000'000LL);
    chunk.set_duration_seconds(0.009 + 1e-6 * (i % 7));
    chunk.set_events(1000 + i % 13);
    chunk.set_compressed_bytes_read(1'000'000);
  }
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  size_t bytes = 0;
  for (const ReportPlot& plot : plots) bytes += plot.svg.size();
  EXPECT_LT(bytes, 1'500'000u);
  const ReportPlot* gantt = Find(plots, "chunk-gantt");
  ASSERT_NE(gantt, nullptr);
  EXPECT_TRUE(absl::StrContains(gantt->note, "20,000 chunks, drawn in")) << gantt->note;
  const ReportPlot* scatter = Find(plots, "runtime-vs-events");
  ASSERT_NE(scatter, nullptr);
  EXPECT_TRUE(absl::StrContains(scatter->note, "One chunk in 5 drawn (of 20,000)."))
      << scatter->note;
}

// Workers sampled microseconds apart give a point per worker and sample: the line across them
// is averaged in kMaxLinePoints time bins, and the note says so.
TEST(BuildReportPlotsTest, ALineAcrossManyWorkersIsAveragedInTimeBins) {
  v1::Measurement measurement;
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  constexpr int kWorkers = 30, kSamples = 200;
  for (int w = 0; w < kWorkers; ++w) {
    v1::WorkerSeries& worker = *measurement.mutable_tracking()->add_workers();
    worker.set_worker(absl::StrCat("w", w));
    for (int t = 0; t < kSamples; ++t) {
      worker.add_time_unix_ns(kT0 + t * 1'000'000'000LL + w * 1000);
      worker.add_memory_bytes(1e9 + 1e6 * ((t * 7 + w) % 50));
    }
  }
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  const ReportPlot* memory = Find(plots, "memory");
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(absl::StrContains(memory->note,
                                "Mean and range across 30 workers. Averaged in "
                                "2000 time bins (of 6,000 samples)."))
      << memory->note;
  // The mean's points: the bins with samples (at most kMaxLinePoints), then the closing one.
  const size_t points = LinePoints(memory->svg).size();
  EXPECT_GT(points, 100u);
  EXPECT_LE(points, kMaxLinePoints + 1);
}

// In a sum, each series counts in each bin with what it holds there, for the time it holds it
// (a SAMPLED one: each sample until the next): 30 workers holding 1 or 2 tasks throughout,
// sampled microseconds apart, sum to 45 in every bin (at the instants, a bin would average the
// values of single workers, or partial sums).
TEST(BuildReportPlotsTest, ManyWorkersSumToWhatTheyHoldInEveryBin) {
  for (const v1::SeriesKind kind : {v1::SERIES_KIND_STEP, v1::SERIES_KIND_SAMPLED}) {
    v1::Measurement measurement;
    constexpr int64_t kT0 = 1'765'000'000'000'000'000;
    constexpr int kWorkers = 30, kChanges = 200;
    for (int w = 0; w < kWorkers; ++w) {
      v1::WorkerSeries& worker = *measurement.mutable_tracking()->add_workers();
      worker.set_worker(absl::StrCat("w", w));
      worker.set_kind(kind);
      for (int t = 0; t < kChanges; ++t) {
        worker.add_time_unix_ns(kT0 + t * 1'000'000'000LL + w * 1000);
        worker.add_executing_tasks(1 + w % 2);
      }
    }
    const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
    const ReportPlot* executing = Find(plots, "executing-tasks");
    ASSERT_NE(executing, nullptr);
    EXPECT_TRUE(absl::StrContains(executing->note,
                                  "The sum over 30 workers. Averaged in 2000 "
                                  "time bins (of 6,000 samples)."))
        << executing->note;
    const std::vector<std::pair<double, double>> points = LinePoints(executing->svg);
    ASSERT_GT(points.size(), 100u);
    EXPECT_LE(points.size(), 2 * kMaxLinePoints + 2);  // a step line: two points per bin
    for (const auto& [x, y] : points) EXPECT_EQ(y, points.front().second) << kind << " " << x;
  }
}

// Thousands of worker threads would make a chart thousands of rows tall: above kMaxGanttRows,
// a row is a run of consecutive threads, and the note says so.
TEST(BuildReportPlotsTest, ManyWorkerThreadsShareGanttRows) {
  v1::Measurement measurement;
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  for (int i = 0; i < 8000; ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_worker(absl::StrCat("worker-", (i % 400) / 4));
    chunk.set_thread_index(i % 4);
    chunk.set_dataset("a");
    chunk.set_start_unix_ns(kT0 + (i / 400) * 10'000'000LL);
    chunk.set_end_unix_ns(kT0 + (i / 400) * 10'000'000LL + 9'000'000LL);
    chunk.set_duration_seconds(0.009);
  }
  const std::vector<ReportPlot> plots = BuildReportPlots(measurement);
  const ReportPlot* gantt = Find(plots, "chunk-gantt");
  ASSERT_NE(gantt, nullptr);
  EXPECT_TRUE(absl::StrContains(gantt->note,
                                "8,000 chunks, drawn in 300 time bins per worker thread (400 "
                                "worker threads, drawn 4 consecutive ones per row"))
      << gantt->note;
  // One lane background per row: 100 rows, not 400 (too low to be labelled, and said so).
  size_t rows = 0;
  for (size_t at = gantt->svg.find("class=\"lane\""); at != std::string::npos;
       at = gantt->svg.find("class=\"lane\"", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, kMaxGanttRows);
  EXPECT_TRUE(absl::StrContains(gantt->svg, "rows of 4 worker threads"));
}

// Workers are one series when their points are equal as numbers: 0.0 and -0.0 alike; a NaN
// equals nothing (found by fingerprints: export/report_worker_lines.h).
TEST(BuildReportPlotsTest, EqualSeriesAreEqualAsNumbers) {
  constexpr int64_t kT0 = 1'765'000'000'000'000'000;
  const auto run = [&](double second_value) {
    v1::Measurement m;
    for (const char* name : {"a", "b", "c"}) {
      v1::WorkerSeries& w = *m.mutable_tracking()->add_workers();
      w.set_worker(name);
      for (int i = 0; i < 4; ++i) {
        w.add_time_unix_ns(kT0 + i * 1'000'000'000LL);
        w.add_cpu_percent(i == 1 ? (name[0] == 'b' ? second_value : 0.0) : 10.0 * i + 1);
      }
    }
    const std::vector<ReportPlot> plots = BuildReportPlots(m);
    const ReportPlot* cpu = Find(plots, "cpu");
    return cpu == nullptr ? std::string() : cpu->svg;
  };
  EXPECT_TRUE(absl::StrContains(run(-0.0), "3 workers, same series"));
  const std::string with_nan = run(std::nan(""));
  EXPECT_TRUE(absl::StrContains(with_nan, "2 workers, same series")) << with_nan;
  EXPECT_TRUE(absl::StrContains(with_nan, "data-series=\"b\"")) << with_nan;
}

}  // namespace
}  // namespace roastcoffea
