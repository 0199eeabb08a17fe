// The workers' step series of TaskVine / Work Queue runs without the "before" point at each
// change and with their cores and limits stored once (#25): on every log capture in testdata,
// the measurement built from them and the one built from the same series with a "before" point
// put back at each change and the cores and limits at every point (the form saved until then)
// are byte-identical in everything but the series (metrics, findings, warnings),
// and so are the printed tables (with the series whole and cut to their ends as `show` reads
// them) and the HTML report with its plots.
#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "aggregation/measure.h"
#include "export/html_report.h"
#include "export/tables.h"
#include "gtest/gtest.h"
#include "ingest/taskvine_run.h"
#include "schema/deterministic_bytes.h"
#include "schema/measurement.pb.h"
#include "schema/worker_series_columns.h"
#include "store/worker_series_ends.h"

namespace roastcoffea {
namespace {

const std::string kData = "backends/taskvine/testdata/";

struct Capture {
  std::string name;
  std::string transactions;  // under kData; .gz files are unpacked first
  std::string performance;   // "" when the run has none
  std::string chunk_category;
};

const std::vector<Capture>& Captures() {
  static const std::vector<Capture>* captures = new std::vector<Capture>{
      {"synthetic-1", "synthetic-1-transactions.txt", "synthetic-1-performance.txt", "processing"},
      {"synthetic-2", "synthetic-2-transactions.txt", "synthetic-2-performance.txt",
       "<function_process_chunk_at_0x7f3a2c1e5d30>"},
      {"real-runA", "real/runA/transactions", "real/runA/performance", "processing"},
      {"real-runB", "real/runB/transactions", "real/runB/performance", "processing"},
      {"real-runB-hung", "real/runB-hung/transactions", "real/runB-hung/performance", "processing"},
      {"real-runC-monitored", "real/runC-monitored/transactions", "real/runC-monitored/performance",
       "processing"},
      {"lnni-2025-03", "lnni-2025-03-transactions.gz", "lnni-2025-03-performance.gz",
       "parsl-default"},
      {"colmena-wq-2023-02", "colmena-wq-2023-02-transactions.gz", "",
       "compute_atomization_energy"},
  };
  return *captures;
}

// The path to read `file` from: itself, or for a .gz file its unpacked copy in the test's
// temporary directory.
std::string Readable(const Capture& capture, const std::string& file) {
  const std::string path = kData + file;
  if (file.size() < 3 || file.substr(file.size() - 3) != ".gz") return path;
  const std::string out =
      absl::StrCat(::testing::TempDir(), "/", capture.name, "-",
                   file.find("performance") != std::string::npos ? "performance" : "transactions");
  gzFile in = gzopen(path.c_str(), "rb");
  EXPECT_NE(in, nullptr) << path;
  FILE* unpacked = fopen(out.c_str(), "wb");
  EXPECT_NE(unpacked, nullptr) << out;
  if (in == nullptr || unpacked == nullptr) return path;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof(buffer))) > 0) {
    fwrite(buffer, 1, static_cast<size_t>(n), unpacked);
  }
  gzclose(in);
  fclose(unpacked);
  return out;
}

// `series` as saved before #25: at each change after the first, a point at its instant
// repeating the state before it (with that instant's last_seen), then the change; the last
// point (the end) had none. Cores and limits at every point (they are now stored once).
v1::WorkerSeries WithBeforePoints(const v1::WorkerSeries& series) {
  v1::WorkerSeries old = series;
  const int n = series.time_unix_ns_size();
  for (auto* column : {old.mutable_executing_tasks(), old.mutable_active_tasks(),
                       old.mutable_cores(), old.mutable_memory_limit_bytes(),
                       old.mutable_disk_limit_bytes(), old.mutable_last_seen_unix_seconds()}) {
    column->Clear();
  }
  old.clear_time_unix_ns();
  for (int i = 0; i < n; ++i) {
    const bool before = i > 0 && i + 1 < n;
    for (int k = before ? i - 1 : i; k <= i; ++k) {
      old.add_time_unix_ns(series.time_unix_ns(i));
      old.add_executing_tasks(series.executing_tasks(k));
      old.add_active_tasks(series.active_tasks(k));
      old.add_cores(ValueAt(series.cores(), k));
      old.add_memory_limit_bytes(ValueAt(series.memory_limit_bytes(), k));
      old.add_disk_limit_bytes(ValueAt(series.disk_limit_bytes(), k));
      old.add_last_seen_unix_seconds(series.last_seen_unix_seconds(i));
    }
  }
  return old;
}

