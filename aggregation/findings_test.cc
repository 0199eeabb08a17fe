// Each finding rule on a measurement made to trigger it, and on one that must not.
#include "aggregation/findings.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int64_t kStart = 1795335303LL * 1000000000LL;
constexpr int64_t kMiB = 1 << 20;

// A run shaped by the callbacks: `slots` worker threads of one process, each running
// `chunks_per_slot(slot)` chunks back to back (`gap` apart) from `slot_start(slot)` seconds,
// chunk k lasting `duration(slot, k)` seconds, 95 % on CPU and 1 % waiting for a CPU.
struct RunShape {
  int slots = 2;
  std::function<int(int)> chunks_per_slot = [](int) { return 20; };
  std::function<double(int)> slot_start = [](int) { return 0.0; };
  std::function<double(int, int)> duration = [](int slot, int k) {
    return 0.2 * (1.0 + 0.02 * ((7 * k + slot) % 5));
  };
  double gap = 50e-6;
  double cpu_share = 0.95;
  double run_queue_share = 0.01;
  bool in_process = true;
  double usable_cpus = 2;
};

v1::Measurement MakeRun(const RunShape& shape) {
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_backend(shape.in_process ? "threadpool" : "dask");
  metadata.mutable_host_facts()->set_online_cpus(2);
  metadata.mutable_host_facts()->set_usable_cpus(shape.usable_cpus);
  metadata.mutable_analysis_build()->set_build_mode("opt");
  metadata.mutable_analysis_build()->set_optimized(true);
  int64_t end = kStart;
  int64_t events = 0;
  for (int slot = 0; slot < shape.slots; ++slot) {
    double t = shape.slot_start(slot);
    for (int k = 0; k < shape.chunks_per_slot(slot); ++k) {
      const double d = shape.duration(slot, k);
      v1::ChunkRecord& chunk = *m.add_chunks();
      chunk.set_dataset(slot % 2 == 0 ? "qcd" : "zprime");
      chunk.set_file(absl::StrCat("/data/store/very/long/path/file", slot, "_", k, ".root"));
      chunk.set_entry_start(0);
      chunk.set_entry_stop(25000);
      chunk.set_events(25000);
      chunk.set_start_unix_ns(kStart + static_cast<int64_t>(t * 1e9));
      chunk.set_end_unix_ns(kStart + static_cast<int64_t>((t + d) * 1e9));
      chunk.set_duration_seconds(d);
      chunk.set_cpu_seconds(shape.cpu_share * d);
      chunk.set_run_queue_wait_seconds(shape.run_queue_share * d);
      chunk.set_worker(shape.in_process ? absl::StrCat("vm:1/thread-", slot)
                                        : absl::StrCat("tcp://10.0.0.", slot, ":4000"));
      chunk.set_thread_index(shape.in_process ? slot : 0);
      chunk.set_status(v1::CHUNK_STATUS_OK);
      events += 25000;
      end = std::max(end, chunk.end_unix_ns());
      t += d + shape.gap;
    }
  }
  metadata.set_elapsed_seconds(1e-9 * static_cast<double>(end - kStart) + 0.01);
  metadata.mutable_start_time()->set_seconds(kStart / 1000000000);
  metadata.mutable_end_time()->set_seconds(end / 1000000000 + 1);
  m.mutable_report()->set_events(events);
  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_workers_share_process(shape.in_process);
  for (int slot = 0; slot < shape.slots; ++slot) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(shape.in_process ? absl::StrCat("vm:1/thread-", slot)
                                       : absl::StrCat("tcp://10.0.0.", slot, ":4000"));
    for (int64_t at : {kStart, end}) {
      series.add_time_unix_ns(at);
      series.add_cores(1);
      series.add_memory_bytes(100.0 * kMiB);
    }
  }
  return m;
}

v1::AggregatedMetrics Aggregated(const v1::Measurement& m, AggregationOptions options = {}) {
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(m, options));
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return metrics.ok() ? *metrics : v1::AggregatedMetrics();
}

std::vector<std::string> Codes(const v1::Measurement& m, AggregationOptions options = {}) {
  std::vector<std::string> codes;
  const v1::AggregatedMetrics metrics = Aggregated(m, options);
  for (const v1::Finding& f : metrics.findings()) codes.push_back(f.code());
  return codes;
}

const v1::Finding& Only(const v1::AggregatedMetrics& metrics, const std::string& code) {
  for (const v1::Finding& f : metrics.findings()) {
    if (f.code() == code) return f;
  }
  ADD_FAILURE() << "no finding " << code;
  return v1::Finding::default_instance();
}

TEST(FindingsTest, HealthyRunHasNone) {
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun({}));
  EXPECT_TRUE(metrics.findings_evaluated());
  EXPECT_THAT(metrics.findings(), IsEmpty());
}

TEST(FindingsTest, CpuStarvationFromRunQueueDelay) {
  RunShape shape;
  shape.cpu_share = 0.55;
  shape.run_queue_share = 0.40;
  shape.slots = 3;
  shape.usable_cpus = 1;
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  const v1::Finding& f = Only(metrics, "cpu_starvation");
  EXPECT_EQ(f.severity(), v1::Finding::SEVERITY_CRITICAL);
  EXPECT_THAT(f.title(), HasSubstr("40%"));
  EXPECT_THAT(f.evidence(), HasSubstr("3 worker threads on 1 usable CPU."));
  EXPECT_THAT(f.suggestion(), HasSubstr("--threads=1"));
  EXPECT_EQ(f.numbers(0).key(), "run_queue_wait_fraction");
  EXPECT_NEAR(f.numbers(0).value(), 0.40, 1e-9);
}

TEST(FindingsTest, CpuStarvationBelowThresholdIsNotAFinding) {
  RunShape shape;
  shape.run_queue_share = 0.09;
  shape.cpu_share = 0.9;
  EXPECT_THAT(Codes(MakeRun(shape)), Not(::testing::Contains("cpu_starvation")));
}

TEST(FindingsTest, OversubscribedWithoutRunQueueMeasurement) {
  RunShape shape;
  shape.usable_cpus = 1;
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.clear_run_queue_wait_seconds();
  EXPECT_THAT(Codes(m), ElementsAre("cpu_starvation"));
  shape.usable_cpus = 2;
  m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.clear_run_queue_wait_seconds();
  EXPECT_THAT(Codes(m), IsEmpty());
}

TEST(FindingsTest, IoBound) {
  RunShape shape;
  shape.cpu_share = 0.5;
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  ASSERT_EQ(metrics.findings_size(), 1);
  EXPECT_EQ(metrics.findings(0).code(), "io_bound");
  EXPECT_THAT(metrics.findings(0).title(), HasSubstr("blocked 49%"));
  shape.cpu_share = 0.75;  // blocked 24 %
  EXPECT_THAT(Codes(MakeRun(shape)), IsEmpty());
}

// The chunks' blocked time is I/O only when they read: without any byte read the title does not
// name I/O, and says so; with bytes read it does, and gives them.
TEST(FindingsTest, IoBoundNamesIoOnlyWhenTheChunksRead) {
  RunShape shape;
  shape.cpu_share = 0.5;
  v1::Measurement m = MakeRun(shape);
  const v1::Finding blocked = Only(Aggregated(m), "io_bound");
  EXPECT_THAT(blocked.title(), HasSubstr("Blocked: chunks were blocked 49%"));
  EXPECT_THAT(blocked.title(), Not(HasSubstr("I/O")));
  EXPECT_THAT(blocked.evidence(), HasSubstr("no bytes read were recorded"));
  EXPECT_THAT(blocked.suggestion(), HasSubstr("Find what the chunks wait on"));
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_compressed_bytes_read(kMiB);
  const v1::Finding io = Only(Aggregated(m), "io_bound");
  EXPECT_THAT(io.title(), HasSubstr("I/O-bound: chunks were blocked 49%"));
  EXPECT_THAT(io.evidence(), HasSubstr("the chunks read 40.0 MiB"));
  EXPECT_THAT(io.suggestion(), HasSubstr("more worker threads than CPUs can overlap"));
}

