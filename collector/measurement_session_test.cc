#include "collector/measurement_session.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"
#include "ingest/checkpoint_measurement.h"
#include "instrumentation/chunk_tracking.h"
#include "store/checkpoint.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

constexpr absl::Duration kRealTimeout = absl::Seconds(60);

// An engine that never answers (only a signal handler's _exit ends the process).
[[noreturn]] void HangForever() {
  while (true) pause();
}

// Two workers sampled at start and stop; a span with one fine metric; optionally a StopTracking
// that never returns (an engine that does not answer).
class FakeBackend : public AbstractMetricsBackend {
 public:
  absl::string_view name() const override { return backend_name; }
  absl::Status StartTracking(absl::Duration) override {
    started_ = absl::Now();
    return absl::OkStatus();
  }
  absl::StatusOr<v1::TrackingData> StopTracking() override {
    if (hang_on_stop) HangForever();
    v1::TrackingData data;
    data.set_backend("fake");
    for (absl::Time t : {started_, absl::Now()}) {
      data.add_worker_count_time_unix_ns(absl::ToUnixNanos(t));
      data.add_worker_count(2);
    }
    return data;
  }
  absl::StatusOr<SpanId> CreateSpan(absl::string_view span) override {
    if (fail_span) return absl::UnavailableError("no fine metrics today");
    return std::string(span);
  }
  absl::Status EndSpan(const SpanId&) override { return absl::OkStatus(); }
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) override {
    v1::Span span;
    span.set_name(id);
    return span;
  }
  void Contribute(RawRun& run) override {
    run.engine_version = "9.9.9-fake";
    v1::Warning& warning = run.warnings.emplace_back();
    warning.set_code("fake_warning");
    warning.set_message("the logs disagree");
  }

  bool fail_span = false;
  std::atomic<bool> hang_on_stop{false};
  std::string backend_name = "fake";

 private:
  absl::Time started_;
};

v1::ChunkRecord Chunk(int64_t start) {
  v1::ChunkRecord chunk;
  chunk.set_dataset("qcd");
  chunk.set_file("jets.root");
  chunk.set_entry_start(start);
  chunk.set_entry_stop(start + 100);
  chunk.set_events(100);
  chunk.set_duration_seconds(0.5);
  chunk.set_start_unix_ns((1700000000 + start) * 1000000000);
  chunk.set_end_unix_ns((1700000000 + start) * 1000000000 + 500000000);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

SessionOptions Options(const std::string& name) {
  SessionOptions options;
  options.interval = absl::Milliseconds(50);
  options.handle_signals = true;  // the interruption tests below send signals
  options.metadata.set_name(name);
  options.metadata.set_tool_version("test");
  (*options.metadata.mutable_configuration())["analysis"] = "session test";
  options.output_dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/measurements");
  options.grace_period = absl::Milliseconds(200);
  options.finish_timeout = absl::Milliseconds(300);
  return options;
}

TEST(MeasurementSessionTest, IsAChunkRecordSinkForTrackedProcessors) {
  FakeBackend backend;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, Options("sink-run"));
  ASSERT_TRUE(session.ok()) << session.status();
  ChunkRecordSink* sink = session->get();
  const auto tracked =
      TrackChunksInto([](const ChunkMetadata& chunk) { return chunk.events; }, sink);
  ChunkMetadata metadata{"qcd", "jets.root", "uuid-1", 0, 100, 100};
  metadata.task_id = "task-7";
  EXPECT_EQ(tracked(metadata), 100);
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  ASSERT_EQ(measurement->chunks_size(), 1);
  EXPECT_EQ(measurement->chunks(0).uuid(), "uuid-1");
  EXPECT_EQ(measurement->chunks(0).task_id(), "task-7");
  EXPECT_EQ(measurement->metrics().chunks().num_chunks(), 1);
}

TEST(MeasurementSessionTest, FromStartToASavedMeasurement) {
  FakeBackend backend;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, Options("whole-run"));
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE((*session)->interrupted());
  EXPECT_EQ((*session)->work_deadline(), absl::InfiniteFuture());
  (*session)->RecordChunk(Chunk(0));
  (*session)->RecordChunk(Chunk(100));
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  const v1::MeasurementMetadata& metadata = measurement->metadata();
  EXPECT_EQ(metadata.name(), "whole-run");
  EXPECT_EQ(metadata.backend(), "fake");
  EXPECT_EQ(metadata.engine_version(), "9.9.9-fake") << "the backend's engine version";
  EXPECT_EQ(metadata.tool_version(), "test");
  EXPECT_EQ(metadata.configuration().at("analysis"), "session test");
  EXPECT_FALSE(metadata.interrupted());
  EXPECT_TRUE(metadata.has_host_facts());
  EXPECT_EQ(measurement->chunks_size(), 2);
  EXPECT_EQ(measurement->report().events(), 200) << "built from the chunk records";
  EXPECT_EQ(measurement->metrics().chunks().num_chunks(), 2);
  ASSERT_EQ(measurement->spans_size(), 1);
  EXPECT_EQ(measurement->spans(0).name(), "collect window");
  bool backend_warning = false;
  for (const v1::Warning& w : measurement->warnings()) {
    backend_warning |= w.code() == "fake_warning" && w.message() == "the logs disagree";
  }
  EXPECT_TRUE(backend_warning);

  absl::StatusOr<std::string> saved = (*session)->Save(*measurement);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_THAT(*saved, HasSubstr("whole-run"));
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->chunks_size(), 2);
  EXPECT_FALSE((*session)->Finish(RunOutputs{}).ok()) << "Finish is called once";
}

