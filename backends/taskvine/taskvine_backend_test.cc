#include "backends/taskvine/taskvine_backend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/contributed_testing.h"
#include "backends/taskvine/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"
#include "schema/raw_run.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const char kData[] = "backends/taskvine/testdata/";

std::string TempDir(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  mkdir(path.c_str(), 0755);
  return path;
}

std::string Read(const std::string& path) {
  std::string contents;
  EXPECT_TRUE(taskvine::ReadWholeFile(path, &contents).ok()) << path;
  return contents;
}

void Write(const std::string& path, const std::string& text, const char* mode = "wb") {
  FILE* f = fopen(path.c_str(), mode);
  ASSERT_NE(f, nullptr) << path;
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

// A TaskVine run directory: <dir>/vine-logs/{transactions,performance}.
std::string MakeRunDir(const std::string& name, const std::string& fixture) {
  const std::string run = TempDir(name);
  const std::string logs = run + "/vine-logs";
  mkdir(logs.c_str(), 0755);
  Write(logs + "/transactions", Read(std::string(kData) + fixture + "-transactions.txt"));
  Write(logs + "/performance", Read(std::string(kData) + fixture + "-performance.txt"));
  return run;
}

double Metric(const v1::Span& span, const std::string& context, const std::string& prefix,
              const std::string& activity, const std::string& worker = "") {
  for (const v1::FineMetric& m : span.metrics()) {
    if (m.context() == context && m.task_prefix() == prefix && m.activity() == activity &&
        m.worker() == worker) {
      return m.value();
    }
  }
  ADD_FAILURE() << "no metric " << context << "/" << prefix << "/" << activity << "/" << worker;
  return -1;
}

// MANAGER START and END of testdata/synthetic-1-transactions.txt.
constexpr int64_t kSyntheticOneStartUs = 1763035200000000;
constexpr int64_t kSyntheticOneEndUs = 1763035260980194;

TEST(TaskVineBackend, FinishedRunFromItsRunDirectory) {
  TaskVineBackendOptions options;
  options.logs = MakeRunDir("finished", "synthetic-1");
  TaskVineMetricsBackend backend(options);
  EXPECT_EQ(backend.name(), "taskvine");
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  absl::StatusOr<SpanId> span_id = backend.CreateSpan("run");
  ASSERT_TRUE(span_id.ok());
  ASSERT_TRUE(backend.EndSpan(*span_id).ok());
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  EXPECT_EQ(tracking->backend(), "taskvine");
  EXPECT_EQ(tracking->interval_seconds(), 1);
  EXPECT_EQ(tracking->workers_size(), 3);
  EXPECT_EQ(tracking->manager().time_unix_ns_size(), 30);
  int peak = 0;
  for (int count : tracking->worker_count()) peak = std::max(peak, count);
  EXPECT_EQ(peak, 2);

  // A finished run: nothing to wait for, framed by its own MANAGER START .. END.
  EXPECT_TRUE(backend.ReadsFinishedRun());
  const std::optional<TaskVineMetricsBackend::RecordedWindow> window = backend.RecordedRunWindow();
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(absl::ToUnixMicros(window->start), kSyntheticOneStartUs);
  EXPECT_EQ(absl::ToUnixMicros(window->end), kSyntheticOneEndUs);

  absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*span_id);
  ASSERT_TRUE(span.ok()) << span.status();
  // A span over finished logs covers the whole run.
  EXPECT_EQ(span->start_unix_ns(), 1763035200000000LL * 1000);
  // Raw sums only: the study's core efficiency (0.4618) is this over the workers' lifetime
  // core-seconds, computed by //aggregation; no run-level figure of the backend's own.
  const taskvine::RunFigures figures = backend.ModelSnapshot().Figures();
  EXPECT_NEAR(
      Metric(*span, "taskvine-run", "", "execute-core-seconds") / figures.core_seconds_available,
      0.4618, 5e-5);
  std::vector<std::string> run_activities;
  for (const v1::FineMetric& metric : span->metrics()) {
    if (metric.context() == "taskvine-run") run_activities.push_back(metric.activity());
  }
  EXPECT_THAT(run_activities, UnorderedElementsAre("execute-core-seconds", "lost-task-seconds",
                                                   "function-slot-seconds", "idle-workers"));
  EXPECT_EQ(Metric(*span, "taskvine-run", "", "idle-workers"), 0);
  EXPECT_NEAR(Metric(*span, "taskvine-run", "", "lost-task-seconds"), 34.057060, 1e-5);
  EXPECT_NEAR(Metric(*span, "taskvine", "processing", "execute"), 176.908 + 4.755, 1e-5);
  EXPECT_EQ(Metric(*span, "taskvine", "processing", "attempts"), 19);
  EXPECT_EQ(Metric(*span, "taskvine", "processing", "lost-attempts"), 4);
  const std::string w1 = "worker-7c2e9f04b1a35d68e0f4c9b27a1d3e55";
  EXPECT_NEAR(Metric(*span, "taskvine-worker", "", "busy", w1), 50.238732, 1e-5);
  EXPECT_NEAR(Metric(*span, "taskvine-worker", "", "utilisation", w1), 0.6862, 5e-5);
  EXPECT_GT(Metric(*span, "taskvine", "processing", "transfer-to-execute"), 0);

  const RawRun run = ContributedRun(backend);
  EXPECT_EQ(run.engine_chunks.size(), 15u);
  EXPECT_THAT(run.warnings, IsEmpty());
  EXPECT_THAT(ContributedRun(backend).engine_chunks, IsEmpty());  // taken once
  // Handed over: the tasks and steps are freed (#25), span figures are refused, not wrong.
  EXPECT_EQ(backend.ModelSnapshot().tasks().size(), 0u);
  EXPECT_EQ(backend.GetSpanMetrics(*span_id).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// A finished run's logs are read whole however many polls that takes (each poll reads at most
// max_bytes_per_poll: 64 MiB by default, ~100,000 tasks; a 10^6-task log was cut at its third
// poll, without a warning).
TEST(TaskVineBackend, FinishedRunLargerThanOnePollIsReadWhole) {
  TaskVineBackendOptions options;
  options.logs = MakeRunDir("finished-many-polls", "synthetic-1");
  options.max_bytes_per_poll = 1000;  // the transactions log is 36 KB
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  absl::StatusOr<SpanId> span_id = backend.CreateSpan("run");
  ASSERT_TRUE(span_id.ok());
  ASSERT_TRUE(backend.EndSpan(*span_id).ok());
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  EXPECT_EQ(tracking->manager().time_unix_ns_size(), 30);
  const std::optional<TaskVineMetricsBackend::RecordedWindow> window = backend.RecordedRunWindow();
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(absl::ToUnixMicros(window->end), kSyntheticOneEndUs);
  const RawRun run = ContributedRun(backend);
  EXPECT_EQ(run.engine_chunks.size(), 15u);
  EXPECT_THAT(run.warnings, IsEmpty());
}

// The span of a finished run in `dir` (and its tracking data).
v1::Span FinishedRunSpan(const std::string& dir, v1::TrackingData* tracking) {
  TaskVineBackendOptions options;
  options.logs = dir;
  TaskVineMetricsBackend backend(options);
  EXPECT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  absl::StatusOr<SpanId> id = backend.CreateSpan("run");
  EXPECT_TRUE(id.ok());
  EXPECT_TRUE(backend.EndSpan(*id).ok());
  absl::StatusOr<v1::TrackingData> stopped = backend.StopTracking();
  EXPECT_TRUE(stopped.ok()) << stopped.status();
  if (stopped.ok()) *tracking = *std::move(stopped);
  absl::StatusOr<v1::Span> span = backend.GetSpanMetrics(*id);
  EXPECT_TRUE(span.ok()) << span.status();
  return span.ok() ? *std::move(span) : v1::Span();
}

// Workers that connect and never run anything (a pilot job's spare slots, a flood of
// connections) get no per-worker rows: the span is the one of the run without them but for its
// idle-workers count, while the tracking series (worker count, cores) still hold them.
TEST(TaskVineBackend, IdleWorkersGetNoPerWorkerRows) {
  const std::string plain_dir = MakeRunDir("plain", "synthetic-1");
  const std::string idle_dir = MakeRunDir("with-idle", "synthetic-1");
  const std::string txn = Read(std::string(kData) + "synthetic-1-transactions.txt");
  const std::string start_line = "1763035200000000 48213 MANAGER 48213 START 0\n";
  const size_t after_start = txn.find(start_line) + start_line.size();
  ASSERT_NE(txn.find(start_line), std::string::npos);
  constexpr int kIdle = 40;
  std::string idle;
  for (int k = 0; k < kIdle; ++k) {
    const int64_t t = kSyntheticOneStartUs + 100 + 10 * k;
    absl::StrAppend(&idle, t, " 48213 WORKER idle-", k, " CONNECTION 10.9.0.", k, ":9000\n");
    if (k % 2 == 0) {
      absl::StrAppend(&idle, t + 1, " 48213 WORKER idle-", k,
                      " RESOURCES {\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],"
                      "\"cores\":[4,\"cores\"]}\n");
    }
  }
  for (int k = 0; k < kIdle; k += 4) {
    absl::StrAppend(&idle, kSyntheticOneStartUs + 4000 + k, " 48213 WORKER idle-", k,
                    " DISCONNECTION EXPLICIT\n");
  }
  Write(idle_dir + "/vine-logs/transactions",
        txn.substr(0, after_start) + idle + txn.substr(after_start));

  v1::TrackingData plain_tracking, idle_tracking;
  const v1::Span plain = FinishedRunSpan(plain_dir, &plain_tracking);
  const v1::Span with_idle = FinishedRunSpan(idle_dir, &idle_tracking);
  // The idle workers are in the tracking data: the worker count and their series.
  EXPECT_EQ(plain_tracking.workers_size(), 3);
  EXPECT_EQ(idle_tracking.workers_size(), 3 + kIdle);
  int peak_plain = 0, peak_idle = 0;
  for (int count : plain_tracking.worker_count()) peak_plain = std::max(peak_plain, count);
  for (int count : idle_tracking.worker_count()) peak_idle = std::max(peak_idle, count);
  EXPECT_EQ(peak_plain, 2);
  // All connected at once before the others came; 10 left, 30 stayed with the run's 2.
  EXPECT_EQ(peak_idle, std::max(kIdle, kIdle - kIdle / 4 + peak_plain));
  // The 30 without a DISCONNECTION are still connected at the END (not silent for long).
  EXPECT_EQ(idle_tracking.worker_count(idle_tracking.worker_count_size() - 1), kIdle - kIdle / 4);
  // No per-worker row of theirs; every other row as without them.
  EXPECT_EQ(Metric(plain, "taskvine-run", "", "idle-workers"), 0);
  EXPECT_EQ(Metric(with_idle, "taskvine-run", "", "idle-workers"), kIdle);
  v1::Span expected = plain;
  for (v1::FineMetric& m : *expected.mutable_metrics()) {
    if (m.activity() == "idle-workers") m.set_value(kIdle);
  }
  EXPECT_EQ(with_idle.SerializeAsString(), expected.SerializeAsString());
  std::set<std::string> workers_with_rows;
  for (const v1::FineMetric& m : with_idle.metrics()) {
    if (!m.worker().empty()) workers_with_rows.insert(m.worker());
  }
  EXPECT_THAT(workers_with_rows, UnorderedElementsAre("worker-7c2e9f04b1a35d68e0f4c9b27a1d3e55",
                                                      "worker-d41f0a8c6e2b97315fa0c4e8b2d6a913",
                                                      "worker-0b9e5d27c3f8a1164e2d7b5c9f0a38e1"));
}

TEST(TaskVineBackend, ChunkCategoryIsAnOption) {
  TaskVineBackendOptions options;
  options.logs = MakeRunDir("category", "synthetic-2");
  options.chunk_category = "<function_process_chunk_at_0x7f3a2c1e5d30>";
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  ASSERT_TRUE(backend.StopTracking().ok());
  EXPECT_EQ(ContributedRun(backend).engine_chunks.size(), 17u);

  options.chunk_category = "processing";  // not in a DaskVine log
  TaskVineMetricsBackend wrong(options);
  ASSERT_TRUE(wrong.StartTracking(absl::Seconds(1)).ok());
  ASSERT_TRUE(wrong.StopTracking().ok());
  const RawRun wrong_run = ContributedRun(wrong);
  EXPECT_THAT(wrong_run.engine_chunks, IsEmpty());
  int category_warnings = 0;
  for (const v1::Warning& w : wrong_run.warnings) {
    if (w.code() != "taskvine_no_chunk_category") continue;
    ++category_warnings;
    EXPECT_THAT(w.message(), HasSubstr("<function_process_chunk_at_0x7f3a2c1e5d30>"));
  }
  EXPECT_EQ(category_warnings, 1);
}

// Contribute hands the run what the logs say beyond tracking and spans: the chunk records
// (once), the coded warnings after those already there, and the run's own START .. END, which
// frames a finished run without this machine's host facts.
TEST(TaskVineBackend, ContributeAddsChunksWarningsAndTheRecordedWindow) {
  TaskVineBackendOptions options;
  options.logs = MakeRunDir("contribute", "synthetic-1");
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Seconds(1)).ok());
  ASSERT_TRUE(backend.StopTracking().ok());
  RawRun run;
  run.window.start = absl::FromUnixSeconds(1);
  run.window.end = absl::FromUnixSeconds(2);
  run.window.host_facts = v1::HostFacts();
  backend.Contribute(run);
  EXPECT_EQ(run.engine_chunks.size(), 15u);
  EXPECT_EQ(absl::ToUnixMicros(run.window.start), kSyntheticOneStartUs);
  EXPECT_EQ(absl::ToUnixMicros(run.window.end), kSyntheticOneEndUs);
  EXPECT_DOUBLE_EQ(run.window.elapsed_seconds, (kSyntheticOneEndUs - kSyntheticOneStartUs) / 1e6);
  EXPECT_FALSE(run.window.host_facts.has_value());
  EXPECT_TRUE(run.engine_version.empty()) << "the logs carry no version";
  RawRun again;
  backend.Contribute(again);
  EXPECT_THAT(again.engine_chunks, IsEmpty()) << "taken once";

  options.logs = MakeRunDir("contribute-wrong-category", "synthetic-1");
  options.chunk_category = "not-a-category";
  TaskVineMetricsBackend wrong(options);
  ASSERT_TRUE(wrong.StartTracking(absl::Seconds(1)).ok());
  ASSERT_TRUE(wrong.StopTracking().ok());
  RawRun warned;
  warned.warnings.emplace_back().set_code("earlier");
  wrong.Contribute(warned);
  ASSERT_GE(warned.warnings.size(), 2u);
  EXPECT_EQ(warned.warnings[0].code(), "earlier");
  EXPECT_EQ(warned.warnings[1].code(), "taskvine_no_chunk_category");
  EXPECT_THAT(warned.warnings[1].message(), HasSubstr("not-a-category"));
}

