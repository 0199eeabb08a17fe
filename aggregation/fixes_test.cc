// Each fix of docs/reference.md §6 next to the original's number, plus the additions (percentiles,
// failures, retries) and the bad-input treatment, through the public Aggregate.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/test_run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

using ::roastcoffea::testing_internal::AggregateRun;
using ::roastcoffea::testing_internal::TestRun;
using ::testing::HasSubstr;

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kT0 = 1'765'000'000 * kS;

void AddWorker(v1::TrackingData& tracking, const std::string& name,
               const std::vector<double>& seconds, double cores,
               const std::vector<double>& memory = {}) {
  v1::WorkerSeries* w = tracking.add_workers();
  w->set_worker(name);
  for (size_t i = 0; i < seconds.size(); ++i) {
    w->add_time_unix_ns(kT0 + static_cast<int64_t>(seconds[i] * kS));
    w->add_cores(cores);
    if (!memory.empty()) w->add_memory_bytes(memory[i]);
  }
}

void AddCount(v1::TrackingData& tracking, double second, int count) {
  tracking.add_worker_count_time_unix_ns(kT0 + static_cast<int64_t>(second * kS));
  tracking.add_worker_count(count);
}

// Worker A (4 threads) runs 0-10 s and leaves; worker B (4 threads) replaces it 10-20 s.
TestRun Churn() {
  TestRun run;
  run.report.set_events(800'000);
  run.report.set_process_time_seconds(80);
  run.report.set_chunks(8);
  run.elapsed_seconds = 20;
  run.window_start_unix_ns = kT0;
  run.window_end_unix_ns = kT0 + 20 * kS;
  v1::TrackingData tracking;
  for (double s : {0.0, 5.0, 10.0, 15.0, 20.0}) AddCount(tracking, s, 1);
  AddWorker(tracking, "A", {0, 5, 10}, 4);
  AddWorker(tracking, "B", {10, 15, 20}, 4);
  run.tracking = tracking;
  return run;
}

TEST(FixesTest, CoreEfficiencyOverCoreSecondsIsNotDeflatedByChurn) {
  const auto m = AggregateRun(Churn());
  ASSERT_TRUE(m.ok()) << m.status();
  // The original: total_cores = 4 + 4 = 8 (every worker ever seen): 80 / (8 x 20) = 0.5.
  EXPECT_DOUBLE_EQ(m->workers().total_cores(), 8);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(m->efficiency().event_rate_core_khz(), 800'000.0 / (20 * 8) / 1000);
  // Fixed: 4 cores were available at any time: 80 core-seconds, efficiency 1.
  EXPECT_DOUBLE_EQ(m->workers().core_seconds(), 80);
  EXPECT_DOUBLE_EQ(m->workers().avg_cores_over_window(), 4);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_over_core_seconds_fraction(), 1.0);
  EXPECT_DOUBLE_EQ(m->efficiency().event_rate_core_seconds_khz(), 10.0);
  // Speedup shown once (4x); parallel efficiency = speedup / average cores.
  EXPECT_DOUBLE_EQ(m->efficiency().speedup_factor(), 4.0);
  EXPECT_DOUBLE_EQ(m->efficiency().parallel_efficiency_fraction(), 1.0);
}

TEST(FixesTest, WorkerAveragesOverTheRunWindowNotTheSampleWindow) {
  TestRun run;
  run.elapsed_seconds = 40;
  v1::TrackingData tracking;
  AddCount(tracking, 0, 0);
  AddCount(tracking, 10, 4);
  AddCount(tracking, 20, 4);
  run.tracking = tracking;
  run.window_start_unix_ns = kT0;
  run.window_end_unix_ns = kT0 + 40 * kS;  // tracking stopped at 20 s, the run went on
  auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workers().avg_workers(), 3.0);              // the original: (20 + 40) / 20
  EXPECT_DOUBLE_EQ(m->workers().avg_workers_over_window(), 3.5);  // (20 + 40 + 4 x 20) / 40
  EXPECT_DOUBLE_EQ(m->workers().window_seconds(), 40);
  // Samples after the window are cut off, the crossing segment interpolated.
  run.window_end_unix_ns = kT0 + 5 * kS;
  m = AggregateRun(run);
  EXPECT_DOUBLE_EQ(m->workers().avg_workers_over_window(), 1.0);  // 0 -> 2 over 5 s
  // Without a run window the samples' own span is used.
  run.window_start_unix_ns = run.window_end_unix_ns = 0;
  m = AggregateRun(run);
  EXPECT_DOUBLE_EQ(m->workers().avg_workers_over_window(), 3.0);
}