// FinishRun keeps the records as a table beside the measurement; Save(MeasuredRun) writes them
// as if they were measurement.chunks(), and removes the checkpoint once saved.
TEST(MeasurementSessionTest, FinishRunKeepsTheRecordsAsATableAndSavesEveryOne) {
  FakeBackend backend;
  SessionOptions options = Options("table-run");
  options.checkpoint_interval = absl::Hours(1);  // only the final append at Finish
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::string checkpoint = (*session)->checkpoint_directory();
  ASSERT_FALSE(checkpoint.empty());
  std::vector<v1::ChunkRecord> recorded;
  for (int i = 0; i < 50; ++i) {
    v1::ChunkRecord chunk = Chunk(100 * i);
    chunk.set_task_id(absl::StrCat("task-", i));
    recorded.push_back(chunk);
    (*session)->RecordChunk(chunk);
  }
  absl::StatusOr<MeasuredRun> run = (*session)->FinishRun(RunOutputs{});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->measurement.chunks_size(), 0) << "the records are in the table only";
  ASSERT_EQ(run->chunks.size(), recorded.size());
  EXPECT_EQ(run->measurement.metrics().chunks().num_chunks(), 50);
  EXPECT_EQ(run->measurement.metadata().name(), "table-run");
  absl::StatusOr<std::string> saved = (*session)->Save(*run);
  ASSERT_TRUE(saved.ok()) << saved.status();
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(*saved);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->chunks_size(), 50);
  for (int i = 0; i < 50; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(loaded->chunks(i), recorded[i]))
        << "record " << i << ": " << loaded->chunks(i).ShortDebugString();
  }
  EXPECT_EQ(loaded->metrics().chunks().num_chunks(), 50);
  EXPECT_FALSE(std::filesystem::exists(checkpoint)) << "the checkpoint outlived the save";
  EXPECT_FALSE((*session)->FinishRun(RunOutputs{}).ok()) << "FinishRun is called once";
}

// A MeasuredRun that cannot be saved keeps the checkpoint, and the error says where it is.
TEST(MeasurementSessionTest, AFailedSaveOfAMeasuredRunNamesTheCheckpoint) {
  FakeBackend backend;
  SessionOptions options = Options("taken-name");
  options.checkpoint_interval = absl::Hours(1);
  ASSERT_TRUE(SaveMeasurement(v1::Measurement(), options.output_dir, "taken-name").ok());
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  (*session)->RecordChunk(Chunk(0));
  absl::StatusOr<MeasuredRun> run = (*session)->FinishRun(RunOutputs{});
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<std::string> saved = (*session)->Save(*run);
  ASSERT_FALSE(saved.ok());
  EXPECT_THAT(saved.status().message(), HasSubstr("taken-name"));
  EXPECT_THAT(saved.status().message(),
              HasSubstr("are in its checkpoint, " + (*session)->checkpoint_directory()));
  absl::StatusOr<Checkpoint> read = ReadCheckpoint((*session)->checkpoint_directory());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->chunks.size(), 1u);
}

bool HasWarning(const v1::Measurement& measurement, absl::string_view code) {
  for (const v1::Warning& w : measurement.warnings()) {
    if (w.code() == code) return true;
  }
  return false;
}

// A sampling backend whose --interval is longer than the run under-reads peak memory: said.
TEST(MeasurementSessionTest, AnIntervalLongerThanTheRunIsAWarning) {
  FakeBackend backend;
  backend.backend_name = "threadpool";
  SessionOptions options = Options("long-interval");
  options.interval = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  ASSERT_TRUE(HasWarning(*measurement, "interval_longer_than_run"));
  for (const v1::Warning& w : measurement->warnings()) {
    if (w.code() == "interval_longer_than_run") {
      EXPECT_THAT(w.message(), HasSubstr("--interval is 10 s"));
      EXPECT_THAT(w.message(), HasSubstr("peak memory"));
    }
  }
}

TEST(MeasurementSessionTest, NoIntervalWarningForShortIntervalsOrBackendsThatDoNotSample) {
  {
    FakeBackend backend;
    backend.backend_name = "threadpool";
    SessionOptions options = Options("short-interval");
    options.interval = absl::Nanoseconds(1);  // every run lasts far more than 4 ns
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, options);
    ASSERT_TRUE(session.ok()) << session.status();
    absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
    ASSERT_TRUE(measurement.ok()) << measurement.status();
    EXPECT_FALSE(HasWarning(*measurement, "interval_longer_than_run"));
  }
  {
    FakeBackend backend;  // "fake": its series come from records, not from sampling
    SessionOptions options = Options("not-sampled");
    options.interval = absl::Seconds(10);
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, options);
    ASSERT_TRUE(session.ok()) << session.status();
    absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
    ASSERT_TRUE(measurement.ok()) << measurement.status();
    EXPECT_FALSE(HasWarning(*measurement, "interval_longer_than_run"));
  }
}