// Chunks blocked 30 % and waiting for a CPU 40 % of their time on 3 threads and 1 CPU:
// cpu_starvation says to use fewer threads, and io_bound must not advise more.
TEST(FindingsTest, IoBoundDoesNotAdviseMoreThreadsWhenTheCpusWereOversubscribed) {
  RunShape shape;
  shape.slots = 3;
  shape.usable_cpus = 1;
  shape.cpu_share = 0.29;
  shape.run_queue_share = 0.40;
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_compressed_bytes_read(kMiB);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Only(metrics, "cpu_starvation").suggestion(), HasSubstr("--threads=1"));
  const v1::Finding& io = Only(metrics, "io_bound");
  EXPECT_THAT(io.suggestion(), Not(HasSubstr("more worker threads than CPUs can overlap")));
  EXPECT_THAT(io.suggestion(), HasSubstr("not more worker threads"));
}

// A Dask run without chunk CPU: the engine's thread-cpu / thread-noncpu split decides.
TEST(FindingsTest, IoBoundFromTheEnginesThreadTimeSplit) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    chunk.clear_cpu_seconds();
    chunk.clear_run_queue_wait_seconds();
  }
  v1::Span& span = *m.add_spans();
  const auto add = [&](const char* activity, double value) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context("execute");
    metric.set_task_prefix("process");
    metric.set_activity(activity);
    metric.set_unit("seconds");
    metric.set_value(value);
  };
  add("thread-cpu", 2.0);
  add("thread-noncpu", 6.0);  // 75 % off CPU
  AggregationOptions options;
  options.processor_task_patterns = {"process"};
  const v1::AggregatedMetrics metrics = Aggregated(m, options);
  const v1::Finding& f = Only(metrics, "io_bound");
  EXPECT_THAT(f.title(), HasSubstr("off CPU 75%"));
  EXPECT_THAT(f.evidence(), HasSubstr("thread-cpu / thread-noncpu"));
  span.mutable_metrics(1)->set_value(0.5);  // 20 % off CPU: no finding
  EXPECT_THAT(Codes(m, options), Not(::testing::Contains("io_bound")));
}

TEST(FindingsTest, StragglersNameTheSlowestChunk) {
  RunShape shape;
  shape.duration = [](int slot, int k) { return slot == 0 && k == 0 ? 1.0 : 0.2; };
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  EXPECT_THAT(Codes(MakeRun(shape)), ElementsAre("stragglers"));
  const v1::Finding& f = Only(metrics, "stragglers");
  EXPECT_THAT(f.title(), HasSubstr("5.0x the median"));
  // Base names, never the absolute path.
  EXPECT_THAT(f.evidence(), HasSubstr("file0_0.root [0, 25000) (qcd, on vm:1/thread-0) 1.00 s"));
  EXPECT_THAT(f.evidence(), Not(HasSubstr("/data/store")));

  shape.duration = [](int slot, int k) { return slot == 0 && k == 0 ? 0.5 : 0.2; };
  EXPECT_THAT(Codes(MakeRun(shape)), IsEmpty());
}

// The slowest chunk (slot 0, chunk 0) of a run of 0.2 s chunks takes 1 s, split as given.
v1::Measurement OneStraggler(double cpu, double run_queue) {
  RunShape shape;
  shape.duration = [](int slot, int k) { return slot == 0 && k == 0 ? 1.0 : 0.2; };
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_compressed_bytes_read(kMiB);
  v1::ChunkRecord& slowest = *m.mutable_chunks(0);
  slowest.set_cpu_seconds(cpu);
  slowest.set_run_queue_wait_seconds(run_queue);
  return m;
}

TEST(FindingsTest, StragglerWaitingForACpuPointsToStarvationNotFiles) {
  const v1::Measurement m = OneStraggler(0.05, 0.9);
  // Run-queue share of all chunk time: 39 chunks x 0.2 s x 1 % + 0.9 s over 39 x 0.2 + 1 s.
  const double share = (39 * 0.2 * 0.01 + 0.9) / (39 * 0.2 + 1.0);
  ASSERT_GE(share, 0.10);  // so cpu_starvation fires first
  const v1::AggregatedMetrics metrics = Aggregated(m);
  const v1::Finding& f = Only(metrics, "stragglers");
  EXPECT_THAT(f.evidence(), HasSubstr("CPU 50.0 ms, waiting for a CPU 90%, blocked 5.0%"));
  EXPECT_THAT(f.suggestion(), HasSubstr("waited for a CPU (90%"));
  EXPECT_THAT(f.suggestion(), HasSubstr("see the CPU starvation finding"));
  EXPECT_THAT(f.suggestion(), HasSubstr("splitting files will not help"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("split large")));
}

TEST(FindingsTest, StragglerOnCpuBlamesExpensiveEvents) {
  const v1::Finding f = Only(Aggregated(OneStraggler(0.95, 0.01)), "stragglers");
  EXPECT_THAT(f.suggestion(), HasSubstr("on CPU 95% of their time: their events are expensive"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("waited for a CPU")));
}

TEST(FindingsTest, StragglerBlockedOnALargeReadBlamesTheFile) {
  v1::Measurement m = OneStraggler(0.1, 0.01);
  m.mutable_chunks(0)->set_compressed_bytes_read(10 * kMiB);  // 10x the median 1 MiB
  const v1::Finding f = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(f.suggestion(), HasSubstr("blocked 89% of their time and read 10.0 MiB each "
                                        "against a median 1.00 MiB: large files"));
  // The same wait without reading more: the storage, not the file's size.
  const v1::Finding same = Only(Aggregated(OneStraggler(0.1, 0.01)), "stragglers");
  EXPECT_THAT(same.suggestion(), HasSubstr("without reading more than the others"));
}

// Without CPU time (an engine that reports none) where the stragglers' time went is unknown:
// "large files" is said only where they had more events or bytes than the others.
TEST(FindingsTest, StragglerOfUnknownCauseBlamesLargeFilesOnlyWhenTheyWereLarger) {
  v1::Measurement m = OneStraggler(0.1, 0.01);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    chunk.set_cpu_seconds(0);
    chunk.clear_run_queue_wait_seconds();
  }
  const v1::Finding same = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(same.suggestion(), HasSubstr("where the slowest chunks' time went is not known"));
  EXPECT_THAT(same.suggestion(), HasSubstr("no larger than the others"));
  EXPECT_THAT(same.suggestion(), Not(HasSubstr("large ")));
  EXPECT_THAT(same.suggestion(), Not(HasSubstr("split")));

  m.mutable_chunks(0)->set_events(100000);  // 4x the median 25000
  const v1::Finding larger = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(larger.suggestion(),
              HasSubstr("larger than the others (100000 events each against a median 25000): "
                        "split those files into smaller chunks"));

  m.mutable_chunks(0)->set_events(25000);
  m.mutable_chunks(0)->set_compressed_bytes_read(3 * kMiB);  // 3x the median 1 MiB
  EXPECT_THAT(Only(Aggregated(m), "stragglers").suggestion(),
              HasSubstr("(read 3.00 MiB each against a median 1.00 MiB)"));
}

// Blocked stragglers in a run that recorded no byte read (a sleep, a lock, a remote call): the
// data do not say storage, so the advice does not blame it.
TEST(FindingsTest, BlockedStragglerWithoutAnyReadDoesNotBlameStorage) {
  v1::Measurement m = OneStraggler(0.1, 0.01);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.clear_compressed_bytes_read();
  const v1::Finding f = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(f.suggestion(), HasSubstr("blocked 89% of their time, and no bytes read were "
                                        "recorded: find what they waited on"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("storage")));
}

