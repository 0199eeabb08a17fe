#include "aggregation/aggregate.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "aggregation/test_run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::roastcoffea::testing_internal::AggregateRun;
using ::roastcoffea::testing_internal::TestRun;

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

// docs/reference.md §4 core-aggregator fixture: 5e9 B, 5e5 events, 50 s CPU, 25 chunks, E 25 s, two
// workers with 4 cores each sampled over 10 s.
TestRun CoreFixture() {
  TestRun input;
  input.report.set_events(500'000);
  input.report.set_compressed_bytes_read(5'000'000'000);
  input.report.set_process_time_seconds(50);
  input.report.set_chunks(25);
  input.elapsed_seconds = 25;
  v1::TrackingData tracking;
  tracking.set_backend("threadpool");
  for (int s = 0; s <= 10; s += 5) {
    tracking.add_worker_count_time_unix_ns(kStart + s * kSecond);
    tracking.add_worker_count(2);
  }
  // w1 ramps 1e9 -> 1.5e9 (average 1.25e9), w2 stays at 1e9: mean 1.125e9, peak 1.5e9.
  v1::WorkerSeries* w1 = tracking.add_workers();
  w1->set_worker("host:1");
  v1::WorkerSeries* w2 = tracking.add_workers();
  w2->set_worker("host:2");
  for (int s = 0; s <= 10; s += 5) {
    w1->add_time_unix_ns(kStart + s * kSecond);
    w1->add_memory_bytes(1e9 + 0.05e9 * s);
    w1->add_cores(4);
    w2->add_time_unix_ns(kStart + s * kSecond);
    w2->add_memory_bytes(1e9);
    w2->add_cores(4);
  }
  input.tracking = std::move(tracking);
  return input;
}

v1::ChunkRecord Chunk(const std::string& uuid, double duration, int64_t events) {
  v1::ChunkRecord chunk;
  chunk.set_uuid(uuid);
  chunk.set_file("data.root");
  chunk.set_dataset("TTbar");
  chunk.set_duration_seconds(duration);
  chunk.set_events(events);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

TEST(AggregateTest, CoreAggregatorFixture) {
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(CoreFixture());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workflow().data_rate_gbps(), 1.6);
  EXPECT_DOUBLE_EQ(m->workflow().event_rate_elapsed_khz(), 20);
  EXPECT_DOUBLE_EQ(m->workflow().event_rate_cpu_total_khz(), 10);
  ASSERT_TRUE(m->has_workers());
  EXPECT_DOUBLE_EQ(m->workers().avg_workers(), 2.0);
  EXPECT_EQ(m->workers().peak_workers(), 2);
  EXPECT_DOUBLE_EQ(m->workers().total_cores(), 8.0);
  EXPECT_DOUBLE_EQ(m->workers().cores_per_worker(), 4.0);
  EXPECT_DOUBLE_EQ(m->workers().avg_memory_per_worker_bytes(), 1.125e9);
  EXPECT_DOUBLE_EQ(m->workers().peak_memory_bytes(), 1.5e9);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_fraction(), 0.25);
  EXPECT_DOUBLE_EQ(m->efficiency().speedup_factor(), 2.0);
  EXPECT_DOUBLE_EQ(m->efficiency().event_rate_core_khz(), 2.5);
  EXPECT_FALSE(m->has_chunks());
}

TEST(AggregateTest, WithoutTrackingWorkersAndCoreMetricsAreUnset) {
  TestRun input = CoreFixture();
  input.tracking.reset();
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->has_workers());
  EXPECT_FALSE(m->efficiency().has_core_efficiency_fraction());
  EXPECT_FALSE(m->efficiency().has_event_rate_core_khz());
  EXPECT_DOUBLE_EQ(m->efficiency().speedup_factor(), 2.0);
}

TEST(AggregateTest, TrackingWithoutCoresLeavesCoreMetricsUnset) {
  TestRun input = CoreFixture();
  for (v1::WorkerSeries& worker : *input.tracking->mutable_workers()) worker.clear_cores();
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_workers());
  EXPECT_FALSE(m->workers().has_total_cores());
  EXPECT_FALSE(m->efficiency().has_core_efficiency_fraction());
  EXPECT_FALSE(m->efficiency().has_event_rate_core_khz());
}

