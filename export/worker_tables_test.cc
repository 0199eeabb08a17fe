#include "export/worker_tables.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "export/flat_formats.h"
#include "export/html_report.h"
#include "export/tables.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
int64_t At(double seconds) { return kT0 + static_cast<int64_t>(seconds * 1e9); }

// A step series: (instant, executing) points on a 2-core worker, its last message at each.
void AddWorker(v1::TrackingData& tracking, const std::string& name,
               const std::vector<std::pair<double, int>>& points, double last_seen) {
  v1::WorkerSeries& w = *tracking.add_workers();
  w.set_worker(name);
  w.set_host("node7");
  w.set_kind(v1::SERIES_KIND_STEP);
  for (const auto& [t, executing] : points) {
    w.add_time_unix_ns(At(t));
    w.add_cores(2);
    w.add_executing_tasks(executing);
    if (last_seen >= 0) w.add_last_seen_unix_seconds(1e-9 * static_cast<double>(At(last_seen)));
  }
}

// w1 runs to the end (10 s); w2 left at 6 s with 2 tasks running, last heard from at 1.5 s
// (quiet 4.5 s >= 2 s: silent since 1.50 s); w3 left at 4 s with 1 running, heard from at 3.5 s
// (quiet 0.5 s: not silent); w4 left at 5 s with none running (not a dead worker).
v1::Measurement RunWithDeadWorkers() {
  v1::Measurement m;
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (double t : {0.0, 10.0}) {
    tracking.add_worker_count_time_unix_ns(At(t));
    tracking.add_worker_count(3);
    tracking.add_queued_chunks(t == 0 ? 4 : 0);
  }
  AddWorker(tracking, "w1", {{0, 2}, {10, 0}}, 10);
  AddWorker(tracking, "w2", {{0, 2}, {6, 2}}, 1.5);
  AddWorker(tracking, "w3", {{0, 1}, {4, 1}}, 3.5);
  AddWorker(tracking, "w4", {{0, 0}, {5, 0}}, 5);
  v1::ActivityTotal& lost = *m.mutable_metrics()->mutable_fine()->add_by_worker();
  lost.set_context("taskvine-worker");
  lost.set_worker("w2");
  lost.set_activity("lost-task-seconds");
  lost.set_value(12);
  return m;
}

TEST(WorkerTablesTest, SilentSinceForWorkersQuietBeforeTheyLeft) {
  const std::vector<SummaryTable> tables = BuildWorkerTables(RunWithDeadWorkers());
  ASSERT_EQ(tables.size(), 1u);
  const SummaryTable& t = tables[0];
  EXPECT_EQ(t.title, "Workers That Left");
  ASSERT_EQ(t.rows.size(), 2u);  // w4 ran nothing when it left
  // In order of leaving: w3 at 4 s, then w2 at 6 s.
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"w3", "node7", "4.00 s", "1", "no", "N/A"}));
  EXPECT_EQ(t.rows[1],
            (std::vector<std::string>{"w2", "node7", "6.00 s", "2", "1.50 s", "12.0 s"}));
}

TEST(WorkerTablesTest, NoLastMessageTimesSayNA) {
  v1::Measurement m = RunWithDeadWorkers();
  for (v1::WorkerSeries& w : *m.mutable_tracking()->mutable_workers()) {
    w.clear_last_seen_unix_seconds();
  }
  const std::vector<SummaryTable> tables = BuildWorkerTables(m);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].rows[1][4], "N/A (no last-message times)");
}

// The backend found w3 dead without the engine noticing: silent since its last record.
TEST(WorkerTablesTest, SilentDeathFromTheBackendsWarning) {
  v1::Measurement m = RunWithDeadWorkers();
  v1::Warning& w = *m.add_warnings();
  w.set_code("taskvine_worker_silent_death");
  w.set_message("worker w3 (127.0.0.1:9) has no DISCONNECTION record and nothing from it ...");
  const std::vector<SummaryTable> tables = BuildWorkerTables(m);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].rows[0][4], "4.00 s (never declared lost)");
  EXPECT_EQ(tables[0].rows[1][4], "1.50 s");
}

TEST(WorkerTablesTest, ShownInTheTerminalAndTheHtmlReport) {
  const v1::Measurement m = RunWithDeadWorkers();
  TableOptions options;
  options.width = 100;
  const std::string text = FormatSummaryTables(m, options);
  EXPECT_NE(text.find("Workers That Left"), std::string::npos);
  EXPECT_NE(text.find("Silent since"), std::string::npos);
  const std::string html = RenderHtmlReport(m);
  EXPECT_NE(html.find("id=\"workers\""), std::string::npos);
  EXPECT_NE(html.find("Silent since"), std::string::npos);
  // Nothing to show without dead workers.
  EXPECT_TRUE(BuildWorkerTables(v1::Measurement()).empty());
  EXPECT_EQ(RenderHtmlReport(v1::Measurement()).find("id=\"workers\""), std::string::npos);
}