TEST(FindingsTest, StragglerThatWasARetrySaysSo) {
  v1::Measurement m = OneStraggler(0.95, 0.01);
  m.mutable_chunks(0)->set_attempt(1);
  const v1::Finding f = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(f.evidence(), HasSubstr("attempt 2"));
  EXPECT_THAT(f.suggestion(), HasSubstr("1 named chunk was a retry"));
}

TEST(FindingsTest, ThreadZeroIsNamedLikeTheOtherThreads) {
  v1::Measurement m = OneStraggler(0.95, 0.01);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_worker("vm:4395");
  const v1::Finding f = Only(Aggregated(m), "stragglers");
  EXPECT_THAT(f.evidence(), HasSubstr("(qcd, on vm:4395/thread-0)"));
}

const v1::RuleEvaluation* Evaluation(const v1::AggregatedMetrics& metrics,
                                     const std::string& code) {
  for (const v1::RuleEvaluation& e : metrics.rule_evaluations()) {
    if (e.code() == code) return &e;
  }
  return nullptr;
}

// A value the engine's log itself holds (a TaskVine timer that underflowed) cannot be fixed by
// rerunning with the engine reachable: the finding says so instead.
TEST(FindingsTest, ImpossibleValuesInTheLogAreNoReasonToRerun) {
  v1::Measurement m = MakeRun({});
  v1::Warning& w = *m.add_warnings();
  w.set_code("taskvine_impossible_value");
  w.set_message("1 impossible value rejected (kept out of every figure): transactions line 215");
  const v1::Finding f = Only(Aggregated(m), "data_lost");
  EXPECT_THAT(f.title(), HasSubstr("Impossible values"));
  EXPECT_THAT(f.suggestion(), HasSubstr("Nothing to rerun"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("engine reachable")));
  // A real loss beside it still asks for the rerun.
  m.add_warnings()->set_code("workers_lost");
  EXPECT_THAT(Only(Aggregated(m), "data_lost").suggestion(), HasSubstr("engine reachable"));
}

// Every rule of findings.h, not only some, records its state: "none fired" then covers them all.
TEST(FindingsTest, EveryRuleRecordsAState) {
  const v1::AggregatedMetrics healthy = Aggregated(MakeRun({}));
  for (const char* code :
       {"cpu_starvation", "io_bound", "stragglers", "idle_tail", "load_imbalance",
        "engine_overhead", "tiny_chunks", "read_amplification", "failed_chunks", "retried_chunks",
        "data_lost", "memory_pressure", "debug_build"}) {
    EXPECT_NE(Evaluation(healthy, code), nullptr) << code;
  }
  // Without chunk records the chunk rules say so.
  v1::Measurement empty = MakeRun({});
  empty.clear_chunks();
  const v1::AggregatedMetrics without = Aggregated(empty);
  for (const char* code : {"failed_chunks", "retried_chunks", "load_imbalance"}) {
    const v1::RuleEvaluation* e = Evaluation(without, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_FALSE(e->evaluated()) << code;
    EXPECT_FALSE(e->reason().empty()) << code;
  }
}

TEST(FindingsTest, EveryOwnedRuleRecordsWhetherItWasEvaluated) {
  const v1::AggregatedMetrics healthy = Aggregated(MakeRun({}));
  for (const char* code :
       {"cpu_starvation", "io_bound", "stragglers", "tiny_chunks", "data_lost", "debug_build"}) {
    const v1::RuleEvaluation* e = Evaluation(healthy, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_TRUE(e->evaluated()) << code;
    EXPECT_FALSE(e->fired()) << code;
  }
  // No memory limit was tracked and nothing spilled: memory pressure could not be checked.
  const v1::RuleEvaluation* memory = Evaluation(healthy, "memory_pressure");
  ASSERT_NE(memory, nullptr);
  EXPECT_FALSE(memory->evaluated());
  EXPECT_EQ(memory->reason(), "no memory limit or spill figures");

  // Almost nothing measured (a Dask run without chunk records, CPU or build info).
  v1::Measurement bare;
  bare.mutable_metadata()->set_elapsed_seconds(10);
  const v1::AggregatedMetrics metrics = Aggregated(bare);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"cpu_starvation", "no run-queue figures or thread count"},
      {"io_bound", "no CPU figures"},
      {"stragglers", "no chunk records"},
      {"tiny_chunks", "no chunk records"},
      {"memory_pressure", "no memory limit or spill figures"},
      {"debug_build", "no build info"}};
  for (const auto& [code, reason] : expected) {
    const v1::RuleEvaluation* e = Evaluation(metrics, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_FALSE(e->evaluated()) << code;
    EXPECT_FALSE(e->fired()) << code;
    EXPECT_EQ(e->reason(), reason) << code;
  }
  ASSERT_NE(Evaluation(metrics, "data_lost"), nullptr);
  EXPECT_TRUE(Evaluation(metrics, "data_lost")->evaluated());
}

TEST(FindingsTest, DistributionRulesNeedTenSuccessfulChunks) {
  RunShape shape;
  shape.chunks_per_slot = [](int) { return 4; };  // 8 chunks
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  for (const char* code : {"stragglers", "tiny_chunks"}) {
    const v1::RuleEvaluation* e = Evaluation(metrics, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_FALSE(e->evaluated()) << code;
    EXPECT_EQ(e->reason(), "fewer than 10 successful chunks") << code;
  }
}

// A real run (`collect --files_per_dataset=1 --chunk_size=50000`): 3 chunks on 2 threads, one
// thread ran two of them and "the busiest worker slot ran 1.31x the mean chunk time", pointing
// to idle tail and stragglers findings that did not exist. Three chunks cannot spread evenly
// over two threads: the rule is not evaluated on so few, and says why; the idle tail still is.
TEST(FindingsTest, LoadImbalanceNeedsTenSuccessfulChunks) {
  RunShape shape;
  shape.chunks_per_slot = [](int slot) { return slot == 0 ? 2 : 1; };
  shape.duration = [](int, int) { return 0.015; };
  v1::Measurement m = MakeRun(shape);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Codes(m), Not(::testing::Contains("load_imbalance")));
  const v1::RuleEvaluation* e = Evaluation(metrics, "load_imbalance");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
  EXPECT_EQ(e->reason(), "fewer than 10 successful chunks");
  EXPECT_TRUE(Evaluation(metrics, "idle_tail")->evaluated());
  // Its 15 ms idle tail is evaluated too, and below kIdleTailMinSeconds: no finding.
  EXPECT_THAT(Codes(m), Not(::testing::Contains("idle_tail")));
}

// The thread-pool advice names the idle tail and stragglers findings only when they fired.
TEST(FindingsTest, LoadImbalanceAdvicePointsOnlyToFindingsThatFired) {
  RunShape shape;
  shape.chunks_per_slot = [](int slot) { return slot == 0 ? 20 : 10; };
  v1::Measurement m = MakeRun(shape);
  int64_t shift = 0;  // slot 1 idles between its chunks: both slots span the run
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (chunk.worker() != "vm:1/thread-1") continue;
    chunk.set_start_unix_ns(chunk.start_unix_ns() + shift);
    chunk.set_end_unix_ns(chunk.end_unix_ns() + shift);
    shift += 200'000'000;
  }
  const v1::AggregatedMetrics metrics = Aggregated(m);
  ASSERT_THAT(Codes(m), ElementsAre("load_imbalance"));
  EXPECT_THAT(Only(metrics, "load_imbalance").suggestion(), Not(HasSubstr("see the")));
}