TEST(TaskVineBackend, Errors) {
  TaskVineBackendOptions options;
  options.logs = TempDir("empty-dir");
  TaskVineMetricsBackend backend(options);
  EXPECT_EQ(backend.StartTracking(absl::ZeroDuration()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.StopTracking().status().code(), absl::StatusCode::kFailedPrecondition);
  const absl::Status missing = backend.StartTracking(absl::Seconds(1));
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("empty-dir"));
  EXPECT_EQ(backend.CreateSpan("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.EndSpan("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(backend.GetSpanMetrics("nope").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<SpanId> id = backend.CreateSpan("s");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(backend.GetSpanMetrics(*id).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(backend.EndSpan(*id).ok());
  EXPECT_EQ(backend.EndSpan(*id).code(), absl::StatusCode::kFailedPrecondition);

  options.logs = MakeRunDir("twice", "synthetic-1");
  TaskVineMetricsBackend twice(options);
  ASSERT_TRUE(twice.StartTracking(absl::Seconds(1)).ok());
  EXPECT_EQ(twice.StartTracking(absl::Seconds(1)).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(twice.StopTracking().ok());
}

TEST(TaskVineBackend, FollowedLogsThatNeverAppear) {
  FakeClock clock;
  TaskVineBackendOptions options;
  options.logs = TempDir("never") + "/vine-logs";
  options.follow = true;
  options.clock = &clock;
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(5)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(5), 4));  // four polls find nothing
  EXPECT_EQ(backend.StopTracking().status().code(), absl::StatusCode::kNotFound);
}

// Writes the synthetic-1 logs in pieces (lines split across writes) while the backend follows
// them; the result must equal the parse of the whole files.
TEST(TaskVineBackend, FollowsLogsWhileTheyAreWritten) {
  const std::string run = TempDir("live");
  const std::string logs = run + "/vine-logs";
  mkdir(logs.c_str(), 0755);
  const std::string txn = Read(std::string(kData) + "synthetic-1-transactions.txt");
  const std::string perf = Read(std::string(kData) + "synthetic-1-performance.txt");

  FakeClock clock(absl::Now());
  TaskVineBackendOptions options;
  options.logs = run;
  options.follow = true;
  options.clock = &clock;
  TaskVineMetricsBackend backend(options);
  EXPECT_FALSE(backend.ReadsFinishedRun()) << "a followed run is live: collect frames it";
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(2)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(2), 2));  // the logs do not exist yet

  // Pieces of 997 bytes: almost every piece ends inside a line.
  Write(logs + "/performance", perf.substr(0, perf.size() / 2));
  size_t split_lines = 0;
  for (size_t offset = 0; offset < txn.size(); offset += 997) {
    const std::string piece = txn.substr(offset, 997);
    if (piece.back() != '\n') ++split_lines;
    Write(logs + "/transactions", piece, "ab");
    ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(2)));  // one poll per piece
    if (offset == 997 * 10) {
      // Mid-run: the model already holds the first records, and only whole lines.
      const taskvine::RunModel partial = backend.ModelSnapshot();
      EXPECT_GT(partial.transaction_records(), 0);
      EXPECT_EQ(partial.malformed_count(), 0);
    }
  }
  EXPECT_GT(split_lines, 30u);
  Write(logs + "/performance", perf.substr(perf.size() / 2), "ab");
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();

  taskvine::RunModel whole;
  ASSERT_TRUE(
      taskvine::FeedFile(std::string(kData) + "synthetic-1-transactions.txt", false, &whole).ok());
  ASSERT_TRUE(
      taskvine::FeedFile(std::string(kData) + "synthetic-1-performance.txt", true, &whole).ok());
  const taskvine::RunModel followed = backend.ModelSnapshot();
  EXPECT_EQ(followed.malformed_count(), 0);
  EXPECT_EQ(followed.transaction_records(), whole.transaction_records());
  EXPECT_EQ(followed.performance().size(), whole.performance().size());
  EXPECT_EQ(followed.Figures().execute_seconds, whole.Figures().execute_seconds);
  EXPECT_EQ(followed.Figures().bytes_in, whole.Figures().bytes_in);
  v1::TrackingData expected = whole.Tracking();
  expected.set_interval_seconds(0.002);
  EXPECT_EQ(tracking->SerializeAsString(), expected.SerializeAsString());
  const RawRun contributed = ContributedRun(backend);
  EXPECT_EQ(contributed.engine_chunks.size(), 15u);
  EXPECT_THAT(contributed.warnings, IsEmpty());
}

