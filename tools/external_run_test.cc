#include "tools/external_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

// A backend that reports two workers with 4 threads each, sampled at start and stop, and
// optionally a gap, a warning and chunk records of its own.
class FakeBackend : public AbstractMetricsBackend {
 public:
  absl::string_view name() const override { return "fake"; }
  absl::Status StartTracking(absl::Duration interval) override {
    if (interval <= absl::ZeroDuration()) return absl::InvalidArgumentError("interval");
    started_ = absl::Now();
    ++starts;
    return absl::OkStatus();
  }
  absl::StatusOr<v1::TrackingData> StopTracking() override {
    v1::TrackingData data;
    data.set_backend("fake");
    for (absl::Time t : {started_, absl::Now()}) {
      data.add_worker_count_time_unix_ns(absl::ToUnixNanos(t));
      data.add_worker_count(2);
    }
    for (const char* name : {"tcp://127.0.0.1:1", "tcp://127.0.0.1:2"}) {
      v1::WorkerSeries* worker = data.add_workers();
      worker->set_worker(name);
      for (int64_t t : data.worker_count_time_unix_ns()) {
        worker->add_time_unix_ns(t);
        worker->add_cores(4);
        worker->add_memory_bytes(1e9);
      }
    }
    if (with_gap) {
      v1::TrackingGap* gap = data.add_gaps();
      gap->set_reason("scheduler unreachable");
    }
    ++stops;
    return data;
  }
  absl::StatusOr<SpanId> CreateSpan(absl::string_view span) override { return std::string(span); }
  absl::Status EndSpan(const SpanId&) override { return absl::OkStatus(); }
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) override {
    v1::Span span;
    span.set_name(id);
    v1::FineMetric* metric = span.add_metrics();
    metric->set_context("execute");
    metric->set_task_prefix("MyProcessor");
    metric->set_activity("thread-cpu");
    metric->set_unit("seconds");
    metric->set_value(3);
    return span;
  }
  void Contribute(RawRun& run) override {
    for (const v1::ChunkRecord& chunk : own_chunks) run.engine_chunks.Append(chunk);
    for (const std::string& message : warnings) {
      run.warnings.emplace_back().set_message(message);
      run.warnings.back().set_code("fake_warning");
    }
  }

  int starts = 0;
  int stops = 0;
  bool with_gap = false;
  std::vector<v1::ChunkRecord> own_chunks;
  std::vector<std::string> warnings;

 private:
  absl::Time started_;
};

// The messages of the warnings the run added (the backend's and ours), in order: not the
// host's (this machine's load, the build), which come first.
std::vector<std::string> RunWarnings(const v1::Measurement& m) {
  std::vector<std::string> messages;
  for (const v1::Warning& w : m.warnings()) {
    if (w.code() == "external_run" || w.code() == "fake_warning" || w.code() == "collector") {
      messages.push_back(w.message());
    }
  }
  return messages;
}

ExternalRunOptions Command(const std::string& script) {
  ExternalRunOptions options;
  options.command = {"/bin/sh", "-c", script};
  options.session.interval = absl::Milliseconds(50);
  options.session.processor_patterns = {"MyProcessor"};
  options.session.handle_signals = true;  // as collect: the tests below send signals
  return options;
}

// The reliability study's D19: a run killed with SIGKILL left its scratch directory forever.
TEST(SweepStaleScratchDirectoriesTest, RemovesOnlyDeadRunsDirectoriesHoldingOnlyTheirFiles) {
  const std::string root = ::testing::TempDir() + "/sweep";
  std::filesystem::create_directories(root);
  const auto make = [&](const std::string& name, std::vector<std::string> files) {
    std::filesystem::create_directories(root + "/" + name);
    for (const std::string& file : files) std::ofstream(root + "/" + name + "/" + file) << "[]";
    return root + "/" + name;
  };
  // pid_max is at most 2^22: this run is gone.
  const std::string dead = make("roastcoffea-run-99999999-abcdef", {"report.json"});
  const std::string dead_empty = make("roastcoffea-run-99999998-abcdef", {});
  const std::string alive =
      make(absl::StrCat("roastcoffea-run-", getpid(), "-abcdef"), {"chunk_records.json"});
  const std::string foreign = make("roastcoffea-run-99999997-abcdef", {"report.json", "notes"});
  const std::string fresh_legacy = make("roastcoffea-a1b2c3", {"report.json"});
  const std::string unrelated = make("other-99999999", {});
  SweepStaleScratchDirectories(root);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(dead_empty));
  EXPECT_TRUE(std::filesystem::exists(alive)) << "its run is still going";
  EXPECT_TRUE(std::filesystem::exists(foreign)) << "holds a file we did not make";
  EXPECT_TRUE(std::filesystem::exists(fresh_legacy)) << "less than an hour old";
  EXPECT_TRUE(std::filesystem::exists(unrelated));
}