absl::StatusOr<RawRun> Read(const Capture& capture) {
  TaskVineRunOptions options;
  options.logs = Readable(capture, capture.transactions);
  if (!capture.performance.empty()) {
    absl::StrAppend(&options.logs, ",", Readable(capture, capture.performance));
  }
  options.chunk_category = capture.chunk_category;
  return ReadFinishedTaskVineRun(options);
}

// "" when equal, else the first line that differs in each.
std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const size_t line = a.rfind('\n', at) == std::string::npos ? 0 : a.rfind('\n', at) + 1;
  const auto line_of = [&](const std::string& s) {
    const size_t end = s.find('\n', at);
    return s.substr(line,
                    std::min<size_t>(400, (end == std::string::npos ? s.size() : end) - line));
  };
  return absl::StrCat("at byte ", at, ":\n", line_of(a), "\nagainst\n", line_of(b));
}

std::string Tables(const v1::Measurement& m) {
  TableOptions options;
  options.unicode = false;
  options.width = -1;
  return FormatSummaryTables(m, options);
}

TEST(TaskVineStepPoints, BeforePointsChangeNoFigureTableOrPlot) {
  for (const Capture& capture : Captures()) {
    SCOPED_TRACE(capture.name);
    absl::StatusOr<RawRun> run = Read(capture);
    absl::StatusOr<RawRun> old_run = Read(capture);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_TRUE(old_run.ok()) << old_run.status();
    ASSERT_TRUE(run->tracking.has_value());
    int64_t points = 0, old_points = 0;
    for (v1::WorkerSeries& series : *old_run->tracking->mutable_workers()) {
      points += series.time_unix_ns_size();
      // The new form: cores and limits stored once.
      EXPECT_EQ(series.cores_size(), 1);
      EXPECT_EQ(series.memory_limit_bytes_size(), 1);
      EXPECT_EQ(series.disk_limit_bytes_size(), 1);
      series = WithBeforePoints(series);
      old_points += series.time_unix_ns_size();
    }
    // Not vacuous: the old form had points more.
    ASSERT_GT(old_points, points + 10);

    absl::StatusOr<v1::Measurement> measured = Measure(*std::move(run), {});
    absl::StatusOr<v1::Measurement> old_measured = Measure(*std::move(old_run), {});
    ASSERT_TRUE(measured.ok()) << measured.status();
    ASSERT_TRUE(old_measured.ok()) << old_measured.status();
    ASSERT_GT(measured->metrics().rule_evaluations_size(), 0);

    // The tables, the report (plots of the series drawn as steps) and the tables of the series
    // cut to their ends as `show` reads them.
    const std::string tables = Tables(*measured);
    EXPECT_EQ(FirstDifference(tables, Tables(*old_measured)), "");
    EXPECT_EQ(FirstDifference(FormatFindings(*measured, {}), FormatFindings(*old_measured, {})),
              "");
    EXPECT_EQ(FirstDifference(RenderHtmlReport(*measured), RenderHtmlReport(*old_measured)), "");
    v1::Measurement cut = *measured, old_cut = *old_measured;
    for (auto* m : {&cut, &old_cut}) {
      for (v1::WorkerSeries& series : *m->mutable_tracking()->mutable_workers()) {
        CutWorkerSeriesToEnds(&series);
      }
    }
    EXPECT_EQ(FirstDifference(Tables(cut), tables), "");
    EXPECT_EQ(FirstDifference(Tables(old_cut), tables), "");

    // Everything else, byte for byte.
    measured->clear_tracking();
    old_measured->clear_tracking();
    EXPECT_EQ(DeterministicBytes(*measured), DeterministicBytes(*old_measured));
  }
}

}  // namespace
}  // namespace roastcoffea