TEST(FindingsTest, FiredRulesAreMarkedFired) {
  const v1::AggregatedMetrics metrics = Aggregated(OneStraggler(0.95, 0.01));
  ASSERT_NE(Evaluation(metrics, "stragglers"), nullptr);
  EXPECT_TRUE(Evaluation(metrics, "stragglers")->fired());
  EXPECT_FALSE(Evaluation(metrics, "tiny_chunks")->fired());
}

TEST(FindingsTest, WorkQueueLogLimitIsNotAdvisedAsARerun) {
  v1::Measurement m = MakeRun({});
  (*m.mutable_metadata()->mutable_configuration())["backend"] = "workqueue";
  v1::Warning& w = *m.add_warnings();
  w.set_code("taskvine_log");
  w.set_message(
      "96 retrieved attempts have no worker start/end times; their execution time is "
      "WAITING_RETRIEVAL - RUNNING (includes waiting at the worker)");
  const v1::Finding f = Only(Aggregated(m), "data_lost");
  EXPECT_EQ(f.severity(), v1::Finding::SEVERITY_INFO);
  EXPECT_THAT(f.evidence(), HasSubstr("The Work Queue 9.9 transactions log never records them"));
  EXPECT_THAT(f.suggestion(), HasSubstr("a limit of the log"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("rerun with the engine reachable")));
  // A real loss beside it still asks for a rerun.
  v1::Warning& lost = *m.add_warnings();
  lost.set_code("workers_lost");
  lost.set_message("2 workers disconnected");
  const v1::Finding g = Only(Aggregated(m), "data_lost");
  EXPECT_EQ(g.severity(), v1::Finding::SEVERITY_WARNING);
  EXPECT_THAT(g.suggestion(), HasSubstr("rerun with the engine reachable"));
}

TEST(FindingsTest, ReadAmplificationWhenChunksReReadTheirFiles) {
  // 20 chunks per file of 2 slots, each chunk alone in its file: give every chunk's file a
  // size and a read: 4 MiB read of a 1 MiB file is 4x; 1.2 MiB of 1 MiB is 1.2x.
  for (const auto& [read, fires] :
       {std::pair<int64_t, bool>{4 * kMiB, true}, std::pair<int64_t, bool>{kMiB * 6 / 5, false}}) {
    v1::Measurement m = MakeRun({});
    (*m.mutable_metadata()->mutable_configuration())["backend"] = "threadpool";
    for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
      chunk.set_compressed_bytes_read(read);
      chunk.set_file_bytes(kMiB);
    }
    const double ratio = static_cast<double>(read) / kMiB;
    ASSERT_EQ(ratio >= 1.5, fires);
    const v1::AggregatedMetrics metrics = Aggregated(m);
    EXPECT_DOUBLE_EQ(metrics.workflow().read_amplification(), ratio);
    EXPECT_EQ(metrics.workflow().distinct_file_bytes(), 40 * kMiB);
    const v1::RuleEvaluation* e = Evaluation(metrics, "read_amplification");
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->evaluated());
    EXPECT_EQ(e->fired(), fires);
    if (fires) {
      const v1::Finding& f = Only(metrics, "read_amplification");
      EXPECT_THAT(f.title(), HasSubstr("4.0x the bytes their files hold"));
      EXPECT_THAT(f.evidence(), HasSubstr("read 160 MiB from files holding 40.0 MiB"));
      EXPECT_THAT(f.suggestion(), HasSubstr("Use larger chunks (--chunk_size)"));
    }
  }
  // Without bytes read per file the rule says it was not evaluated.
  const v1::AggregatedMetrics unread = Aggregated(MakeRun({}));
  const v1::RuleEvaluation* e = Evaluation(unread, "read_amplification");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
  EXPECT_EQ(e->reason(), "no bytes read per file");
}

TEST(FindingsTest, ChunksWithoutAFileAreNamedByTheirTask) {
  // TaskVine tasks without file metadata: "task 7", not "? [0, 0)".
  RunShape shape;
  shape.in_process = false;
  shape.duration = [](int slot, int k) { return slot == 0 && k == 0 ? 1.0 : 0.2; };
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    chunk.clear_file();
    chunk.set_entry_stop(0);
    chunk.set_task_id(absl::StrCat(chunk.start_unix_ns() % 1000));
  }
  m.mutable_chunks(0)->set_task_id("7");
  m.mutable_chunks(1)->set_status(v1::CHUNK_STATUS_FAILED);
  m.mutable_chunks(1)->set_task_id("8");
  const v1::AggregatedMetrics metrics = Aggregated(m);
  const v1::Finding& stragglers = Only(metrics, "stragglers");
  EXPECT_THAT(stragglers.evidence(), HasSubstr("task 7 (qcd, on tcp://10.0.0.0:4000/thread-0)"));
  EXPECT_THAT(stragglers.evidence(), Not(HasSubstr("[0, 0)")));
  const v1::Finding& failed = Only(metrics, "failed_chunks");
  EXPECT_THAT(failed.evidence(), HasSubstr("Failed: task 8"));
}

TEST(FindingsTest, IdleTailWhenSlotsRunOutOfWorkEarly) {
  // Four slots with equal work joining 0.5 s apart: the first ones idle at the end.
  RunShape shape;
  shape.slots = 4;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.slot_start = [](int slot) { return 0.5 * slot; };
  shape.usable_cpus = 4;
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  EXPECT_THAT(Codes(MakeRun(shape)), ElementsAre("idle_tail"));
  EXPECT_THAT(Only(metrics, "idle_tail").title(), HasSubstr("3 of 4 worker slots"));

  // The last chunk is an ordinary one: the last wave was uneven, smaller chunks are the fix.
  EXPECT_THAT(Only(metrics, "idle_tail").suggestion(), HasSubstr("More, smaller chunks"));

  shape.slot_start = [](int slot) { return 0.02 * slot; };
  EXPECT_THAT(Codes(MakeRun(shape)), IsEmpty());
}

TEST(FindingsTest, IdleTailBehindAFailedChunkBlamesTheFailureNotTheChunkSize) {
  // Four slots of equal work; the last chunk of the run then runs 5 s on slot 3 and is killed.
  RunShape shape;
  shape.slots = 4;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.usable_cpus = 4;
  v1::Measurement m = MakeRun(shape);
  v1::ChunkRecord* last = nullptr;
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (last == nullptr || chunk.end_unix_ns() > last->end_unix_ns()) last = &chunk;
  }
  last->set_end_unix_ns(last->end_unix_ns() + 5'000'000'000);
  last->set_duration_seconds(last->duration_seconds() + 5.0);
  last->set_status(v1::CHUNK_STATUS_FAILED);
  last->set_error_text("task killed: exit code 137\nmore");
  const v1::AggregatedMetrics metrics = Aggregated(m);
  const v1::Finding& tail = Only(metrics, "idle_tail");
  EXPECT_THAT(tail.evidence(), HasSubstr("(failed)."));
  EXPECT_THAT(tail.suggestion(), HasSubstr("The last chunk failed after"));
  EXPECT_THAT(tail.suggestion(), HasSubstr("(task killed: exit code 137)"));
  EXPECT_THAT(tail.suggestion(), Not(HasSubstr("More, smaller chunks")));

  // The same chunk succeeding is a straggler: its own slowness, not the last wave, set the end.
  last->set_status(v1::CHUNK_STATUS_OK);
  last->clear_error_text();
  EXPECT_THAT(Only(Aggregated(m), "idle_tail").suggestion(),
              HasSubstr("The last chunk was a straggler"));

  // Slow because it waited for a CPU most of its time: the contention, not its file.
  last->set_cpu_seconds(0.2);
  last->set_run_queue_wait_seconds(last->duration_seconds() - 0.3);
  EXPECT_THAT(Only(Aggregated(m), "idle_tail").suggestion(),
              HasSubstr("waiting for a CPU on a busy machine"));

  // A retry: its first attempt's loss.
  last->set_attempt(1);
  EXPECT_THAT(Only(Aggregated(m), "idle_tail").suggestion(),
              HasSubstr("The last chunk was a retry"));
}