TEST(RunExternalMeasurementTest, ReadsTheReportAndRecordsTheCommandLeaves) {
  FakeBackend backend;
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, Command(R"(
        echo '{"bytesread": 4000000, "entries": 20000, "processtime": 6.0, "chunks": 2}' \
          > "$ROASTCOFFEA_REPORT"
        echo '[{"num_events": 12000, "duration": 3.5, "dataset": "A"},
               {"num_events": 8000, "duration": 2.5, "dataset": "B"}]' \
          > "$ROASTCOFFEA_CHUNK_RECORDS"
        exit 3)"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->command_exit_code, 3);
  EXPECT_FALSE(result->partial);
  EXPECT_FALSE(result->interrupted);
  EXPECT_THAT(RunWarnings(result->run.measurement), ::testing::IsEmpty());
  EXPECT_EQ(backend.starts, 1);
  EXPECT_EQ(backend.stops, 1);
  const v1::Measurement& m = result->run.measurement;
  EXPECT_EQ(m.metadata().backend(), "fake");
  EXPECT_EQ(m.report().events(), 20000);
  EXPECT_EQ(m.metrics().workflow().total_events(), 20000);
  EXPECT_EQ(m.metrics().workflow().total_bytes_read(), 4000000);
  ASSERT_EQ(result->run.chunks.size(), 2u);
  EXPECT_EQ(m.metrics().chunks().num_chunks(), 2);
  ASSERT_TRUE(m.has_tracking());
  EXPECT_EQ(m.metrics().workers().peak_workers(), 2);
  ASSERT_EQ(m.spans_size(), 1);
  EXPECT_EQ(m.spans(0).name(), "collect window");
}

TEST(RunExternalMeasurementTest, WithoutAReportTheChunkRecordsAreTheReport) {
  FakeBackend backend;
  v1::ChunkRecord own;
  own.set_events(500);
  own.set_duration_seconds(1.0);
  own.set_status(v1::CHUNK_STATUS_OK);
  backend.own_chunks = {own};
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, Command("true"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->run.measurement.report().events(), 500);
  EXPECT_EQ(result->run.chunks.size(), 1u);
}

TEST(RunExternalMeasurementTest, EngineTasksJoinTheInstrumentedRecordsByTaskId) {
  // The engine saw tasks 3 (failed) and 9 (its application retry, new id) and 4; the analysis
  // wrote a record per task with the chunk it processed.
  FakeBackend backend;
  for (const char* id : {"3", "4", "9"}) {
    v1::ChunkRecord task;
    task.set_task_id(id);
    task.set_worker("worker-1");
    task.set_status(std::string(id) == "3" ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    if (std::string(id) == "3") task.set_error_text("exit code 1");
    backend.own_chunks.push_back(task);
  }
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, Command(R"(
        echo '[{"task_id": 3, "file": "f.root", "entry_start": 0, "entry_stop": 10,
                "num_events": 10, "t_start": 100, "t_end": 101, "error": "ValueError"},
               {"task_id": 4, "file": "f.root", "entry_start": 10, "entry_stop": 20,
                "num_events": 10, "t_start": 100, "t_end": 102},
               {"task_id": 9, "file": "f.root", "entry_start": 0, "entry_stop": 10,
                "num_events": 10, "t_start": 103, "t_end": 104}]' \
          > "$ROASTCOFFEA_CHUNK_RECORDS")"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(RunWarnings(result->run.measurement), ::testing::IsEmpty());
  const v1::Measurement& m = result->run.measurement;
  const std::vector<v1::ChunkRecord> chunks = RecordsOf(result->run.chunks);
  ASSERT_EQ(chunks.size(), 2u);  // one record per chunk
  EXPECT_EQ(chunks[0].task_id(), "9");
  ASSERT_EQ(chunks[0].retried_task_ids_size(), 1);
  EXPECT_EQ(chunks[0].retried_task_ids(0), "3");
  EXPECT_EQ(chunks[0].attempt(), 1u);
  EXPECT_EQ(chunks[0].worker(), "worker-1");
  EXPECT_EQ(chunks[1].task_id(), "4");
  EXPECT_EQ(m.metrics().chunks().num_failed_chunks(), 0);
  EXPECT_EQ(m.report().events(), 20);
}

TEST(RunExternalMeasurementTest, BrokenJsonIsAWarningNotALostMeasurement) {
  FakeBackend backend;
  backend.warnings = {"the two logs disagree"};
  absl::StatusOr<ExternalRunResult> result =
      RunExternalMeasurement(backend, Command(R"(echo '{oops' > "$ROASTCOFFEA_REPORT")"));
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<std::string> warnings = RunWarnings(result->run.measurement);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "the two logs disagree");
  EXPECT_THAT(warnings[1], HasSubstr("report ignored"));
  EXPECT_THAT(warnings[1], HasSubstr("report.json"));
  EXPECT_EQ(result->run.measurement.metrics().workflow().total_events(), 0);
}