// The live view counts chunks as they are recorded, and aggregates the chunks so far.
TEST(MeasurementSessionTest, LiveStatusCountsChunksAsTheyAreRecorded) {
  FakeBackend backend;
  SessionOptions options = Options("live");
  options.in_process_worker_threads = 2;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  (*session)->set_chunks_total(10);
  LiveStatus before = (*session)->live_status();
  EXPECT_EQ(before.chunks_ok, 0);
  EXPECT_EQ(before.so_far, nullptr) << "nothing to aggregate yet";
  v1::ChunkRecord slow = Chunk(0);
  slow.set_duration_seconds(3);
  slow.set_cpu_seconds(1.5);
  slow.set_run_queue_wait_seconds(0.25);
  slow.set_compressed_bytes_read(1000);
  (*session)->RecordChunk(slow);
  (*session)->RecordChunk(Chunk(100));  // 0.5 s
  v1::ChunkRecord failed = Chunk(200);
  failed.set_status(v1::CHUNK_STATUS_FAILED);
  (*session)->RecordChunk(failed);
  const LiveStatus status = (*session)->live_status(absl::ZeroDuration());
  EXPECT_EQ(status.name, "live");
  EXPECT_EQ(status.backend, "fake");
  EXPECT_EQ(status.chunks_ok, 2);
  EXPECT_EQ(status.chunks_failed, 1);
  EXPECT_EQ(status.events, 200) << "of successful chunks";
  EXPECT_EQ(status.compressed_bytes_read, 1000);
  EXPECT_DOUBLE_EQ(status.chunk_seconds, 4.0);
  EXPECT_DOUBLE_EQ(status.chunk_cpu_seconds, 1.5);
  EXPECT_DOUBLE_EQ(status.chunk_run_queue_wait_seconds, 0.25);
  EXPECT_EQ(status.chunks_total, 10);
  EXPECT_EQ(status.worker_threads, 2);
  // 0.5 s twice in the 0.5 s bucket, 3 s in the 5 s bucket.
  EXPECT_EQ(status.duration_buckets[5], 2);
  EXPECT_EQ(status.duration_buckets[8], 1);
  EXPECT_FALSE(status.finished);
  ASSERT_NE(status.so_far, nullptr);
  EXPECT_EQ(status.so_far->chunks().num_chunks(), 3);
  EXPECT_TRUE(status.so_far->findings_evaluated());
  ASSERT_TRUE((*session)->Finish(RunOutputs{}).ok());
  EXPECT_TRUE((*session)->live_status().finished);
}

// A library does not take the process's signals unless the program asks: by default two
// sessions run side by side, and SIGINT keeps its disposition.
TEST(MeasurementSessionTest, SignalsAreLeftAloneUnlessTheProgramOptsIn) {
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGINT, nullptr, &before), 0);
  FakeBackend first_backend, second_backend;
  SessionOptions options = Options("library-1");
  options.handle_signals = false;
  SessionOptions defaults;
  EXPECT_FALSE(defaults.handle_signals);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> first =
      MeasurementSession::Start(first_backend, options);
  options.metadata.set_name("library-2");
  absl::StatusOr<std::unique_ptr<MeasurementSession>> second =
      MeasurementSession::Start(second_backend, options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  struct sigaction during {};
  ASSERT_EQ(sigaction(SIGINT, nullptr, &during), 0);
  EXPECT_EQ(during.sa_handler, before.sa_handler);
  EXPECT_FALSE((*first)->interrupted());
}

// While the run goes on, its chunks are appended to a checkpoint that a kill leaves behind; the
// finished run's save removes it.
TEST(MeasurementSessionTest, ChunksAreCheckpointedWhileTheRunGoesOn) {
  FakeBackend backend;
  FakeClock clock;
  SessionOptions options = Options("checkpointed");
  options.clock = &clock;
  options.checkpoint_interval = absl::Seconds(30);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::string directory = (*session)->checkpoint_directory();
  EXPECT_EQ(directory, options.output_dir + "/checkpointed.checkpoint");
  (*session)->RecordChunk(Chunk(0));
  (*session)->RecordChunk(Chunk(100));
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  clock.Advance(absl::Seconds(29));
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  absl::StatusOr<Checkpoint> early = ReadCheckpoint(directory);
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_EQ(early->chunks.size(), 0u) << "not before the period is over";
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));  // appended, waiting for the next one
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(directory);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->chunks.size(), 2u);
  EXPECT_EQ(read->metadata.name(), "checkpointed");
  EXPECT_EQ(read->metadata.backend(), "fake");
  EXPECT_EQ(read->metadata.configuration().at("analysis"), "session test");
  EXPECT_GT(read->metadata.start_time().seconds(), 0);
  (*session)->RecordChunk(Chunk(200));
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  // Until the save, the checkpoint holds every chunk.
  read = ReadCheckpoint(directory);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->chunks.size(), 3u);
  ASSERT_TRUE((*session)->Save(*measurement).ok());
  EXPECT_FALSE(IsCheckpointDirectory(directory)) << "removed once saved";
}

// A chunk with the rarely-set fields too (the session keeps its chunks as a ChunkTable).
v1::ChunkRecord RichChunk(int64_t start) {
  v1::ChunkRecord chunk = Chunk(start);
  chunk.set_uuid(absl::StrCat("uuid-", start % 2));
  chunk.set_worker("tcp://10.0.0.7:9123");
  chunk.set_thread_index(3);
  chunk.set_task_id(absl::StrCat("task-", start));
  chunk.set_cpu_seconds(0.25);
  chunk.set_memory_before_bytes(1000);
  chunk.set_memory_after_bytes(5000);
  chunk.set_compressed_bytes_read(123456);
  chunk.set_allocated_bytes(0);  // present, zero
  chunk.add_accessed_branches("Jet_pt");
  chunk.mutable_file_metadata()->set_compression_ratio(0.25);
  v1::SectionRecord* section = chunk.add_sections();
  section->set_name("jets");
  section->set_kind(v1::SectionRecord::KIND_TIME);
  section->set_entries(100);
  section->set_duration_seconds(0.125);
  return chunk;
}

TEST(MeasurementSessionTest, RecordedChunksReachTheCheckpointAndTheMeasurementWhole) {
  FakeBackend backend;
  FakeClock clock;
  SessionOptions options = Options("whole");
  options.clock = &clock;
  options.checkpoint_interval = absl::Seconds(30);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<v1::ChunkRecord> recorded = {RichChunk(0), RichChunk(100), RichChunk(200)};
  (*session)->RecordChunk(recorded[0]);
  (*session)->RecordChunk(recorded[1]);
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));  // appended, waiting for the next one
  (*session)->RecordChunk(recorded[2]);
  clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  absl::StatusOr<Checkpoint> read = ReadCheckpoint((*session)->checkpoint_directory());
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->chunks.size(), 3u) << "the second append has only the third chunk";
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(read->chunks[i], recorded[i])) << i;
  }
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  ASSERT_EQ(measurement->chunks_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(measurement->chunks(i), recorded[i]))
        << i << ": " << measurement->chunks(i).DebugString();
  }
}