// A real thread-pool run on a loaded VM (`collect --events_per_file=5000`, 12 chunks of about
// 1 ms): the last chunk took 5.13 ms of which 4.13 ms waiting for a CPU, and the other slots
// waited 4 ms for it. No user notices 4 ms: the tail is below kIdleTailMinSeconds, no finding.
TEST(FindingsTest, IdleTailOfMillisecondsIsNoFinding) {
  RunShape shape;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.duration = [](int, int) { return 0.001; };
  v1::Measurement m = MakeRun(shape);
  v1::ChunkRecord* last = nullptr;
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (last == nullptr || chunk.end_unix_ns() > last->end_unix_ns()) last = &chunk;
  }
  last->set_end_unix_ns(last->end_unix_ns() + 4'000'000);
  last->set_duration_seconds(0.005);
  last->set_cpu_seconds(0.001);
  last->set_run_queue_wait_seconds(0.004);
  m.mutable_metadata()->set_elapsed_seconds(0.03);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Codes(m), Not(::testing::Contains("idle_tail")));
  ASSERT_NE(Evaluation(metrics, "idle_tail"), nullptr);
  EXPECT_TRUE(Evaluation(metrics, "idle_tail")->evaluated());
}

// The same shape in seconds: a last chunk that mostly waited for a CPU is blamed on the
// contention, not on the chunk size ("more, smaller chunks" would only share the wait).
TEST(FindingsTest, IdleTailBehindALastChunkThatWaitedForACpuBlamesTheContention) {
  RunShape shape;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.duration = [](int, int) { return 0.2; };
  v1::Measurement m = MakeRun(shape);
  v1::ChunkRecord* last = nullptr;
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (last == nullptr || chunk.end_unix_ns() > last->end_unix_ns()) last = &chunk;
  }
  last->set_end_unix_ns(last->end_unix_ns() + 1'500'000'000);
  last->set_duration_seconds(1.7);
  last->set_cpu_seconds(0.2);
  last->set_run_queue_wait_seconds(1.5);
  m.mutable_metadata()->set_elapsed_seconds(m.metadata().elapsed_seconds() + 1.5);
  const v1::Finding tail = Only(Aggregated(m), "idle_tail");
  EXPECT_THAT(tail.suggestion(),
              HasSubstr("took 1.70 s, 1.50 s of it waiting for a CPU on a busy machine"));
  EXPECT_THAT(tail.suggestion(), Not(HasSubstr("More, smaller chunks")));
}

// A tail of a second or more that is a small part of a long run (here 1.5 s of a 100 s run whose
// setup and merge took most of it) cannot matter either: below kIdleTailMinRunShare.
TEST(FindingsTest, IdleTailBelowItsShareOfTheRunIsNoFinding) {
  RunShape shape;
  shape.slots = 4;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.slot_start = [](int slot) { return 0.5 * slot; };
  shape.usable_cpus = 4;
  v1::Measurement m = MakeRun(shape);
  ASSERT_THAT(Codes(m), ::testing::Contains("idle_tail"));
  m.mutable_metadata()->set_elapsed_seconds(100);
  EXPECT_THAT(Codes(m), Not(::testing::Contains("idle_tail")));
}

// Every percentage a finding prints, and every number whose unit is "fraction", is at most 100 %.
void ExpectNoShareAbove100(const v1::AggregatedMetrics& metrics) {
  for (const v1::Finding& f : metrics.findings()) {
    for (const std::string& text : {f.title(), f.evidence(), f.suggestion()}) {
      for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + 1)) {
        size_t from = at;
        while (from > 0 && (std::isdigit(static_cast<unsigned char>(text[from - 1])) ||
                            text[from - 1] == '.')) {
          --from;
        }
        if (from == at) continue;
        EXPECT_LE(std::stod(text.substr(from, at - from)), 100.0) << f.code() << ": " << text;
      }
    }
    for (const v1::FindingNumber& n : f.numbers()) {
      if (n.unit() == "fraction") {
        EXPECT_LE(n.value(), 1.0) << f.code() << " " << n.key();
      }
    }
  }
}

// Chunk records whose run-queue wait is 1.5x their wall time (a reader that counted other
// threads' waits; aggregation's invariants warn invalid_share): cpu_starvation printed "waited
// for a CPU 150% of their time" and cpu_contention a cost of 6.24 s in a 4.16 s run. Such a
// wait is no evidence: the rules fall back to what else they know, and no share exceeds 100 %.
TEST(FindingsTest, ImpossibleRunQueueWaitIsNoEvidence) {
  RunShape shape;
  shape.cpu_share = 0.3;
  shape.run_queue_share = 1.5;
  v1::Measurement m = MakeRun(shape);
  m.mutable_chunks(0)->set_duration_seconds(1.0);  // a straggler whose split is read too
  m.mutable_chunks(0)->set_cpu_seconds(0.3);
  m.mutable_chunks(0)->set_run_queue_wait_seconds(1.5);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  ExpectNoShareAbove100(metrics);
  EXPECT_THAT(Codes(m), Not(::testing::Contains("cpu_starvation")));
  EXPECT_THAT(Codes(m), Not(::testing::Contains("cpu_contention")));
  ASSERT_NE(Evaluation(metrics, "cpu_contention"), nullptr);
  EXPECT_FALSE(Evaluation(metrics, "cpu_contention")->evaluated());
  // 2 threads on 2 usable CPUs: starvation is still checked, on the thread count.
  EXPECT_TRUE(Evaluation(metrics, "cpu_starvation")->evaluated());
  // A plausible wait (CPU + wait within the wall time) is evidence as before.
  shape.run_queue_share = 0.6;
  const v1::AggregatedMetrics plausible = Aggregated(MakeRun(shape));
  ExpectNoShareAbove100(plausible);
  EXPECT_THAT(Only(plausible, "cpu_starvation").title(), HasSubstr("60%"));
}

TEST(FindingsTest, LoadImbalance) {
  // Both slots span the run, but one of them is idle between chunks half of the time.
  RunShape shape;
  shape.chunks_per_slot = [](int slot) { return slot == 0 ? 20 : 10; };
  shape.duration = [](int slot, int) { return slot == 0 ? 0.2 : 0.2; };
  v1::Measurement m = MakeRun(shape);
  int64_t shift = 0;
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (chunk.worker() != "vm:1/thread-1") continue;
    chunk.set_start_unix_ns(chunk.start_unix_ns() + shift);
    chunk.set_end_unix_ns(chunk.end_unix_ns() + shift);
    shift += 200'000'000;
  }
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Codes(m), ElementsAre("load_imbalance"));
  // Chunk time less the 1 % each chunk waited for a CPU.
  EXPECT_THAT(Only(metrics, "load_imbalance").evidence(),
              HasSubstr("Chunk time less its wait for a CPU, per slot: busiest vm:1/thread-0 "
                        "3.96 s, least busy vm:1/thread-1 1.98 s"));
  // Threads of one process cannot join late: the advice does not ask.
  EXPECT_THAT(Only(metrics, "load_imbalance").suggestion(), Not(HasSubstr("joined late")));
  EXPECT_THAT(Only(metrics, "load_imbalance").suggestion(), HasSubstr("more, smaller chunks"));
}