TEST(AggregateTest, ZeroElapsedGivesZeroRates) {
  TestRun input = CoreFixture();
  input.elapsed_seconds = 0;
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(m->workflow().data_rate_gbps(), 0);
  EXPECT_DOUBLE_EQ(m->workflow().event_rate_elapsed_khz(), 0);
  EXPECT_DOUBLE_EQ(m->efficiency().speedup_factor(), 0);
  EXPECT_DOUBLE_EQ(m->efficiency().core_efficiency_fraction(), 0);
  EXPECT_DOUBLE_EQ(m->efficiency().event_rate_core_khz(), 0);
}

TEST(AggregateTest, ChunkRecordsAddChunkMetricsAndKeepTheReportCount) {
  TestRun input = CoreFixture();
  input.chunks = {Chunk("a", 1, 100), Chunk("b", 3, 300)};
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->has_chunks());
  EXPECT_EQ(m->chunks().num_chunks(), 2);
  EXPECT_EQ(m->workflow().num_chunks(), 25);
  // avg_cpu_time_per_chunk divides by the report's count, as the original.
  EXPECT_DOUBLE_EQ(m->workflow().avg_cpu_time_per_chunk_seconds(), 2.0);
  EXPECT_DOUBLE_EQ(m->chunks().duration_seconds().mean(), 2.0);
}

TEST(AggregateTest, SpansAddFineMetricsAndChangeNothingElse) {
  TestRun input = CoreFixture();
  const absl::StatusOr<v1::AggregatedMetrics> without = AggregateRun(input);
  v1::Span& span = input.spans.emplace_back();
  span.set_name("coffea-processing");
  v1::FineMetric* metric = span.add_metrics();
  metric->set_context("execute");
  metric->set_task_prefix("MyProcessor");
  metric->set_activity("thread-cpu");
  metric->set_unit("seconds");
  metric->set_value(100);
  absl::StatusOr<v1::AggregatedMetrics> with = AggregateRun(input);
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_FALSE(without->has_fine());
  ASSERT_TRUE(with->has_fine());
  EXPECT_DOUBLE_EQ(with->fine().processor_cpu_time_seconds(), 100);
  // The thread-cpu activity is the measured CPU of the workers (cpu_metrics.h).
  EXPECT_DOUBLE_EQ(with->cpu().cpu_seconds(), 100);
  EXPECT_FALSE(without->cpu().has_cpu_seconds() &&
               without->cpu().cpu_seconds() == with->cpu().cpu_seconds());
  // 100 s of CPU on 80 core-seconds is impossible, and said so (invariants.h).
  ASSERT_EQ(with->impossible_figures_size(), 1);
  EXPECT_EQ(with->impossible_figures(0).figure(), "cpu_efficiency");
  EXPECT_EQ(without->impossible_figures_size(), 0);
  with->clear_fine();
  with->clear_cpu();
  with->clear_impossible_figures();
  v1::AggregatedMetrics without_cpu = *without;
  without_cpu.clear_cpu();
  // The CPU figures make io_bound checkable; the other rules' states are unchanged.
  const auto io_bound = [](const v1::AggregatedMetrics& m) {
    for (const v1::RuleEvaluation& e : m.rule_evaluations()) {
      if (e.code() == "io_bound") return e.evaluated();
    }
    return false;
  };
  EXPECT_TRUE(io_bound(*with));
  EXPECT_FALSE(io_bound(without_cpu));
  for (v1::AggregatedMetrics* m : {&*with, &without_cpu}) {
    for (v1::RuleEvaluation& e : *m->mutable_rule_evaluations()) {
      if (e.code() == "io_bound") e.Clear();
    }
  }
  // Rules that read the fine metrics (engine_overhead, the capacity rules) are evaluated only
  // with them: the rest of the states is compared above.
  with->clear_rule_evaluations();
  without_cpu.clear_rule_evaluations();
  EXPECT_EQ(with->SerializeAsString(), without_cpu.SerializeAsString());
}