// What a run's engine recorded, as an importer gives it (ingest/taskvine_run.h).
RawRun EngineRecord() {
  RawRun record;
  record.backend = "taskvine";
  record.window.start = absl::FromUnixSeconds(1700000000);
  record.window.end = absl::FromUnixSeconds(1700000060);
  record.window.elapsed_seconds = 60;
  record.tracking.emplace().set_backend("taskvine");
  record.spans.emplace_back().set_name(kCollectWindowSpanName);
  v1::ChunkRecord task;
  task.set_task_id("7");
  task.set_attempt(2);
  task.set_worker("worker-3");
  task.set_status(v1::CHUNK_STATUS_OK);
  record.engine_chunks.Append(task);
  v1::Warning& warning = record.warnings.emplace_back();
  warning.set_code("taskvine_warning");
  warning.set_message("from the logs");
  return record;
}

// A run read after it ended: the session records its chunks as they come back (checkpoint,
// live status), and the engine's record brings tracking, span, engine chunks and warnings.
TEST(MeasurementSessionTest, ARecordingSessionTakesTheEnginesRecordAtTheEnd) {
  SessionOptions options = Options("recorded");
  options.checkpoint_interval = absl::Milliseconds(5);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::StartRecording("workqueue", options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE((*session)->checkpoint_directory().empty());
  v1::ChunkRecord chunk = Chunk(0);
  chunk.set_task_id("7");
  (*session)->RecordChunk(chunk);
  EXPECT_EQ((*session)->live_status().chunks_ok, 1);
  RunOutputs outputs;
  outputs.engine_record = EngineRecord();
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(std::move(outputs));
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_EQ(measurement->metadata().backend(), "workqueue");
  // It ran here: the session's clocks and this machine's facts frame it.
  EXPECT_GT(measurement->metadata().start_time().seconds(), 1700000060);
  EXPECT_TRUE(measurement->metadata().has_host_facts());
  EXPECT_EQ(measurement->tracking().backend(), "taskvine");
  ASSERT_EQ(measurement->spans_size(), 1);
  EXPECT_EQ(measurement->spans(0).name(), kCollectWindowSpanName);
  ASSERT_EQ(measurement->chunks_size(), 1);  // joined by task id
  EXPECT_EQ(measurement->chunks(0).attempt(), 2u);
  EXPECT_EQ(measurement->chunks(0).worker(), "worker-3");
  bool from_logs = false;
  for (const v1::Warning& w : measurement->warnings()) {
    from_logs |= w.code() == "taskvine_warning";
    EXPECT_NE(w.code(), "collector") << w.message();  // no span to miss
  }
  EXPECT_TRUE(from_logs);
  ASSERT_TRUE((*session)->Save(*measurement).ok());
}

TEST(MeasurementSessionTest, AFinishedRunsRecordFramesIt) {
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::StartRecording("taskvine", Options("finished"));
  ASSERT_TRUE(session.ok()) << session.status();
  RunOutputs outputs;
  outputs.engine_record = EngineRecord();
  outputs.engine_record_frames_the_run = true;
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(std::move(outputs));
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_EQ(measurement->metadata().start_time().seconds(), 1700000000);
  EXPECT_EQ(measurement->metadata().end_time().seconds(), 1700000060);
  EXPECT_DOUBLE_EQ(measurement->metadata().elapsed_seconds(), 60);
  EXPECT_FALSE(measurement->metadata().has_host_facts()) << "it ran elsewhere, before";
}

// A step of the wall clock (NTP, `date -s`; the reliability study's N8: -60 s stretched
// --duration=5 to 66.5 s) moves no period of the session: a 5 s wait for the end of the run
// takes 5 s of the monotonic clock, the checkpoint comes after its interval, the elapsed time
// is the monotonic one, and the run's chunk is kept.
TEST(MeasurementSessionTest, AWallClockStepNeitherStretchesNorCutsThePeriods) {
  for (const absl::Duration step : {-absl::Hours(1), absl::Hours(1)}) {
    SCOPED_TRACE(absl::StrCat("step ", absl::FormatDuration(step)));
    FakeBackend backend;
    FakeClock clock;
    SessionOptions options = Options(step < absl::ZeroDuration() ? "stepped-back" : "stepped-on");
    options.clock = &clock;
    options.handle_signals = false;
    options.checkpoint_interval = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, options);
    ASSERT_TRUE(session.ok()) << session.status();
    const absl::Time start = clock.Now();
    ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));  // the checkpoint's period
    std::atomic<bool> ended{false};
    std::thread run([&] {
      (*session)->WaitForInterruption(start + absl::Seconds(5));  // as --duration=5
      ended = true;
    });
    ASSERT_TRUE(clock.WaitForWaiters(2, kRealTimeout));
    clock.Advance(absl::Seconds(2));
    clock.StepWallClock(step);
    ASSERT_TRUE(clock.WaitForWaiters(2, kRealTimeout));
    EXPECT_FALSE(ended.load()) << "cut short";
    clock.Advance(absl::Seconds(3));
    run.join();  // a stretched wait never ends (the test times out)
    EXPECT_TRUE(ended.load());

    v1::ChunkRecord chunk = Chunk(0);
    chunk.set_start_unix_ns(absl::ToUnixNanos(clock.Now() - absl::Milliseconds(500)));
    chunk.set_end_unix_ns(absl::ToUnixNanos(clock.Now()));
    (*session)->RecordChunk(chunk);
    ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
    clock.Advance(absl::Seconds(25) - absl::Nanoseconds(1));
    ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
    absl::StatusOr<Checkpoint> read = ReadCheckpoint((*session)->checkpoint_directory());
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->chunks.size(), 0u) << "checkpoint period cut";
    clock.Advance(absl::Nanoseconds(1));
    ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
    read = ReadCheckpoint((*session)->checkpoint_directory());
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->chunks.size(), 1u) << "checkpoint period stretched";

    absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
    ASSERT_TRUE(measurement.ok()) << measurement.status();
    EXPECT_DOUBLE_EQ(measurement->metadata().elapsed_seconds(), 30);
    EXPECT_EQ(measurement->metadata().start_time().seconds(), absl::ToUnixSeconds(start));
    EXPECT_EQ(measurement->metadata().end_time().seconds(), absl::ToUnixSeconds(start) + 30);
    EXPECT_EQ(measurement->chunks_size(), 1);
    EXPECT_EQ(measurement->rejected_chunks_size(), 0);
  }
}

