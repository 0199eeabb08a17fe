#include "instrumentation/chunk_tracking.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>  // sleep_for
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/internal/run_queue_delay.h"
#include "instrumentation/internal/thread_schedstat.h"
#include "instrumentation/sections.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ChunkMetadata TtbarChunk() {
  return ChunkMetadata{"ttbar", "root://eos/ttbar_1.root", "3f2a-uuid", 1000, 1500, 500};
}

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void BusyCpu(int64_t nanoseconds) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) <
           nanoseconds);
}

std::string HostColonPid() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

TEST(TrackChunkTest, CopiesMetadataAndRunsFnOnce) {
  int calls = 0;
  v1::ChunkRecord record = TrackChunk(TtbarChunk(), [&] { ++calls; });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(record.dataset(), "ttbar");
  EXPECT_EQ(record.file(), "root://eos/ttbar_1.root");
  EXPECT_EQ(record.uuid(), "3f2a-uuid");
  EXPECT_EQ(record.entry_start(), 1000);
  EXPECT_EQ(record.entry_stop(), 1500);
  EXPECT_EQ(record.events(), 500);
  EXPECT_EQ(record.status(), v1::CHUNK_STATUS_OK);
  EXPECT_EQ(record.error_text(), "");
  EXPECT_EQ(record.attempt(), 0u);
  EXPECT_THAT(record.sections(), IsEmpty());
  EXPECT_EQ(record.task_id(), "") << "no task id given";
}