TEST(WorkerTablesTest, FlatRowsPerWorkerThatLeft) {
  const v1::Measurement m = RunWithDeadWorkers();
  const std::string csv = FormatFlatMetrics(m, FlatFormat::kCsv);
  EXPECT_NE(csv.find("workers_left,2,workers\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("worker_left.w3.left_seconds,4,s\n"), std::string::npos);
  EXPECT_NE(csv.find("worker_left.w3.running_tasks,1,tasks\n"), std::string::npos);
  // w3 was heard from until it left: no silent row; its lost work was not measured: empty.
  EXPECT_EQ(csv.find("worker_left.w3.silent_since_seconds"), std::string::npos);
  EXPECT_NE(csv.find("worker_left.w3.lost_work_seconds,,s\n"), std::string::npos);
  EXPECT_NE(csv.find("worker_left.w2.silent_since_seconds,1.5,s\n"), std::string::npos);
  EXPECT_NE(csv.find("worker_left.w2.lost_work_seconds,12,s\n"), std::string::npos);
  EXPECT_EQ(csv.find("workers_left_not_listed"), std::string::npos);
  const std::string json = FormatFlatMetrics(m, FlatFormat::kJson);
  EXPECT_NE(json.find("\"worker_left.w2.lost_work_seconds\": {\"value\": 12"), std::string::npos)
      << json;
  const std::string markdown = FormatFlatMetrics(m, FlatFormat::kMarkdown);
  EXPECT_NE(markdown.find("#### Workers That Left"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| w2 | node7 |"), std::string::npos);
  // Nothing for a run without dead workers.
  EXPECT_TRUE(WorkerFlatMetrics(v1::Measurement()).empty());
}

TEST(WorkerTablesTest, FlatRowsAreCappedWithACountOfTheRest) {
  v1::Measurement m = RunWithDeadWorkers();
  for (size_t i = 0; i < kMaxWorkerRows + 3; ++i) {
    AddWorker(*m.mutable_tracking(), absl::StrCat("x", i), {{0, 1}, {7, 1}}, 7);
  }
  const std::vector<FlatMetric> rows = WorkerFlatMetrics(m);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().key, "workers_left");
  EXPECT_EQ(rows.front().value, static_cast<double>(kMaxWorkerRows + 5));
  EXPECT_EQ(rows.back().key, "workers_left_not_listed");
  EXPECT_EQ(rows.back().value, 5.0);
  size_t listed = 0;
  for (const FlatMetric& row : rows) {
    listed += row.key.size() > 13 && row.key.substr(row.key.size() - 13) == ".left_seconds";
  }
  EXPECT_EQ(listed, kMaxWorkerRows);
}

// A random engine run: a queue and up to 6 workers whose steps tie at instants, some without a
// slot or a task, some with last-message times; now and then a series the cut keeps whole
// (fractional cores, instants out of order, a last-message column not one per row).
v1::Measurement RandomRun(std::mt19937& rng) {
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  v1::Measurement m;
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (int t = 0, points = 1 + pick(4); points > 0; --points, t += 1 + pick(6)) {
    tracking.add_worker_count_time_unix_ns(At(t));
    tracking.add_worker_count(2);
    tracking.add_queued_chunks(pick(3));
  }
  for (int w = 0, workers = 1 + pick(6); w < workers; ++w) {
    v1::WorkerSeries& s = *tracking.add_workers();
    s.set_worker(absl::StrCat("w", w));
    s.set_kind(pick(10) == 0 ? v1::SERIES_KIND_SAMPLED : v1::SERIES_KIND_STEP);
    const bool last_seen = pick(10) < 7;
    for (int t = pick(10), rows = 1 + pick(12); rows > 0; --rows, t += pick(5) / 2 * pick(4)) {
      s.add_time_unix_ns(At(t));
      s.add_cores(pick(20) == 0 ? 0.5 : std::vector<double>{0, 0, 1, 2, 4}[pick(5)]);
      s.add_executing_tasks(std::max(0, pick(4) - 1));
      if (last_seen) s.add_last_seen_unix_seconds(1e-9 * static_cast<double>(At(pick(30))));
    }
    if (last_seen && pick(20) == 0) s.mutable_last_seen_unix_seconds()->RemoveLast();
    if (s.time_unix_ns_size() > 1 && pick(20) == 0) s.mutable_time_unix_ns()->SwapElements(0, 1);
  }
  return m;
}

// `collect show` reads each series cut to its ends, once: the departures table and its flat
// rows must be what the whole series give (when workers left, and from when they are counted).
TEST(WorkerTablesTest, SeriesCutToTheirEndsGiveTheSameTableAsWholeOnes) {
  std::mt19937 rng(2511);
  int tables_seen = 0, series_cut = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const v1::Measurement whole = RandomRun(rng);
    v1::Measurement cut = whole;
    for (v1::WorkerSeries& s : *cut.mutable_tracking()->mutable_workers()) {
      const int rows = s.time_unix_ns_size();
      CutWorkerSeriesToEnds(&s);
      series_cut += s.time_unix_ns_size() < rows;
    }
    const std::vector<SummaryTable> expected = BuildWorkerTables(whole);
    const std::vector<SummaryTable> got = BuildWorkerTables(cut);
    ASSERT_EQ(got.size(), expected.size()) << "trial " << trial;
    if (expected.empty()) continue;
    ++tables_seen;
    EXPECT_EQ(got[0].rows, expected[0].rows) << "trial " << trial;
    const std::vector<FlatMetric> want = WorkerFlatMetrics(whole);
    const std::vector<FlatMetric> have = WorkerFlatMetrics(cut);
    ASSERT_EQ(have.size(), want.size()) << "trial " << trial;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(have[i].key, want[i].key) << "trial " << trial;
      EXPECT_EQ(have[i].value, want[i].value) << "trial " << trial << " " << want[i].key;
    }
  }
  // The random runs do exercise the cut and the table.
  EXPECT_GT(tables_seen, 400);
  EXPECT_GT(series_cut, 2000);
}

}  // namespace
}  // namespace roastcoffea