// Sample i of worker "w": time i, memory i (a replacing backend may revise it at the end).
void AddSample(int64_t i, double memory, v1::TrackingData* data) {
  if (data->workers_size() == 0) data->add_workers()->set_worker("w");
  data->add_worker_count_time_unix_ns(i);
  data->add_worker_count(1);
  data->mutable_workers(0)->add_time_unix_ns(i);
  data->mutable_workers(0)->add_memory_bytes(memory);
}

// A backend that hands its samples out for good (as Dask and the thread pool do): each take or
// stop gives the next 5 samples; it keeps at most those 5 in memory.
class SegmentingBackend : public FakeBackend {
 public:
  std::optional<v1::TrackingData> TakeTrackingSegment() override { return Next(); }
  absl::StatusOr<v1::TrackingData> StopTracking() override {
    if (hang_on_stop) HangForever();
    return Next();
  }
  FinalTracking final_tracking() const override { return FinalTracking::kExtendsSegments; }
  int64_t produced() const { return next_.load(); }

 private:
  v1::TrackingData Next() {
    v1::TrackingData data;
    data.set_backend("fake");
    for (int i = 0; i < 5; ++i) {
      const int64_t t = next_++;
      AddSample(t, static_cast<double>(t), &data);
    }
    return data;
  }
  std::atomic<int64_t> next_{0};
};

// A backend that hands out copies and rebuilds the whole series at the end (as TaskVine does
// from its logs): each take gives the 5 samples after the last take; StopTracking gives every
// sample again, 5 more, and sample 0 revised (memory 1000).
class ReplacingBackend : public FakeBackend {
 public:
  std::optional<v1::TrackingData> TakeTrackingSegment() override {
    std::lock_guard<std::mutex> lock(mu_);
    v1::TrackingData data;
    data.set_backend("fake");
    for (int i = 0; i < 5; ++i, ++produced_) AddSample(produced_, produced_, &data);
    return data;
  }
  absl::StatusOr<v1::TrackingData> StopTracking() override {
    std::lock_guard<std::mutex> lock(mu_);
    produced_ += 5;
    v1::TrackingData data;
    data.set_backend("fake");
    for (int64_t i = 0; i < produced_; ++i) AddSample(i, i == 0 ? 1000 : i, &data);
    return data;
  }
  FinalTracking final_tracking() const override { return FinalTracking::kReplacesSegments; }
  int64_t produced() const {
    std::lock_guard<std::mutex> lock(mu_);
    return produced_;
  }

 private:
  mutable std::mutex mu_;
  int64_t produced_ = 0;
};

// Three checkpoints of `backend`'s segments, the run read back as a SIGKILL would leave it
// (ingest/checkpoint_measurement.h: partial, samples 0..14 in order), then Finish.
absl::StatusOr<v1::Measurement> RunThreeCheckpointsAndFinish(AbstractMetricsBackend& backend,
                                                             const std::string& name) {
  FakeClock clock;
  SessionOptions options = Options(name);
  options.clock = &clock;
  options.checkpoint_interval = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  if (!session.ok()) return session.status();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
    clock.Advance(options.checkpoint_interval);
  }
  EXPECT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  absl::StatusOr<v1::Measurement> killed =
      LoadCheckpointMeasurement((*session)->checkpoint_directory());
  EXPECT_TRUE(killed.ok()) << killed.status();
  if (killed.ok()) {
    EXPECT_TRUE(killed->metadata().interrupted());
    EXPECT_EQ(killed->tracking().workers_size(), 1);
    for (const v1::WorkerSeries& series : killed->tracking().workers()) {
      EXPECT_EQ(series.time_unix_ns_size(), 15);
      for (int i = 0; i < series.time_unix_ns_size(); ++i) {
        EXPECT_EQ(series.time_unix_ns(i), i);
        EXPECT_EQ(series.memory_bytes(i), i);
      }
    }
  }
  return (*session)->Finish(RunOutputs{});
}

// Bounded tracking memory (#25): the samples move to the checkpoint while the run goes on (a
// kill keeps them), and the finished measurement has every one of them, in order, then the
// rest StopTracking returned.
TEST(MeasurementSessionTest, ExtendingSegmentsAreInTheCheckpointAndAllInTheMeasurement) {
  SegmentingBackend backend;
  absl::StatusOr<v1::Measurement> measurement = RunThreeCheckpointsAndFinish(backend, "extend");
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  const v1::TrackingData& tracking = measurement->tracking();
  ASSERT_EQ(tracking.workers_size(), 1);
  const v1::WorkerSeries& series = tracking.workers(0);
  ASSERT_EQ(series.time_unix_ns_size(), backend.produced());
  ASSERT_EQ(tracking.worker_count_size(), backend.produced());
  for (int i = 0; i < series.time_unix_ns_size(); ++i) {
    ASSERT_EQ(series.time_unix_ns(i), i);
    ASSERT_EQ(series.memory_bytes(i), i);
  }
}