// The same real run as above (collect --events_per_file=5000 on a loaded VM): thread-0's chunk
// time was 11.1 ms against thread-1's 6.42 ms (1.27x the mean), but 4.6 ms of thread-0's was
// waiting for a CPU; less that wait both threads worked about 6.4 ms. The contention is
// cpu_starvation's finding; the work was spread evenly.
TEST(FindingsTest, LoadImbalanceThatIsOnlyAWaitForACpuIsNoImbalance) {
  RunShape shape;
  shape.chunks_per_slot = [](int) { return 6; };
  shape.duration = [](int, int) { return 0.001; };
  shape.run_queue_share = 0;
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (chunk.worker() != "vm:1/thread-0" || chunk.end_unix_ns() < kStart + 6'000'000) continue;
    chunk.set_end_unix_ns(chunk.end_unix_ns() + 5'000'000);  // its last chunk: 6 ms, 5 waiting
    chunk.set_duration_seconds(0.006);
    chunk.set_run_queue_wait_seconds(0.005);
  }
  const v1::AggregatedMetrics metrics = Aggregated(m);
  ASSERT_NE(Evaluation(metrics, "load_imbalance"), nullptr);
  EXPECT_TRUE(Evaluation(metrics, "load_imbalance")->evaluated());
  EXPECT_THAT(Codes(m), Not(::testing::Contains("load_imbalance")));
  EXPECT_THAT(Codes(m), ::testing::Contains("cpu_starvation"));
  // Without the wait it was the slot's own work: an imbalance.
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_run_queue_wait_seconds(0);
  EXPECT_THAT(Codes(m), ::testing::Contains("load_imbalance"));
}

// Engine workers without thread identity run their tasks on one named slot: a 2-core worker
// running two chunks at a time all run long is no busier than a 1-core worker running one. On
// the real TaskVine churn run (taskvine_churn_follow.pb in the corpus) the 2-core worker's slot
// read "busy 153%" of its connected time.
TEST(FindingsTest, LoadImbalanceCountsASlotRunningSeveralChunksAtOnceAsThatManySlots) {
  RunShape shape;
  shape.in_process = false;
  shape.chunks_per_slot = [](int) { return 20; };
  shape.duration = [](int, int) { return 0.2; };
  v1::Measurement m = MakeRun(shape);
  // Slot 1's chunks become a second lane of worker 0: two at a time on one named slot.
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (chunk.worker() == "tcp://10.0.0.1:4000") chunk.set_worker("tcp://10.0.0.0:4000");
  }
  // A 1-core worker running one chunk at a time over the same span.
  RunShape one = shape;
  one.slots = 1;
  const v1::Measurement single = MakeRun(one);
  for (const v1::ChunkRecord& chunk : single.chunks()) {
    v1::ChunkRecord& copy = *m.add_chunks();
    copy = chunk;
    copy.set_worker("tcp://10.0.0.9:4000");
  }
  const v1::AggregatedMetrics metrics = Aggregated(m);
  ASSERT_NE(Evaluation(metrics, "load_imbalance"), nullptr);
  EXPECT_TRUE(Evaluation(metrics, "load_imbalance")->evaluated());
  EXPECT_THAT(Codes(m), Not(::testing::Contains("load_imbalance")));
  // Three chunks at once against one is an imbalance, and the evidence says how it counted.
  for (const v1::ChunkRecord& chunk : single.chunks()) {
    v1::ChunkRecord& copy = *m.add_chunks();
    copy = chunk;
    copy.set_worker("tcp://10.0.0.0:4000");
    copy.set_uuid("third lane");
  }
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) {
    if (chunk.worker() == "tcp://10.0.0.9:4000") chunk.set_duration_seconds(0.1);
  }
  const v1::Finding f = Only(Aggregated(m), "load_imbalance");
  EXPECT_THAT(f.evidence(), HasSubstr("up to 3, counts as that many slots"));
}

TEST(FindingsTest, DaskEngineOverhead) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement m = MakeRun(shape);
  v1::Span& span = *m.add_spans();
  const auto add = [&](const char* prefix, const char* activity, double value) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context("execute");
    metric.set_task_prefix(prefix);
    metric.set_activity(activity);
    metric.set_unit("seconds");
    metric.set_value(value);
  };
  add("process", "thread-cpu", 10.0);
  add("process", "thread-noncpu", 0.5);
  add("getitem", "thread-cpu", 3.0);
  add("getitem", "thread-noncpu", 1.0);
  AggregationOptions options;
  options.processor_task_patterns = {"process"};
  EXPECT_THAT(Codes(m, options), ElementsAre("engine_overhead"));
  span.mutable_metrics(2)->set_value(0.5);
  span.mutable_metrics(3)->set_value(0.1);
  EXPECT_THAT(Codes(m, options), IsEmpty());
}

TEST(FindingsTest, TaskVineTransfersAndQueueWait) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement m = MakeRun(shape);
  v1::Span& span = *m.add_spans();
  const auto add = [&](const char* activity, double value) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context("taskvine");
    metric.set_task_prefix("processing");
    metric.set_activity(activity);
    metric.set_unit("seconds");
    metric.set_value(value);
  };
  add("execute", 100.0);
  add("commit", 10.0);
  add("retrieve", 12.0);
  add("queue-wait", 5.0);
  v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Only(metrics, "engine_overhead").title(), HasSubstr("transfers took 22%"));
  span.mutable_metrics(1)->set_value(1.0);
  span.mutable_metrics(2)->set_value(1.0);
  EXPECT_THAT(Codes(m), IsEmpty());
  // A large summed queue wait is no finding (#23): it is inherent when every task is submitted
  // at once; the capacity rules read the task timeline instead.
  span.mutable_metrics(3)->set_value(800.0);
  EXPECT_THAT(Codes(m), IsEmpty());
}

// Transfers cost 22 % of execute, and the run ended unevenly (slots 0.5 s apart, the idle tail
// asking for more, smaller chunks): "make tasks longer" says how far instead of contradicting it.
TEST(FindingsTest, EngineOverheadDoesNotContradictAnUnevenEnd) {
  RunShape shape;
  shape.in_process = false;
  shape.slots = 4;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.slot_start = [](int slot) { return 0.5 * slot; };
  v1::Measurement m = MakeRun(shape);
  v1::Span& span = *m.add_spans();
  for (const auto& [activity, value] :
       std::vector<std::pair<const char*, double>>{{"execute", 100.0}, {"commit", 22.0}}) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context("taskvine");
    metric.set_task_prefix("processing");
    metric.set_activity(activity);
    metric.set_unit("seconds");
    metric.set_value(value);
  }
  const v1::AggregatedMetrics metrics = Aggregated(m);
  ASSERT_THAT(Only(metrics, "idle_tail").suggestion(), HasSubstr("More, smaller chunks"));
  EXPECT_THAT(Only(metrics, "engine_overhead").suggestion(),
              HasSubstr("Larger chunks only while every worker slot still gets several"));
}

TEST(FindingsTest, TinyChunksFromMeasuredGaps) {
  RunShape shape;
  shape.duration = [](int, int) { return 0.002; };
  shape.gap = 0.001;
  const v1::AggregatedMetrics metrics = Aggregated(MakeRun(shape));
  ASSERT_THAT(Codes(MakeRun(shape)), ElementsAre("tiny_chunks"));
  const v1::Finding& f = Only(metrics, "tiny_chunks");
  EXPECT_THAT(f.evidence(), HasSubstr("median gap between a worker's chunks 1.00 ms (50%"));
  // A gap of 1 ms is 2 % of a 50 ms chunk: 25000 events x 25 = 625000, more than a file holds
  // (each file is read as [0, 25000)): the advice stops at a whole file.
  EXPECT_THAT(f.suggestion(), HasSubstr("up to a whole file (25000 events, the largest file)"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("625000")));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("630000")));
}