TEST(TaskVineBackend, RunStoppedWhileALineIsHalfWritten) {
  const std::string run = TempDir("half");
  const std::string logs = run + "/vine-logs";
  mkdir(logs.c_str(), 0755);
  Write(logs + "/transactions",
        "1000000 7 MANAGER 7 START 0\n"
        "1500000 7 TASK 1 READY processing FIRST_RESOURCES 1 {}\n"
        "2000000 7 WORKER worker-a CONNECTION 127.0.0.1:9000\n"
        "2000001 7 WORKER worker-a RESOURCES "
        "{\"memory\":[1000,\"MB\"],\"disk\":[1000,\"MB\"],\"cores\":[2,\"cores\"]}\n"
        "2500000 7 TASK 1 RUNNING worker-a  FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n"
        "3000000 7 TASK 1 WAITING_RETR");
  FakeClock clock;
  TaskVineBackendOptions options;
  options.logs = run;
  options.follow = true;
  options.clock = &clock;
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(2)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(2), 2));
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_TRUE(tracking.ok()) << tracking.status();
  const taskvine::RunModel model = backend.ModelSnapshot();
  EXPECT_EQ(model.malformed_count(), 0);
  EXPECT_EQ(model.partial_last_lines(), 1);
  // The task is still executing at the end of the observed run (2.5 s .. last record at 2.5 s).
  ASSERT_EQ(tracking->workers_size(), 1);
  EXPECT_EQ(tracking->workers(0).executing_tasks(tracking->workers(0).executing_tasks_size() - 1),
            1);
  RawRun contributed = ContributedRun(backend);
  const std::vector<std::string> warnings = WarningSentences(std::move(contributed.warnings));
  EXPECT_THAT(warnings, testing::Contains(HasSubstr("partial line (line 6")));
  EXPECT_THAT(warnings, testing::Contains(HasSubstr("no MANAGER END")));
  EXPECT_THAT(warnings,
              testing::Contains(HasSubstr("1 task of category 'processing' had not finished")));
  EXPECT_THAT(contributed.engine_chunks, IsEmpty());
}

}  // namespace
}  // namespace roastcoffea