// A backend whose end replaces its segments (TaskVine --follow): a kill keeps the segments, and
// the finished measurement has StopTracking's series alone, revisions included, each sample
// once.
TEST(MeasurementSessionTest, ReplacingSegmentsAreInTheCheckpointAndTheEndReplacesThem) {
  ReplacingBackend backend;
  absl::StatusOr<v1::Measurement> measurement = RunThreeCheckpointsAndFinish(backend, "replace");
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  const v1::TrackingData& tracking = measurement->tracking();
  ASSERT_EQ(tracking.workers_size(), 1);
  const v1::WorkerSeries& series = tracking.workers(0);
  ASSERT_GE(backend.produced(), 20);
  ASSERT_EQ(series.time_unix_ns_size(), backend.produced()) << "segments joined, not replaced";
  ASSERT_EQ(tracking.worker_count_size(), backend.produced());
  EXPECT_EQ(series.memory_bytes(0), 1000) << "the end's revision lost";
  for (int i = 1; i < series.time_unix_ns_size(); ++i) {
    ASSERT_EQ(series.time_unix_ns(i), i);
    ASSERT_EQ(series.memory_bytes(i), i);
  }
}

// The checkpoint directory removed while the run goes on (a /tmp cleaner, a user tidying up):
// the segments written to it are read back through the session's own descriptor, and the
// measurement still has every sample.
TEST(MeasurementSessionTest, ACheckpointRemovedMidRunStillGivesBackItsSegments) {
  SegmentingBackend backend;
  FakeClock clock;
  SessionOptions options = Options("removed-checkpoint");
  options.clock = &clock;
  options.checkpoint_interval = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
    clock.Advance(options.checkpoint_interval);
  }
  ASSERT_TRUE(clock.WaitForWaiters(1, kRealTimeout));
  const std::string directory = (*session)->checkpoint_directory();
  ASSERT_EQ(std::system(absl::StrCat("rm -rf '", directory, "'").c_str()), 0);
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  for (const v1::Warning& warning : measurement->warnings()) {
    EXPECT_NE(warning.code(), "tracking_segments_lost") << warning.message();
  }
  ASSERT_EQ(measurement->tracking().workers_size(), 1);
  const v1::WorkerSeries& series = measurement->tracking().workers(0);
  ASSERT_EQ(series.time_unix_ns_size(), backend.produced());
  for (int i = 0; i < series.time_unix_ns_size(); ++i) ASSERT_EQ(series.time_unix_ns(i), i);
}

// A run that never saves (killed, or its save failed) leaves the checkpoint with its chunks.
TEST(MeasurementSessionTest, AnUnsavedRunKeepsItsCheckpoint) {
  FakeBackend backend;
  SessionOptions options = Options("never-saved");
  options.checkpoint_interval = absl::Hours(1);  // only the final append at Finish
  std::string directory;
  {
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, options);
    ASSERT_TRUE(session.ok()) << session.status();
    directory = (*session)->checkpoint_directory();
    (*session)->RecordChunk(Chunk(0));
    ASSERT_TRUE((*session)->Finish(RunOutputs{}).ok());
  }
  absl::StatusOr<Checkpoint> read = ReadCheckpoint(directory);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->chunks.size(), 1u);
  options.checkpoint_interval = absl::ZeroDuration();
  options.metadata.set_name("no-checkpoint");
  absl::StatusOr<std::unique_ptr<MeasurementSession>> off =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->checkpoint_directory(), "");
}

TEST(MeasurementSessionTest, TheRunsReportAndChunksWinAndASpanErrorIsAWarning) {
  FakeBackend backend;
  backend.fail_span = true;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, Options("outputs"));
  ASSERT_TRUE(session.ok()) << session.status();
  RunOutputs outputs;
  outputs.chunks = ChunkTableOf({Chunk(0)});
  outputs.report.emplace().set_events(12345);
  outputs.warnings.emplace_back().set_code("mine");
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(std::move(outputs));
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_EQ(measurement->report().events(), 12345);
  EXPECT_EQ(measurement->chunks_size(), 1);
  EXPECT_EQ(measurement->spans_size(), 0);
  std::vector<std::string> codes;
  for (const v1::Warning& w : measurement->warnings()) codes.push_back(w.code());
  EXPECT_THAT(codes, ::testing::IsSupersetOf({"collector", "fake_warning", "mine"}));
}

TEST(MeasurementSessionTest, OneSessionHandlesSignalsAtATime) {
  FakeBackend first_backend;
  FakeBackend second_backend;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> first =
      MeasurementSession::Start(first_backend, Options("first"));
  ASSERT_TRUE(first.ok());
  absl::StatusOr<std::unique_ptr<MeasurementSession>> second =
      MeasurementSession::Start(second_backend, Options("second"));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  SessionOptions quiet = Options("quiet");
  quiet.handle_signals = false;
  EXPECT_TRUE(MeasurementSession::Start(second_backend, quiet).ok());
}

TEST(MeasurementSessionTest, AFirstSignalMarksTheMeasurementInterrupted) {
  FakeBackend backend;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, Options("interrupted"));
  ASSERT_TRUE(session.ok());
  (*session)->RecordChunk(Chunk(0));
  const absl::Time before = absl::Now();
  kill(getpid(), SIGTERM);
  EXPECT_TRUE((*session)->WaitForInterruption(absl::Now() + absl::Seconds(10)));
  EXPECT_LT(absl::Now() - before, absl::Seconds(2));
  EXPECT_TRUE((*session)->interrupted());
  EXPECT_LE((*session)->work_deadline(), absl::Now() + absl::Milliseconds(200));
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_TRUE(measurement->metadata().interrupted());
  EXPECT_EQ(measurement->metadata().interruption(), "SIGTERM while running");
  EXPECT_EQ(measurement->chunks_size(), 1);
  EXPECT_TRUE((*session)->Save(*measurement).ok());
}