TEST(FindingsTest, TinyChunksAdviceFitsTheFilesAndNamesTheThreadPoolKnob) {
  RunShape shape;
  shape.duration = [](int, int) { return 0.002; };
  shape.gap = 0.001;
  v1::Measurement m = MakeRun(shape);
  // The backend comes from metadata.backend ("threadpool") when the configuration has none.
  // One file holds 2 M events: 25000 x 25 = 625000 fits the file, but the run's 40 chunks of
  // 25000 events would be 2 chunks for its 2 threads. At most 4 chunks per thread: 40 x 25000 /
  // (4 x 2) = 125000 events, rounded down to two digits: 120000, 9.60 ms.
  m.mutable_chunks(0)->set_entry_start(1975000);
  m.mutable_chunks(0)->set_entry_stop(2000000);
  const v1::Finding f = Only(Aggregated(m), "tiny_chunks");
  EXPECT_THAT(f.suggestion(), HasSubstr("about 120000 events per chunk would take 9.60 ms "
                                        "(--chunk_size=120000) (no more: each of the 2 worker "
                                        "slots still gets 4 chunks)"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("630000")));
}

// Chunks already as large as the run allows: larger ones would leave a thread fewer than 4, and
// the idle tail rule would ask for smaller ones. No "larger chunks" then.
TEST(FindingsTest, TinyChunksDoesNotAskForFewerChunksThanTheSlotsNeed) {
  RunShape shape;
  shape.slots = 3;
  shape.usable_cpus = 3;
  shape.chunks_per_slot = [](int) { return 10; };
  shape.duration = [](int, int) { return 0.002; };
  shape.gap = 0.001;
  v1::Measurement m = MakeRun(shape);
  for (v1::ChunkRecord& chunk : *m.mutable_chunks()) chunk.set_entry_stop(2'000'000);
  // 30 chunks on 3 threads: at most 30 x 25000 / 12 = 62500 events: larger chunks still help.
  EXPECT_THAT(Only(Aggregated(m), "tiny_chunks").suggestion(), HasSubstr("about 62000 events"));
  // 10 successful chunks on 3 threads: 10 x 25000 / 12 = 20833 events, less than a chunk now.
  for (int i = 10; i < m.chunks_size(); ++i) {
    m.mutable_chunks(i)->set_status(v1::CHUNK_STATUS_FAILED);
  }
  const v1::Finding f = Only(Aggregated(m), "tiny_chunks");
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("Use larger chunks")));
  EXPECT_THAT(f.suggestion(), HasSubstr("cut the per-chunk overhead instead"));
}

TEST(FindingsTest, TinyChunksOnWorkQueueNamesChunksPerTask) {
  RunShape shape;
  shape.in_process = false;
  shape.duration = [](int, int) { return 0.02; };
  v1::Measurement m = MakeRun(shape);
  auto& configuration = *m.mutable_metadata()->mutable_configuration();
  configuration["backend"] = "workqueue";
  configuration["chunks_per_task"] = "1";
  const v1::Finding f = Only(Aggregated(m), "tiny_chunks");
  // A task should take >= 100 ms: 100 ms / 20 ms per chunk = 5 chunks per task (below the cap
  // of 40 chunks / (4 x 2 slots) = 5).
  EXPECT_THAT(f.suggestion(), HasSubstr("--chunks_per_task=5 (now 1)"));
  EXPECT_THAT(f.suggestion(), Not(HasSubstr("events per chunk")));
  // As the run aggregates it, before collect records its configuration: the backend alone.
  m.mutable_metadata()->clear_configuration();
  m.mutable_metadata()->set_backend("workqueue");
  const v1::Finding g = Only(Aggregated(m), "tiny_chunks");
  EXPECT_THAT(g.suggestion(), HasSubstr("--chunks_per_task=5 would make a task about 100 ms"));
  // Gaps as long as the chunks ask for 2 s tasks (gap / 2 %), capped so that each of the 2
  // slots still gets 4 tasks: 40 / 8 = 5 chunks per task.
  RunShape gappy = shape;
  gappy.gap = 0.04;
  v1::Measurement h = MakeRun(gappy);
  h.mutable_metadata()->set_backend("workqueue");
  const v1::Finding capped = Only(Aggregated(h), "tiny_chunks");
  EXPECT_THAT(capped.suggestion(), HasSubstr("--chunks_per_task=5 would make"));
}

TEST(FindingsTest, TinyChunksOnAnEngine) {
  RunShape shape;
  shape.in_process = false;
  shape.duration = [](int, int) { return 0.02; };
  EXPECT_THAT(Codes(MakeRun(shape)), ElementsAre("tiny_chunks"));
  shape.in_process = true;  // 20 ms with a 50 µs gap is fine in a thread pool
  EXPECT_THAT(Codes(MakeRun(shape)), IsEmpty());
}

TEST(FindingsTest, FailedAndRetriedChunks) {
  v1::Measurement m = MakeRun({});
  m.mutable_chunks(3)->set_status(v1::CHUNK_STATUS_FAILED);
  m.mutable_chunks(3)->set_error_text("CRC mismatch in column Jet_eta basket 7\nmore");
  m.mutable_chunks(5)->set_attempt(1);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Codes(m), ElementsAre("failed_chunks", "retried_chunks"));
  const v1::Finding& failed = Only(metrics, "failed_chunks");
  EXPECT_EQ(failed.severity(), v1::Finding::SEVERITY_CRITICAL);
  EXPECT_THAT(failed.title(), HasSubstr("1 of 40 chunks failed"));
  EXPECT_THAT(failed.evidence(),
              HasSubstr("file0_3.root; first error: CRC mismatch in column Jet_eta basket 7."));
  // A long error keeps its start and its end, where the cause usually is.
  m.mutable_chunks(3)->set_error_text(std::string(200, 'x') + " CRC mismatch");
  const std::string evidence = Only(Aggregated(m), "failed_chunks").evidence();
  EXPECT_THAT(evidence, HasSubstr("xxx ... xxx"));
  EXPECT_THAT(evidence, HasSubstr("xxx CRC mismatch."));
}

// The finding checks its cause: a failed attempt whose chunk (file and entry range) has a
// successful record is not missing; an engine task that names no chunk cannot be matched to a
// resubmission, so its loss is not claimed.
TEST(FindingsTest, FailedChunksSayWhatIsMissingOnlyWhenTheRecordsShowIt) {
  v1::Measurement rerun = MakeRun({});
  v1::ChunkRecord lost = rerun.chunks(3);
  lost.set_status(v1::CHUNK_STATUS_FAILED);
  lost.set_error_text("OSError: XRootD timeout");
  *rerun.add_chunks() = lost;  // the chunk's failed first attempt; chunks(3) is its rerun
  const v1::AggregatedMetrics rerun_metrics = Aggregated(rerun);
  const v1::Finding& recovered = Only(rerun_metrics, "failed_chunks");
  EXPECT_EQ(recovered.severity(), v1::Finding::SEVERITY_INFO);
  EXPECT_EQ(recovered.title(), "1 failed attempt was rerun successfully");
  EXPECT_THAT(recovered.evidence(), HasSubstr("no events are missing"));

  rerun.mutable_chunks(7)->set_status(v1::CHUNK_STATUS_FAILED);  // no rerun of this one
  const v1::AggregatedMetrics mixed_metrics = Aggregated(rerun);
  const v1::Finding& mixed = Only(mixed_metrics, "failed_chunks");
  EXPECT_EQ(mixed.severity(), v1::Finding::SEVERITY_CRITICAL);
  EXPECT_THAT(mixed.title(), HasSubstr("1 of 41 chunks failed: their events are missing"));
  EXPECT_THAT(mixed.evidence(), HasSubstr("1 was rerun successfully"));

  v1::Measurement tasks = MakeRun({});
  for (v1::ChunkRecord& chunk : *tasks.mutable_chunks()) {
    chunk.clear_file();
    chunk.set_entry_start(0);
    chunk.set_entry_stop(0);
  }
  tasks.mutable_chunks(2)->set_status(v1::CHUNK_STATUS_FAILED);
  tasks.mutable_chunks(2)->set_task_id("27");
  const v1::AggregatedMetrics task_metrics = Aggregated(tasks);
  const v1::Finding& unnamed = Only(task_metrics, "failed_chunks");
  EXPECT_EQ(unnamed.severity(), v1::Finding::SEVERITY_WARNING);
  EXPECT_EQ(unnamed.title(), "1 of 40 tasks failed; whether their work was redone is not known");
  EXPECT_THAT(unnamed.evidence(), HasSubstr("Failed: task 27"));
  EXPECT_THAT(unnamed.evidence(), HasSubstr("is not known"));
}