TEST(FixesTest, TimeWeightedCoresPerWorker) {
  TestRun run;
  run.elapsed_seconds = 30;
  v1::TrackingData tracking;
  AddWorker(tracking, "big", {0, 10, 20, 30}, 8, {1e9, 1e9, 1e9, 1e9});
  AddWorker(tracking, "small", {0, 10}, 2, {3e9, 3e9});
  run.tracking = tracking;
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workers().cores_per_worker(), 5.0);  // the original: (8 + 2) / 2
  EXPECT_DOUBLE_EQ(m->workers().cores_per_worker_time_weighted(), (240.0 + 20) / 40);
  // Memory: the original's unweighted mean over workers vs memory-seconds / worker-seconds.
  EXPECT_DOUBLE_EQ(m->workers().avg_memory_per_worker_bytes(), 2e9);
  EXPECT_DOUBLE_EQ(m->workers().avg_memory_per_worker_time_weighted_bytes(), (30e9 + 30e9) / 40);
  EXPECT_DOUBLE_EQ(m->workers().avg_cluster_memory_bytes(), 60e9 / 30);
}

TEST(FixesTest, MemoryAveragesNeverDivideByZero) {
  TestRun run;
  v1::TrackingData tracking;
  // Every sample at one instant, twice (a duplicate timestamp): zero-length windows.
  AddWorker(tracking, "w", {0, 0}, 4, {1e9, 3e9});
  run.tracking = tracking;
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workers().avg_memory_per_worker_bytes(), 2e9);  // mean at the instant
  EXPECT_FALSE(m->workers().has_avg_memory_per_worker_time_weighted_bytes());
  EXPECT_FALSE(m->workers().has_avg_cluster_memory_bytes());
  EXPECT_FALSE(m->workers().has_avg_cores_over_window());
  EXPECT_DOUBLE_EQ(m->workers().core_seconds(), 0);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_over_core_seconds_fraction(), 0);
  EXPECT_FALSE(m->efficiency().has_parallel_efficiency_fraction());
}

TEST(FixesTest, DuplicateSampleTimestampsAreAveraged) {
  TestRun run;
  run.window_start_unix_ns = kT0;
  run.window_end_unix_ns = kT0 + 2 * kS;
  v1::TrackingData tracking;
  v1::WorkerSeries* w = tracking.add_workers();
  w->set_worker("w");
  for (auto [s, cores] : std::vector<std::pair<int64_t, double>>{{0, 2}, {2, 6}, {2, 2}}) {
    w->add_time_unix_ns(kT0 + s * kS);
    w->add_cores(cores);
  }
  run.tracking = tracking;
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workers().core_seconds(), (2 + 4) / 2.0 * 2);  // 6 and 2 at 2 s -> 4
}

v1::ChunkRecord Chunk(const std::string& dataset, double duration, int64_t events,
                      int64_t memory_delta) {
  v1::ChunkRecord c;
  c.set_dataset(dataset);
  c.set_file(dataset + ".root");
  c.set_duration_seconds(duration);
  c.set_events(events);
  c.set_memory_before_bytes(1'000'000);
  c.set_memory_after_bytes(1'000'000 + memory_delta);
  c.set_status(v1::CHUNK_STATUS_OK);
  return c;
}

TEST(FixesTest, ExactPercentilesOverallAndPerDataset) {
  TestRun run;
  for (int i = 1; i <= 10; ++i) {
    run.chunks.push_back(Chunk(i <= 4 ? "A" : "B", i, 100 * i, 1000 * i));
  }
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  const v1::ChunkMetrics& c = m->chunks();
  // numpy.percentile(range(1, 11), [50, 90, 95, 99]) = 5.5, 9.1, 9.55, 9.91.
  EXPECT_DOUBLE_EQ(c.duration_seconds().percentiles().p50(), 5.5);
  EXPECT_DOUBLE_EQ(c.duration_seconds().percentiles().p90(), 9.1);
  EXPECT_DOUBLE_EQ(c.duration_seconds().percentiles().p95(), 9.55);
  EXPECT_DOUBLE_EQ(c.duration_seconds().percentiles().p99(), 9.91);
  EXPECT_DOUBLE_EQ(c.events().percentiles().p50(), 550);
  EXPECT_DOUBLE_EQ(c.memory_delta_bytes().percentiles().p99(), 9910);
  // Every chunk takes 0.01 s per event.
  EXPECT_DOUBLE_EQ(c.time_per_event_seconds().percentiles().p50(), 0.01);
  EXPECT_EQ(c.time_per_event_seconds().count(), 10);
  ASSERT_EQ(c.per_dataset_size(), 2);
  // A = {1, 2, 3, 4}: p50 2.5, p90 3.7; B = {5..10}: p50 7.5, p99 9.95.
  EXPECT_DOUBLE_EQ(c.per_dataset(0).duration_distribution_seconds().percentiles().p50(), 2.5);
  EXPECT_DOUBLE_EQ(c.per_dataset(0).duration_distribution_seconds().percentiles().p90(), 3.7);
  EXPECT_DOUBLE_EQ(c.per_dataset(1).duration_distribution_seconds().percentiles().p50(), 7.5);
  EXPECT_DOUBLE_EQ(c.per_dataset(1).duration_distribution_seconds().percentiles().p99(), 9.95);
  EXPECT_DOUBLE_EQ(c.per_dataset(1).events_distribution().max(), 1000);
  EXPECT_DOUBLE_EQ(c.per_dataset(0).memory_delta_distribution_bytes().mean(), 2500);
  EXPECT_DOUBLE_EQ(c.per_dataset(0).time_per_event_distribution_seconds().percentiles().p50(),
                   0.01);
}