// Sends `signal` and returns once the session's interruption watcher has noted it and waits for
// its deadline: with the checkpoint off, only the watcher reads `clock` then (once for the
// deadline, once in the session's note of the signal, then as it waits).
void SignalAndLetTheWatcherNoteIt(int signal, FakeClock& clock, MeasurementSession& session) {
  ASSERT_LE(session.options().checkpoint_interval, absl::ZeroDuration());
  const int64_t reads = clock.monotonic_reads();
  kill(getpid(), signal);
  ASSERT_TRUE(session.WaitForInterruption(clock.Now() + absl::Hours(1)));  // no time passes
  ASSERT_TRUE(clock.WaitForMonotonicReadsAfter(reads + 2, kRealTimeout));
}

TEST(MeasurementSessionTest, BlockingWorkGivesUpWhenTheGracePeriodIsOver) {
  EXPECT_FALSE(SessionShouldGiveUp());
  FakeBackend backend;
  {
    FakeClock clock;
    SessionOptions options = Options("give-up");
    options.checkpoint_interval = absl::ZeroDuration();  // the watcher alone reads the clock
    options.clock = &clock;
    options.grace_period = absl::Seconds(1);
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, options);
    ASSERT_TRUE(session.ok());
    EXPECT_FALSE(SessionShouldGiveUp());
    EXPECT_FALSE((*session)->work_deadline_passed());
    SignalAndLetTheWatcherNoteIt(SIGINT, clock, **session);
    EXPECT_FALSE(SessionShouldGiveUp()) << "running work has its grace period";
    clock.StepWallClock(absl::Hours(1));  // the grace period is monotonic
    clock.Advance(absl::Seconds(1) - absl::Nanoseconds(1));
    EXPECT_FALSE(SessionShouldGiveUp());
    EXPECT_FALSE((*session)->work_deadline_passed());
    clock.Advance(absl::Nanoseconds(1));
    EXPECT_TRUE(SessionShouldGiveUp());
    EXPECT_TRUE((*session)->work_deadline_passed());
    ASSERT_TRUE((*session)->Finish(RunOutputs{}).ok());
  }
  EXPECT_FALSE(SessionShouldGiveUp()) << "no session, nothing to give up";
}

TEST(MeasurementSessionTest, ThePlannedEndOnASignalDoesNotGiveUp) {
  FakeBackend backend;
  FakeClock clock;
  SessionOptions options = Options("planned-end");
  options.checkpoint_interval = absl::ZeroDuration();  // the watcher alone reads the clock
  options.clock = &clock;
  options.signal_is_the_end = true;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok());
  SignalAndLetTheWatcherNoteIt(SIGINT, clock, **session);
  clock.Advance(options.grace_period * 10);  // past the grace period
  EXPECT_FALSE(SessionShouldGiveUp());
  ASSERT_TRUE((*session)->Finish(RunOutputs{}).ok());
}

TEST(MeasurementSessionTest, SignalsHaveTheirUsualEffectAfterTheSession) {
  FakeBackend backend;
  {
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::Start(backend, Options("over"));
    ASSERT_TRUE(session.ok());
  }
  EXPECT_EXIT(raise(SIGTERM), ::testing::KilledBySignal(SIGTERM), "");
}

using MeasurementSessionDeathTest = ::testing::Test;

TEST(MeasurementSessionDeathTest, ASecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        FakeBackend backend;
        auto session = MeasurementSession::Start(backend, Options("twice"));
        if (!session.ok()) std::exit(99);
        kill(getpid(), SIGINT);
        (*session)->WaitForInterruption(absl::Now() + absl::Seconds(5));
        kill(getpid(), SIGINT);
        HangForever();
      },
      ::testing::ExitedWithCode(kInterruptedExitCode), "second signal: exiting at once");
}

// The engine does not answer StopTracking: the session saves what it has, by itself.
TEST(MeasurementSessionDeathTest, ARunThatDoesNotStopIsSavedWithWhatWasDone) {
  const std::string output_dir = Options("").output_dir;
  EXPECT_EXIT(
      {
        FakeBackend backend;
        backend.hang_on_stop = true;
        auto session = MeasurementSession::Start(backend, Options("hung"));
        if (!session.ok()) std::exit(99);
        (*session)->RecordChunk(Chunk(0));
        (*session)->RecordChunk(Chunk(100));
        kill(getpid(), SIGINT);
        (*session)->WaitForInterruption(absl::Now() + absl::Seconds(5));
        (void)(*session)->Finish(RunOutputs{});  // never returns
        std::exit(98);
      },
      ::testing::ExitedWithCode(kInterruptedExitCode), "saved to .*hung");
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output_dir + "/hung");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGINT while running");
  EXPECT_EQ(saved->chunks_size(), 2);
  EXPECT_FALSE(saved->has_tracking());
}

// SIGTERM with a stuck run and many chunks: the last resort saves every one, in order.
TEST(MeasurementSessionDeathTest, TheLastResortSaveKeepsEveryChunk) {
  const std::string output_dir = Options("").output_dir;
  constexpr int kChunks = 2000;
  EXPECT_EXIT(
      {
        FakeBackend backend;
        backend.hang_on_stop = true;
        auto session = MeasurementSession::Start(backend, Options("hung-many"));
        if (!session.ok()) std::exit(99);
        for (int i = 0; i < kChunks; ++i) {
          v1::ChunkRecord chunk = Chunk(100 * i);
          chunk.set_task_id(absl::StrCat("task-", i));
          (*session)->RecordChunk(chunk);
        }
        kill(getpid(), SIGTERM);
        (*session)->WaitForInterruption(absl::Now() + absl::Seconds(5));
        (void)(*session)->Finish(RunOutputs{});  // never returns
        std::exit(98);
      },
      ::testing::ExitedWithCode(kInterruptedExitCode), "2000 chunks\\) saved to .*hung-many");
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output_dir + "/hung-many");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->metadata().interruption(), "SIGTERM while running");
  ASSERT_EQ(saved->chunks_size(), kChunks);
  for (int i = 0; i < kChunks; ++i) {
    v1::ChunkRecord expected = Chunk(100 * i);
    expected.set_task_id(absl::StrCat("task-", i));
    ASSERT_TRUE(MessageDifferencer::Equals(saved->chunks(i), expected)) << "chunk " << i;
  }
  EXPECT_EQ(saved->metrics().chunks().num_chunks(), kChunks);
}