TEST(AggregateTest, OrderOfSamplesWorkersAndChunksDoesNotMatter) {
  TestRun input = CoreFixture();
  input.chunks = {Chunk("a", 0.1, 1), Chunk("b", 0.2, 2), Chunk("c", 0.3, 3)};
  input.tracking->set_worker_count(1, 3);  // counts 2, 3, 2
  const absl::StatusOr<v1::AggregatedMetrics> expected = AggregateRun(input);
  ASSERT_TRUE(expected.ok()) << expected.status();

  TestRun shuffled = input;
  std::swap(shuffled.chunks[0], shuffled.chunks[2]);
  v1::TrackingData& tracking = *shuffled.tracking;
  tracking.mutable_worker_count_time_unix_ns()->SwapElements(0, 2);
  tracking.mutable_worker_count()->SwapElements(0, 2);
  tracking.mutable_workers()->SwapElements(0, 1);
  for (v1::WorkerSeries& worker : *tracking.mutable_workers()) {
    worker.mutable_time_unix_ns()->SwapElements(0, 2);
    worker.mutable_memory_bytes()->SwapElements(0, 2);
    worker.mutable_cores()->SwapElements(0, 2);
  }
  const absl::StatusOr<v1::AggregatedMetrics> actual = AggregateRun(shuffled);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(actual->SerializeAsString(), expected->SerializeAsString());
  EXPECT_DOUBLE_EQ(actual->workers().avg_workers(), 2.5);
}

// Bad input: InvalidArgument naming the input, never a crash.
void ExpectInvalid(const TestRun& input, const std::string& names) {
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr(names));
}

TEST(AggregateTest, RejectsNonFiniteOrNegativeElapsed) {
  TestRun input = CoreFixture();
  input.elapsed_seconds = std::nan("");
  ExpectInvalid(input, "elapsed_seconds is nan");
  input.elapsed_seconds = std::numeric_limits<double>::infinity();
  ExpectInvalid(input, "elapsed_seconds is inf");
  input.elapsed_seconds = -1;
  ExpectInvalid(input, "elapsed_seconds is -1");
}

TEST(AggregateTest, RejectsWorkerCountWithoutMatchingTimes) {
  TestRun input = CoreFixture();
  input.tracking->add_worker_count(7);
  ExpectInvalid(input,
                "tracking.worker_count has 4 samples but "
                "tracking.worker_count_time_unix_ns has 3");
}

TEST(AggregateTest, RejectsWorkerColumnOfWrongLength) {
  TestRun input = CoreFixture();
  input.tracking->mutable_workers(1)->add_memory_bytes(1);
  ExpectInvalid(input,
                "tracking.workers[1] (worker \"host:2\"): column memory_bytes has 4 "
                "samples but time_unix_ns has 3");

  input = CoreFixture();
  input.tracking->mutable_workers(0)->mutable_cores()->RemoveLast();
  ExpectInvalid(input, "column cores has 2 samples");

  input = CoreFixture();
  input.tracking->mutable_workers(0)->add_cpu_percent(50);
  ExpectInvalid(input, "column cpu_percent has 1 samples");
}

TEST(AggregateTest, AcceptsEmptyWorkerColumns) {
  TestRun input = CoreFixture();
  input.tracking->mutable_workers(0)->clear_memory_bytes();
  const absl::StatusOr<v1::AggregatedMetrics> m = AggregateRun(input);
  ASSERT_TRUE(m.ok()) << m.status();
  // Only host:2 measured memory.
  EXPECT_DOUBLE_EQ(m->workers().avg_memory_per_worker_bytes(), 1e9);
}

TEST(AggregateTest, RejectsNanOrNegativeChunkDuration) {
  TestRun input = CoreFixture();
  input.chunks = {Chunk("good", 1, 1), Chunk("bad-uuid", std::nan(""), 1)};
  ExpectInvalid(input, "chunks[1] (uuid \"bad-uuid\", file \"data.root\"");
  ExpectInvalid(input, "duration_seconds is nan");
  input.chunks[1].set_duration_seconds(-0.5);
  ExpectInvalid(input, "duration_seconds is -0.5");
  input.chunks[1].set_duration_seconds(std::numeric_limits<double>::infinity());
  ExpectInvalid(input, "duration_seconds is inf");
}

}  // namespace
}  // namespace roastcoffea