// Every warning reaches the saved measurement: the backend's under its own code, ours under
// "external_run".
TEST(RunExternalMeasurementTest, WarningsAreInTheMeasurementWithCodes) {
  FakeBackend backend;
  backend.warnings = {"the two logs disagree"};
  absl::StatusOr<ExternalRunResult> result =
      RunExternalMeasurement(backend, Command(R"(echo '{oops' > "$ROASTCOFFEA_REPORT")"));
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::pair<std::string, std::string>> coded;
  for (const v1::Warning& w : result->run.measurement.warnings()) {
    // Host warnings (this machine's load, the build) come first and are not ours to check.
    if (w.code() == "external_run" || w.code() == absl::StrCat(backend.name(), "_warning")) {
      coded.emplace_back(w.code(), w.message());
    }
  }
  ASSERT_EQ(coded.size(), 2u);
  EXPECT_EQ(coded[0].first, absl::StrCat(backend.name(), "_warning"));
  EXPECT_EQ(coded[0].second, "the two logs disagree");
  EXPECT_EQ(coded[1].first, "external_run");
  EXPECT_THAT(coded[1].second, HasSubstr("report ignored"));
}

TEST(RunExternalMeasurementTest, GapsMakeThePartialFlag) {
  FakeBackend backend;
  backend.with_gap = true;
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, Command("true"));
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->partial);
}

TEST(RunExternalMeasurementTest, UnknownCommandIsNotFoundAndTrackingStops) {
  FakeBackend backend;
  ExternalRunOptions options;
  options.command = {"/no/such/analysis.py"};
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("/no/such/analysis.py"));
  EXPECT_EQ(backend.stops, 1);
}

// A run that ended long ago, read by an importer: nothing to wait for (no command, no duration:
// a live backend would wait for Ctrl-C), and its own window frames it.
TEST(MeasureFinishedRunTest, IsNotWaitedForAndKeepsItsOwnWindow) {
  int reads = 0;
  auto read = [&reads]() -> absl::StatusOr<RawRun> {
    ++reads;
    RawRun record;
    record.window.start = absl::FromUnixSeconds(1700000000);
    record.window.end = absl::FromUnixSeconds(1700000090);
    record.window.elapsed_seconds = 90;
    record.tracking.emplace().set_backend("taskvine");
    return record;
  };
  SessionOptions session;
  session.output_dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/finished");
  absl::StatusOr<ExternalRunResult> result = MeasureFinishedRun("taskvine", read, session);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(reads, 1);
  const v1::MeasurementMetadata& metadata = result->run.measurement.metadata();
  EXPECT_EQ(metadata.backend(), "taskvine");
  EXPECT_EQ(metadata.start_time().seconds(), 1700000000);
  EXPECT_EQ(metadata.end_time().seconds(), 1700000090);
  EXPECT_DOUBLE_EQ(metadata.elapsed_seconds(), 90);
  EXPECT_FALSE(metadata.has_host_facts()) << "it ran elsewhere, before it was read";
  EXPECT_FALSE(result->interrupted);
  EXPECT_TRUE(result->session->checkpoint_directory().empty()) << "nothing to checkpoint";
}

TEST(MeasureFinishedRunTest, AnImportErrorIsTheRunsError) {
  auto read = []() -> absl::StatusOr<RawRun> {
    return absl::NotFoundError("no transactions log at /nonexistent");
  };
  absl::StatusOr<ExternalRunResult> result = MeasureFinishedRun("taskvine", read, SessionOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("/nonexistent"));
}

TEST(RunExternalMeasurementTest, DurationWithoutCommand) {
  FakeBackend backend;
  ExternalRunOptions options;
  options.duration = absl::Milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(seconds, 0.3);
  EXPECT_GE(result->run.measurement.metadata().elapsed_seconds(), 0.3);
  EXPECT_FALSE(result->interrupted);
}

TEST(RunExternalMeasurementTest, SigtermEndsTheRunButKeepsTheMeasurement) {
  FakeBackend backend;
  // The command asks collect to stop (as `kill` from another shell would), then waits to be
  // told to stop in turn.
  absl::StatusOr<ExternalRunResult> result =
      RunExternalMeasurement(backend, Command("kill -TERM $PPID; sleep 30"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->interrupted);
  EXPECT_TRUE(result->run.measurement.metadata().interrupted());
  EXPECT_EQ(result->run.measurement.metadata().interruption(), "SIGTERM while running");
  EXPECT_EQ(result->command_exit_code, 128 + 15) << "the command got the SIGTERM too";
  EXPECT_EQ(backend.stops, 1);
  EXPECT_LT(result->run.measurement.metadata().elapsed_seconds(), 20);
}

// A command that ignores the signal has the grace period, then it is killed.
TEST(RunExternalMeasurementTest, ACommandThatIgnoresTheSignalIsKilledAfterTheGracePeriod) {
  FakeBackend backend;
  ExternalRunOptions options = Command("trap '' TERM; kill -TERM $PPID; exec sleep 30");
  options.session.grace_period = absl::Milliseconds(300);
  absl::StatusOr<ExternalRunResult> result = RunExternalMeasurement(backend, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->interrupted);
  EXPECT_EQ(result->command_exit_code, 128 + 9);
  EXPECT_THAT(RunWarnings(result->run.measurement),
              ::testing::Contains(HasSubstr("was killed (SIGKILL)")));
  EXPECT_LT(result->run.measurement.metadata().elapsed_seconds(), 10);
}

}  // namespace
}  // namespace roastcoffea