// The same for a backend that handed its samples to the checkpoint: the last resort saves them
// (an 8-hour Dask timeline is not lost to a scheduler that hangs at the end).
TEST(MeasurementSessionDeathTest, ARunThatDoesNotStopKeepsItsCheckpointedTracking) {
  const std::string output_dir = Options("").output_dir;
  EXPECT_EXIT(
      {
        SegmentingBackend backend;
        backend.hang_on_stop = true;
        SessionOptions options = Options("hung-tracked");
        options.checkpoint_interval = absl::Milliseconds(10);
        auto session = MeasurementSession::Start(backend, options);
        if (!session.ok()) std::exit(99);
        (*session)->RecordChunk(Chunk(0));
        while (backend.produced() < 15) absl::SleepFor(absl::Milliseconds(5));
        kill(getpid(), SIGINT);
        (*session)->WaitForInterruption(absl::Now() + absl::Seconds(5));
        (void)(*session)->Finish(RunOutputs{});  // never returns
        std::exit(98);
      },
      ::testing::ExitedWithCode(kInterruptedExitCode), "saved to .*hung-tracked");
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output_dir + "/hung-tracked");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->chunks_size(), 1);
  ASSERT_EQ(saved->tracking().workers_size(), 1) << "the checkpointed tracking was lost";
  const v1::WorkerSeries& series = saved->tracking().workers(0);
  ASSERT_GE(series.time_unix_ns_size(), 15);
  for (int i = 0; i < series.time_unix_ns_size(); ++i) ASSERT_EQ(series.time_unix_ns(i), i);
}

// The same when output_dir cannot take the save (here: it lies under a regular file, which stops
// root too): what was done goes to $TMPDIR/roastcoffea-unsaved, and the exit status says so.
TEST(MeasurementSessionDeathTest, TheLastResortSaveFallsBackWhenOutputDirFails) {
  const std::string base = std::getenv("TEST_TMPDIR");
  const std::string blocker = base + "/blocker-file";
  {
    FILE* file = std::fopen(blocker.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fclose(file);
  }
  const std::string fallback_tmp = base + "/fallback-tmp";
  EXPECT_EXIT(
      {
        setenv("TMPDIR", fallback_tmp.c_str(), 1);
        FakeBackend backend;
        backend.hang_on_stop = true;
        SessionOptions options = Options("hung-elsewhere");
        options.output_dir = blocker + "/measurements";
        auto session = MeasurementSession::Start(backend, options);
        if (!session.ok()) std::exit(99);
        (*session)->RecordChunk(Chunk(0));
        kill(getpid(), SIGINT);
        (*session)->WaitForInterruption(absl::Now() + absl::Seconds(5));
        (void)(*session)->Finish(RunOutputs{});  // never returns
        std::exit(98);
      },
      ::testing::ExitedWithCode(kSavedElsewhereExitCode),
      "saving it instead to .*roastcoffea-unsaved/hung-elsewhere");
  absl::StatusOr<v1::Measurement> saved =
      LoadMeasurement(fallback_tmp + "/roastcoffea-unsaved/hung-elsewhere");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->chunks_size(), 1);
}

// The engine does not answer StartTracking (a connect or handshake that hangs): the signal is
// still honoured, and what there is (the clocks, the host) saved.
TEST(MeasurementSessionDeathTest, ASignalWhileStartingTrackingIsHonoured) {
  class HangingStart : public FakeBackend {
   public:
    absl::Status StartTracking(absl::Duration) override {
      kill(getpid(), SIGTERM);  // while it hangs
      HangForever();
    }
  };
  const std::string output_dir = Options("").output_dir;
  EXPECT_EXIT(
      {
        HangingStart backend;
        (void)MeasurementSession::Start(backend, Options("hung-start"));  // never returns
        std::exit(98);
      },
      ::testing::ExitedWithCode(kInterruptedExitCode), "saved to .*hung-start");
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output_dir + "/hung-start");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(saved->metadata().interrupted());
  EXPECT_EQ(saved->metadata().interruption(), "SIGTERM while starting tracking");
  EXPECT_EQ(saved->chunks_size(), 0);
  EXPECT_TRUE(saved->metadata().has_host_facts());
}

// A signal after Finish (while saving) lets the save complete; the measurement is whole.
TEST(MeasurementSessionTest, ASignalDuringTheSaveLetsItFinish) {
  FakeBackend backend;
  FakeClock clock;
  SessionOptions options = Options("signal-at-save");
  options.checkpoint_interval = absl::ZeroDuration();  // the watcher alone reads the clock
  options.clock = &clock;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(backend, options);
  ASSERT_TRUE(session.ok());
  (*session)->RecordChunk(Chunk(0));
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
  ASSERT_TRUE(measurement.ok());
  SignalAndLetTheWatcherNoteIt(SIGINT, clock, **session);
  // Past the point where a run that had not finished would be saved by the session.
  const int64_t reads = clock.monotonic_reads();
  clock.Advance(options.grace_period + options.finish_timeout);
  ASSERT_TRUE(clock.WaitForMonotonicReadsAfter(reads, kRealTimeout));
  absl::StatusOr<std::string> saved = (*session)->Save(*measurement);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE((*session)->interrupted());
  EXPECT_EQ((*session)->interruption(), "SIGINT while saving");
  EXPECT_EQ(LoadMeasurement(*saved)->chunks_size(), 1);
}

}  // namespace
}  // namespace roastcoffea