TEST(FixesTest, FailedChunksListedAndRetriesKeptApart) {
  TestRun run;
  v1::ChunkRecord failed = Chunk("A", 1, 100, 0);
  failed.set_uuid("u1");
  failed.set_entry_start(0);
  failed.set_entry_stop(100);
  failed.set_start_unix_ns(kT0);
  failed.set_end_unix_ns(kT0 + kS);
  failed.set_status(v1::CHUNK_STATUS_FAILED);
  failed.set_error_text("OSError: XRootD timeout");
  v1::ChunkRecord retry = failed;
  retry.set_attempt(1);
  retry.set_status(v1::CHUNK_STATUS_OK);
  retry.clear_error_text();
  retry.set_start_unix_ns(kT0 + 2 * kS);
  retry.set_end_unix_ns(kT0 + 3 * kS);
  run.chunks = {retry, failed};
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  const v1::ChunkMetrics& c = m->chunks();
  EXPECT_EQ(c.num_chunks(), 2);
  EXPECT_EQ(c.num_failed_chunks(), 1);
  EXPECT_EQ(c.num_retried_chunks(), 1);
  ASSERT_EQ(c.failed_chunks_size(), 1);
  EXPECT_EQ(c.failed_chunks(0).uuid(), "u1");
  EXPECT_EQ(c.failed_chunks(0).error_text(), "OSError: XRootD timeout");
  // The original keys chunk_info by (file, start, stop): the retry would overwrite the failure.
  const ChunkInfoRows info(c);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0].attempt, 0u);
  EXPECT_EQ(info[1].attempt, 1u);
  EXPECT_EQ(info[1].start_unix_ns, kT0 + 2 * kS);
  const std::vector<FlatMetric> flat = ToFlatMetrics(*m);
  int chunk_info_keys = 0;
  for (const FlatMetric& f : flat) chunk_info_keys += f.key.rfind("chunk_info.", 0) == 0;
  EXPECT_EQ(chunk_info_keys, 6);
}

TEST(FixesTest, AggregateMeasurementUsesItsWindowAndElapsedTime) {
  v1::Measurement measurement;
  measurement.mutable_metadata()->set_elapsed_seconds(20);
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(kT0 / kS);
  measurement.mutable_metadata()->mutable_end_time()->set_seconds(kT0 / kS + 20);
  *measurement.mutable_report() = Churn().report;
  *measurement.mutable_tracking() = *Churn().tracking;
  const auto m = Aggregate(AggregationInputFromMeasurement(measurement));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workers().window_seconds(), 20);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_over_core_seconds_fraction(), 1.0);
  EXPECT_FALSE(m->has_chunks());
  EXPECT_FALSE(m->has_fine());
}

void ExpectInvalid(const TestRun& run, const std::string& message) {
  const auto m = AggregateRun(run);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr(message));
}

TEST(FixesTest, BadWindowIsRejected) {
  TestRun run = Churn();
  run.window_end_unix_ns = kT0 - 1;
  ExpectInvalid(run, "window_end_unix_ns 1764999999999999999 is before window_start_unix_ns");
  run.window_end_unix_ns = 0;
  ExpectInvalid(run, "set both or neither");
}

TEST(FixesTest, NonFiniteSamplesAreRejected) {
  TestRun run = Churn();
  run.tracking->mutable_workers(1)->set_cores(2, std::nan(""));
  ExpectInvalid(run, "tracking.workers[1] (worker \"B\"): cores[2] is nan");
  run = Churn();
  run.tracking->mutable_workers(0)->add_memory_bytes(1);
  run.tracking->mutable_workers(0)->add_memory_bytes(2);
  run.tracking->mutable_workers(0)->add_memory_bytes(std::numeric_limits<double>::infinity());
  ExpectInvalid(run, "memory_bytes[2] is inf");
  run = Churn();
  run.tracking->mutable_workers(0)->set_cores(0, -4);
  ExpectInvalid(run, "cores[0] is -4; expected a finite value >= 0");
}