TEST(FindingsTest, TrackingGapsAndLostEngineData) {
  v1::Measurement m = MakeRun({});
  v1::TrackingGap& gap = *m.mutable_tracking()->add_gaps();
  gap.set_start_unix_ns(kStart);
  gap.set_end_unix_ns(kStart + 500'000'000);
  gap.set_reason("scheduler unreachable");
  v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Only(metrics, "data_lost").evidence(),
              HasSubstr("1 tracking gap (500 ms, 12% of the run): scheduler unreachable"));

  m = MakeRun({});
  v1::Warning& recovered = *m.add_warnings();
  recovered.set_code("dask_fine_metrics_recovered");
  recovered.set_message("fine metrics of 3 tasks re-read");
  metrics = Aggregated(m);
  EXPECT_EQ(Only(metrics, "data_lost").severity(), v1::Finding::SEVERITY_INFO);

  m = MakeRun({});
  v1::Warning& load = *m.add_warnings();
  load.set_code("host_overloaded");
  load.set_message("load 4 on 2 CPUs");
  EXPECT_THAT(Codes(m), IsEmpty());
}

TEST(FindingsTest, MemoryNearTheLimitOrSpilling) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement m = MakeRun(shape);
  for (v1::WorkerSeries& series : *m.mutable_tracking()->mutable_workers()) {
    for (int i = 0; i < series.time_unix_ns_size(); ++i)
      series.add_memory_limit_bytes(110.0 * kMiB);
  }
  v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Only(metrics, "memory_pressure").title(), HasSubstr("91% of its memory limit"));
  for (v1::WorkerSeries& series : *m.mutable_tracking()->mutable_workers()) {
    for (double& limit : *series.mutable_memory_limit_bytes()) limit = 1024.0 * kMiB;
  }
  EXPECT_THAT(Codes(m), IsEmpty());
  for (v1::WorkerSeries& series : *m.mutable_tracking()->mutable_workers()) {
    for (int i = 0; i < series.time_unix_ns_size(); ++i) series.add_spilled_bytes(i * 64.0 * kMiB);
  }
  metrics = Aggregated(m);
  EXPECT_THAT(Only(metrics, "memory_pressure").title(), HasSubstr("spilled 64.0 MiB"));

  // In-process workers: the process against its cgroup limit.
  v1::Measurement local = MakeRun({});
  local.mutable_metadata()->mutable_host_facts()->set_cgroup_memory_limit_bytes(105 * kMiB);
  EXPECT_THAT(Codes(local), ElementsAre("memory_pressure"));
  EXPECT_THAT(Only(Aggregated(local), "memory_pressure").suggestion(),
              HasSubstr("process smaller chunks"));
}

// A memory limit stored once for the series (schema/worker_series_columns.h) gives the finding
// of the same limit at every point.
TEST(FindingsTest, AMemoryLimitStoredOnceReadsAsAtEveryPoint) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement every = MakeRun(shape);
  for (v1::WorkerSeries& series : *every.mutable_tracking()->mutable_workers()) {
    ASSERT_GT(series.time_unix_ns_size(), 1);
    for (int i = 0; i < series.time_unix_ns_size(); ++i) {
      series.add_memory_limit_bytes(110.0 * kMiB);
    }
  }
  v1::Measurement once = every;
  for (v1::WorkerSeries& series : *once.mutable_tracking()->mutable_workers()) {
    series.mutable_memory_limit_bytes()->Truncate(1);
  }
  const v1::AggregatedMetrics from_every = Aggregated(every);
  const v1::AggregatedMetrics from_once = Aggregated(once);
  EXPECT_THAT(Only(from_every, "memory_pressure").title(), HasSubstr("91% of its memory limit"));
  EXPECT_EQ(Only(from_once, "memory_pressure").SerializeAsString(),
            Only(from_every, "memory_pressure").SerializeAsString());
}

// Near the memory limit with chunks so small that tiny_chunks asks for larger ones: the memory
// advice does not ask for smaller chunks in the same breath.
TEST(FindingsTest, MemoryPressureDoesNotContradictTinyChunks) {
  RunShape shape;
  shape.duration = [](int, int) { return 0.002; };
  shape.gap = 0.001;
  v1::Measurement m = MakeRun(shape);
  m.mutable_metadata()->mutable_host_facts()->set_cgroup_memory_limit_bytes(105 * kMiB);
  const v1::AggregatedMetrics metrics = Aggregated(m);
  EXPECT_THAT(Codes(m), ::testing::Contains("tiny_chunks"));
  const v1::Finding& memory = Only(metrics, "memory_pressure");
  EXPECT_THAT(memory.suggestion(), Not(HasSubstr("smaller chunks")));
  EXPECT_THAT(memory.suggestion(), HasSubstr("see the tiny chunks finding"));
}

TEST(FindingsTest, DebugBuildComesFirst) {
  RunShape shape;
  shape.cpu_share = 0.5;
  v1::Measurement m = MakeRun(shape);
  m.mutable_metadata()->mutable_analysis_build()->set_optimized(false);
  m.mutable_metadata()->mutable_analysis_build()->set_build_mode("fastbuild");
  EXPECT_THAT(Codes(m), ElementsAre("debug_build", "io_bound"));
}

// memory_pressure reads long series in blocks: the worst share is found wherever it lies (here
// late in the second worker's series), and a limit that is not a number still counts as a known
// limit, as when each sample was read on its own.
TEST(FindingsTest, MemoryPressureFindsTheWorstSampleAnywhereInLongSeries) {
  RunShape shape;
  shape.in_process = false;
  v1::Measurement m = MakeRun(shape);
  ASSERT_GE(m.tracking().workers_size(), 2);
  for (v1::WorkerSeries& series : *m.mutable_tracking()->mutable_workers()) {
    const int64_t from = series.time_unix_ns(0);
    const int64_t to = series.time_unix_ns(1);
    series.clear_time_unix_ns();
    series.clear_cores();
    series.clear_memory_bytes();
    for (int i = 0; i < 1000; ++i) {
      series.add_time_unix_ns(from + (to - from) * i / 999);
      series.add_cores(1);
      series.add_memory_bytes(100.0 * kMiB);
      series.add_memory_limit_bytes(1024.0 * kMiB);
    }
  }
  v1::WorkerSeries& second = *m.mutable_tracking()->mutable_workers(1);
  second.set_memory_bytes(777, 1000.0 * kMiB);
  second.set_memory_bytes(900, 999.0 * kMiB);  // later, a little less
  const v1::AggregatedMetrics metrics = Aggregated(m);
  const v1::Finding& f = Only(metrics, "memory_pressure");
  EXPECT_THAT(f.title(), HasSubstr("98% of its memory limit"));
  EXPECT_THAT(f.evidence(), HasSubstr("on " + second.worker()));

  for (v1::WorkerSeries& series : *m.mutable_tracking()->mutable_workers()) {
    for (double& limit : *series.mutable_memory_limit_bytes()) limit = std::nan("");
  }
  const v1::AggregatedMetrics unknown_limits = Aggregated(m);
  EXPECT_THAT(unknown_limits.findings(), IsEmpty());
  const v1::RuleEvaluation* memory = Evaluation(unknown_limits, "memory_pressure");
  ASSERT_NE(memory, nullptr);
  EXPECT_TRUE(memory->evaluated());
}

}  // namespace
}  // namespace roastcoffea