TEST(TrackChunkTest, TaskIdSetByTheUserIsRecorded) {
  ChunkMetadata metadata = TtbarChunk();
  metadata.task_id = "wq-task-42";
  EXPECT_EQ(TrackChunk(metadata, [] {}).task_id(), "wq-task-42");
  // Also on a failed chunk, whose record must name the task that failed.
  v1::ChunkRecord failed = TrackChunk(metadata, [] { throw std::runtime_error("bad"); });
  EXPECT_EQ(failed.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(failed.task_id(), "wq-task-42");
}

TEST(TrackChunkTest, TimesAreUtcAndCoverTheCall) {
  const int64_t before = UnixNowNs();
  v1::ChunkRecord record =
      TrackChunk(TtbarChunk(), [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
  const int64_t after = UnixNowNs();
  EXPECT_GE(record.duration_seconds(), 0.030);
  EXPECT_LE(before, record.start_unix_ns());
  EXPECT_LE(record.start_unix_ns(), record.end_unix_ns());
  EXPECT_LE(record.end_unix_ns(), after);
  // The end is the start plus the monotonic duration (a wall-clock step cannot reorder them).
  EXPECT_NEAR((record.end_unix_ns() - record.start_unix_ns()) * 1e-9, record.duration_seconds(),
              1e-9);
  // Sleeping costs (almost) no CPU.
  EXPECT_LT(record.cpu_seconds(), record.duration_seconds());
}

TEST(TrackChunkTest, CpuTimeGrowsWithABusyLoop) {
  v1::ChunkRecord idle = TrackChunk(TtbarChunk(), [] {});
  v1::ChunkRecord busy = TrackChunk(TtbarChunk(), [] { BusyCpu(50'000'000); });
  EXPECT_GE(busy.cpu_seconds(), 0.05);
  EXPECT_GT(busy.cpu_seconds(), idle.cpu_seconds());
  EXPECT_GE(busy.duration_seconds(), busy.cpu_seconds() * 0.99);
}

TEST(TrackChunkTest, CpuTimeAndMemoryReadingsCanBeSkipped) {
  ChunkTrackingOptions options;
  options.measure_cpu_time = false;
  options.read_resident_memory = false;
  v1::ChunkRecord record = TrackChunk(
      TtbarChunk(), [] { BusyCpu(10'000'000); }, options);
  EXPECT_EQ(record.cpu_seconds(), 0.0);
  EXPECT_EQ(record.memory_before_bytes(), 0);
  EXPECT_EQ(record.memory_peak_bytes(), 0);
  EXPECT_GT(record.duration_seconds(), 0.0);
  EXPECT_EQ(record.status(), v1::CHUNK_STATUS_OK);
}

// Whether the kernel gives this thread its run-queue delay (else the field must stay absent).
bool RunQueueWaitMeasurable() { return instrumentation_internal::ReadThreadSchedstat().available; }

TEST(TrackChunkTest, ASleepingChunkIsBlockedNotWaitingForACpu) {
  v1::ChunkRecord record =
      TrackChunk(TtbarChunk(), [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
  if (!RunQueueWaitMeasurable()) {
    EXPECT_FALSE(record.has_run_queue_wait_seconds());
    GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  }
  ASSERT_TRUE(record.has_run_queue_wait_seconds());
  // Waking up may wait for a CPU on a loaded machine; not for the 100 ms asleep.
  EXPECT_GE(record.run_queue_wait_seconds(), 0.0);
  EXPECT_LT(record.run_queue_wait_seconds(), 0.05);
  const double blocked =
      record.duration_seconds() - record.cpu_seconds() - record.run_queue_wait_seconds();
  EXPECT_GE(blocked, 0.095);
  EXPECT_LE(blocked, record.duration_seconds());
}

TEST(TrackChunkTest, ABusyChunkAloneIsMostlyCpu) {
  v1::ChunkRecord record = TrackChunk(TtbarChunk(), [] { BusyCpu(50'000'000); });
  if (!RunQueueWaitMeasurable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  ASSERT_TRUE(record.has_run_queue_wait_seconds());
  EXPECT_GE(record.run_queue_wait_seconds(), 0.0);
  // Other jobs on the machine may take the CPU for a while: then that is the waiting time.
  EXPECT_NEAR(record.cpu_seconds() + record.run_queue_wait_seconds(), record.duration_seconds(),
              0.25 * record.duration_seconds());
}

TEST(TrackChunkTest, RunQueueWaitCanBeSkippedAndIsAbsentThen) {
  ChunkTrackingOptions options;
  options.measure_run_queue_wait = false;
  v1::ChunkRecord record = TrackChunk(
      TtbarChunk(), [] { BusyCpu(1'000'000); }, options);
  EXPECT_FALSE(record.has_run_queue_wait_seconds());
  EXPECT_GT(record.cpu_seconds(), 0.0);
}

TEST(TrackChunkTest, BackToBackShortChunksReuseTheRunQueueReading) {
  if (!RunQueueWaitMeasurable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  constexpr int kChunks = 200;
  const int64_t preads_before = instrumentation_internal::RunDelayPreadsOnThisThread();
  for (int i = 0; i < kChunks; ++i) {
    const v1::ChunkRecord record = TrackChunk(TtbarChunk(), [] {});
    ASSERT_TRUE(record.has_run_queue_wait_seconds());
    EXPECT_LE(record.cpu_seconds() + record.run_queue_wait_seconds(), record.duration_seconds());
  }
  // Two preads per chunk without reuse; a reading is reused for up to ~1 ms while the thread
  // stays on its CPU, so even a few preemptions leave far fewer.
  EXPECT_LT(instrumentation_internal::RunDelayPreadsOnThisThread() - preads_before, kChunks);
}

TEST(TrackChunkTest, AChunkOfAMillisecondOrMoreAlwaysReadsTheRunQueueDelay) {
  if (!RunQueueWaitMeasurable()) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  TrackChunk(TtbarChunk(), [] {});  // a fresh reading to reuse
  const int64_t preads_before = instrumentation_internal::RunDelayPreadsOnThisThread();
  const v1::ChunkRecord record = TrackChunk(TtbarChunk(), [] { BusyCpu(2'000'000); });
  EXPECT_GE(instrumentation_internal::RunDelayPreadsOnThisThread() - preads_before, 1)
      << "the end reading is 2 ms after the last one: beyond the 1/1000 clock-rate margin";
  EXPECT_TRUE(record.has_run_queue_wait_seconds());
}

TEST(TrackChunkTest, RecordsMemoryReadings) {
  v1::ChunkRecord record = TrackChunk(TtbarChunk(), [] {});
  EXPECT_GT(record.memory_before_bytes(), 0);
  EXPECT_GT(record.memory_after_bytes(), 0);
  EXPECT_GE(record.memory_peak_bytes(), record.memory_before_bytes());
  EXPECT_GE(record.memory_peak_bytes(), record.memory_after_bytes());
}

TEST(TrackChunkTest, BytesReadAreThoseOfTheChunkOnly) {
  RecordBytesRead(999, 999);  // before the chunk: not counted
  v1::ChunkRecord record = TrackChunk(TtbarChunk(), [] {
    RecordBytesRead(100, 300);
    RecordBytesRead(20, 0);
  });
  RecordBytesRead(999, 999);
  EXPECT_EQ(record.compressed_bytes_read(), 120);
  EXPECT_EQ(record.uncompressed_bytes_read(), 300);
}

TEST(TrackChunkTest, WorkerDefaultsToHostAndPidAndCanBeGiven) {
  EXPECT_EQ(TrackChunk(TtbarChunk(), [] {}).worker(), HostColonPid());
  ChunkTrackingOptions options;
  options.worker = "tcp://10.0.0.7:40123";
  EXPECT_EQ(TrackChunk(
                TtbarChunk(), [] {}, options)
                .worker(),
            "tcp://10.0.0.7:40123");
}

TEST(TrackChunkTest, AForkedChildNamesItselfWithItsOwnPid) {
  ASSERT_EQ(TrackChunk(TtbarChunk(), [] {}).worker(), HostColonPid());  // known to the parent
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool own_pid = TrackChunk(TtbarChunk(), [] {}).worker() == HostColonPid();
    ::_exit(own_pid ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child named its parent";
}

TEST(TrackChunkTest, ThrowingFnGivesFailedRecordWithTheMessageAndTheRunGoesOn) {
  v1::ChunkRecord failed = TrackChunk(TtbarChunk(), [] {
    ScopedTimer timer("before_the_throw");
    RecordBytesRead(42, 84);
    throw std::runtime_error("bad branch Jet_pt in chunk 7");
  });
  EXPECT_EQ(failed.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(failed.error_text(), "bad branch Jet_pt in chunk 7");
  EXPECT_EQ(failed.dataset(), "ttbar");
  EXPECT_EQ(failed.compressed_bytes_read(), 42);
  EXPECT_GE(failed.end_unix_ns(), failed.start_unix_ns());
  // Sections closed during unwinding are kept.
  ASSERT_EQ(failed.sections_size(), 1);
  EXPECT_EQ(failed.sections(0).name(), "before_the_throw");

  // The thread is no longer inside a chunk, and the next chunk is clean and OK.
  { ScopedTimer stray("stray"); }
  v1::ChunkRecord next = TrackChunk(TtbarChunk(), [] { ScopedTimer timer("next"); });
  EXPECT_EQ(next.status(), v1::CHUNK_STATUS_OK);
  EXPECT_EQ(next.error_text(), "");
  ASSERT_EQ(next.sections_size(), 1);
  EXPECT_EQ(next.sections(0).name(), "next");
}

TEST(TrackChunkTest, NonStandardExceptionIsUnknown) {
  v1::ChunkRecord failed = TrackChunk(TtbarChunk(), [] { throw 17; });
  EXPECT_EQ(failed.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(failed.error_text(), "unknown exception");
}

TEST(TrackChunkTest, StopPolicyThrowsChunkFailedErrorCarryingTheRecordAndTheCause) {
  ChunkTrackingOptions options;
  options.failure_policy = FailurePolicy::kStop;
  try {
    TrackChunk(
        TtbarChunk(), [] { throw std::out_of_range("entry 2000 beyond 1500"); }, options);
    FAIL() << "expected ChunkFailedError";
  } catch (const ChunkFailedError& e) {
    EXPECT_EQ(e.record().status(), v1::CHUNK_STATUS_FAILED);
    EXPECT_EQ(e.record().error_text(), "entry 2000 beyond 1500");
    EXPECT_EQ(e.record().file(), "root://eos/ttbar_1.root");
    EXPECT_EQ(e.record().entry_start(), 1000);
    EXPECT_GT(e.record().end_unix_ns(), 0);
    EXPECT_THAT(e.what(), HasSubstr("entry 2000 beyond 1500"));
    EXPECT_THAT(e.what(), HasSubstr("root://eos/ttbar_1.root"));
    EXPECT_THROW(std::rethrow_exception(e.cause()), std::out_of_range);
  }
  try {
    TrackChunk(
        TtbarChunk(), [] { throw 3; }, options);
    FAIL() << "expected ChunkFailedError";
  } catch (const ChunkFailedError& e) {
    EXPECT_EQ(e.record().error_text(), "unknown exception");
    EXPECT_THROW(std::rethrow_exception(e.cause()), int);
  }
  // Not inside a chunk any more.
  v1::ChunkRecord next = TrackChunk(
      TtbarChunk(), [] {}, options);
  EXPECT_EQ(next.status(), v1::CHUNK_STATUS_OK);
  EXPECT_THAT(next.sections(), IsEmpty());
}

TEST(TrackChunkTest, AcceptsConstAndMoveOnlyCallablesAndIgnoresReturnValues) {
  const auto constant = [] { return 5; };
  EXPECT_EQ(TrackChunk(TtbarChunk(), constant).status(), v1::CHUNK_STATUS_OK);
  auto owned = std::make_unique<int>(0);
  TrackChunk(TtbarChunk(), [p = std::move(owned)]() mutable { *p = 1; });
}

// A histogram-like output: adds bin by bin.
struct Counts {
  std::map<std::string, int64_t> bins;
  Counts& operator+=(const Counts& other) {
    for (const auto& [name, count] : other.bins) bins[name] += count;
    return *this;
  }
};

TrackedOutput<Counts> OneChunkOutput(const std::string& dataset, int64_t events) {
  TrackedOutput<Counts> tracked;
  tracked.output.bins[dataset] = events;
  v1::ChunkRecord record;
  record.set_dataset(dataset);
  record.set_events(events);
  tracked.chunk_records.push_back(record);
  return tracked;
}

std::vector<std::string> Datasets(const std::vector<v1::ChunkRecord>& records) {
  std::vector<std::string> datasets;
  for (const auto& record : records) datasets.push_back(record.dataset());
  return datasets;
}

TEST(TrackedOutputTest, MergingAddsOutputsAndConcatenatesRecords) {
  TrackedOutput<Counts> total = OneChunkOutput("ttbar", 10);
  total += OneChunkOutput("ttbar", 5);  // rvalue
  const TrackedOutput<Counts> wjets = OneChunkOutput("wjets", 7);
  total += wjets;  // lvalue: copied
  EXPECT_EQ(total.output.bins["ttbar"], 15);
  EXPECT_EQ(total.output.bins["wjets"], 7);
  EXPECT_THAT(Datasets(total.chunk_records), ElementsAre("ttbar", "ttbar", "wjets"));
  EXPECT_EQ(wjets.chunk_records.size(), 1u);
}

TEST(TrackedOutputTest, MergingWithItselfDoublesBoth) {
  TrackedOutput<int> tracked;
  tracked.output = 4;
  tracked.chunk_records.resize(2);
  tracked.chunk_records[0].set_dataset("a");
  tracked.chunk_records[1].set_dataset("b");
  tracked += tracked;
  EXPECT_EQ(tracked.output, 8);
  EXPECT_THAT(Datasets(tracked.chunk_records), ElementsAre("a", "b", "a", "b"));
  tracked += std::move(tracked);
  EXPECT_EQ(tracked.output, 16);
  EXPECT_EQ(tracked.chunk_records.size(), 8u);
}

TEST(TrackChunksTest, WrapsAProcessorAndRecordsEachChunk) {
  auto tracked = TrackChunks([](const ChunkMetadata& metadata) {
    ScopedTimer timer("fill");
    RecordBytesRead(metadata.events * 10, metadata.events * 30);
    Counts counts;
    counts.bins[metadata.dataset] = metadata.events;
    return counts;
  });
  TrackedOutput<Counts> total;
  total += tracked(TtbarChunk());
  ChunkMetadata second = TtbarChunk();
  second.entry_start = 1500;
  second.entry_stop = 1600;
  second.events = 100;
  total += tracked(second);
  EXPECT_EQ(total.output.bins["ttbar"], 600);
  ASSERT_EQ(total.chunk_records.size(), 2u);
  EXPECT_EQ(total.chunk_records[0].entry_start(), 1000);
  EXPECT_EQ(total.chunk_records[1].entry_start(), 1500);
  EXPECT_EQ(total.chunk_records[1].compressed_bytes_read(), 1000);
  EXPECT_EQ(total.chunk_records[1].sections(0).name(), "fill");
  EXPECT_EQ(total.chunk_records[1].status(), v1::CHUNK_STATUS_OK);
}

TEST(TrackChunksTest, FailedChunkGivesDefaultOutputAndFailedRecord) {
  const auto tracked = TrackChunks([](const ChunkMetadata& metadata) -> Counts {
    if (metadata.dataset == "broken") throw std::runtime_error("cannot open " + metadata.file);
    Counts counts;
    counts.bins[metadata.dataset] = metadata.events;
    return counts;
  });
  ChunkMetadata broken{"broken", "root://eos/missing.root", "u2", 0, 10, 10};
  TrackedOutput<Counts> total = tracked(TtbarChunk());
  TrackedOutput<Counts> failed = tracked(broken);
  EXPECT_THAT(failed.output.bins, IsEmpty());
  ASSERT_EQ(failed.chunk_records.size(), 1u);
  EXPECT_EQ(failed.chunk_records[0].status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(failed.chunk_records[0].error_text(), "cannot open root://eos/missing.root");
  total += std::move(failed);
  EXPECT_EQ(total.output.bins.size(), 1u);
  EXPECT_EQ(total.chunk_records.size(), 2u);
}

TEST(TrackChunksTest, PassesOptionsAndSupportsStatefulProcessors) {
  struct CountingProcessor {
    int calls = 0;
    int operator()(const ChunkMetadata&) { return ++calls; }  // not const
  };
  ChunkTrackingOptions options;
  options.worker = "worker-3";
  auto tracked = TrackChunks(CountingProcessor{}, options);
  EXPECT_EQ(tracked(TtbarChunk()).output, 1);
  TrackedOutput<int> second = tracked(TtbarChunk());
  EXPECT_EQ(second.output, 2);
  EXPECT_EQ(second.chunk_records[0].worker(), "worker-3");

  ChunkTrackingOptions stop;
  stop.failure_policy = FailurePolicy::kStop;
  auto throwing =
      TrackChunks([](const ChunkMetadata&) -> int { throw std::logic_error("no"); }, stop);
  EXPECT_THROW(throwing(TtbarChunk()), ChunkFailedError);
}

}  // namespace
}  // namespace roastcoffea