// The columns are checked in blocks: a bad sample is named wherever it lies (block edges
// included), and -0.0 is a valid sample.
TEST(FixesTest, NonFiniteSamplesAreFoundAnywhereInLongSeries) {
  for (int bad : {0, 255, 256, 511, 599}) {
    TestRun run;
    v1::TrackingData tracking;
    v1::WorkerSeries& worker = *tracking.add_workers();
    worker.set_worker("W");
    for (int i = 0; i < 600; ++i) {
      worker.add_time_unix_ns(kT0 + i * kS);
      worker.add_cores(-0.0);
      worker.add_memory_bytes(1e9);
    }
    run.tracking = tracking;
    EXPECT_TRUE(AggregateRun(run).ok()) << AggregateRun(run).status();
    run.tracking->mutable_workers(0)->set_memory_bytes(bad, -std::nan(""));
    ExpectInvalid(run, absl::StrCat("memory_bytes[", bad, "] is "));
    run.tracking->mutable_workers(0)->set_memory_bytes(bad, 1e9);
    run.tracking->mutable_workers(0)->set_cores(bad, -1e-300);
    ExpectInvalid(run, absl::StrCat("cores[", bad, "] is -1e-300"));
  }
}

TEST(FixesTest, WorkerActivitiesMatchTrackedWallTimeTimesThreads) {
  // A 2-thread worker tracked over 10 s of the window: 20 core-seconds, which its span
  // activities (every one kept, idle included) must add up to.
  TestRun run;
  run.window_start_unix_ns = kT0;
  run.window_end_unix_ns = kT0 + 10 * kS;
  v1::TrackingData tracking;
  AddWorker(tracking, "tcp://w1", {0, 5, 10}, 2);
  run.tracking = tracking;
  v1::Span& span = run.spans.emplace_back();
  for (auto [activity, seconds] : std::vector<std::pair<std::string, double>>{{"thread-cpu", 12},
                                                                              {"thread-noncpu", 3},
                                                                              {"executor", 1},
                                                                              {"other", 0.5},
                                                                              {"idle", 3.5}}) {
    v1::FineMetric* m = span.add_metrics();
    m->set_context("execute");
    m->set_task_prefix(activity == "idle" ? "N/A" : "MyProcessor");
    m->set_activity(activity);
    m->set_unit("seconds");
    m->set_value(seconds);
    m->set_worker("tcp://w1");
  }
  run.options.processor_task_patterns = {"MyProc*"};
  const auto m = AggregateRun(run);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->fine().worker_seconds_size(), 1);
  EXPECT_DOUBLE_EQ(m->fine().worker_seconds(0).core_seconds(), 20);
  EXPECT_DOUBLE_EQ(m->fine().worker_seconds(0).total_seconds(), 20);
  EXPECT_DOUBLE_EQ(m->fine().processor_cpu_time_seconds(), 12);
  EXPECT_DOUBLE_EQ(m->fine().processor_io_wait_time_seconds(), 3);
  EXPECT_EQ(m->fine().by_task_prefix_size(), 5);
}

TEST(FixesTest, BadChunkRecordsAreRejected) {
  TestRun run;
  v1::ChunkRecord c = Chunk("A", 1, 10, 0);
  c.set_uuid("u");
  c.set_start_unix_ns(kT0 + kS);
  c.set_end_unix_ns(kT0);
  run.chunks = {c};
  ExpectInvalid(run, "chunks[0] (uuid \"u\", file \"A.root\", entries 0-0): end_unix_ns");
  c.set_end_unix_ns(kT0 + 2 * kS);
  c.set_events(-5);
  run.chunks = {c};
  ExpectInvalid(run, "events is -5");
  c.set_events(5);
  v1::SectionRecord* s = c.add_sections();
  s->set_name("jets");
  s->set_kind(static_cast<v1::SectionRecord::Kind>(42));
  run.chunks = {c};
  ExpectInvalid(run, "sections[0] (\"jets\") has unknown kind 42");
  s->set_kind(v1::SectionRecord::KIND_TIME);
  s->set_duration_seconds(-1);
  run.chunks = {c};
  ExpectInvalid(run, "sections[0] (\"jets\") duration_seconds is -1");
}

TEST(FixesTest, NonFiniteFineMetricIsRejected) {
  TestRun run;
  v1::Span& span = run.spans.emplace_back();
  span.set_name("coffea-processing");
  v1::FineMetric* m = span.add_metrics();
  m->set_task_prefix("p");
  m->set_activity("thread-cpu");
  m->set_unit("seconds");
  m->set_value(std::nan(""));
  ExpectInvalid(run,
                "spans[0] (\"coffea-processing\").metrics[0] (p, thread-cpu, seconds): "
                "value is nan");
}

}  // namespace
}  // namespace roastcoffea
