#include "aggregation/invariants.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "aggregation/aggregate.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

// One worker with one core, tracked from `tracked_from` to 12 s; one chunk per core-second of
// the whole run 0-12 s, reported as 12 s of processtime: what --follow gives when it attaches
// to a run already running (the chunks cover the run, the core-seconds the tracked window).
struct TestRun {
  v1::WorkflowReport report;
  v1::TrackingData tracking;
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
};

TestRun MixedWindows(int tracked_from) {
  TestRun run;
  run.report.set_events(12'000);
  run.report.set_process_time_seconds(12);
  run.report.set_chunks(12);
  v1::WorkerSeries& worker = *run.tracking.add_workers();
  worker.set_worker("host:1");
  for (int s = tracked_from; s <= 12; ++s) {
    run.tracking.add_worker_count_time_unix_ns(kStart + s * kSecond);
    run.tracking.add_worker_count(1);
    worker.add_time_unix_ns(kStart + s * kSecond);
    worker.add_cores(1);
    worker.add_memory_bytes(1e9);
  }
  for (int s = 0; s < 12; ++s) {
    v1::ChunkRecord& chunk = *run.chunks.Add();
    chunk.set_uuid("u");
    chunk.set_file("f.root");
    chunk.set_dataset("d");
    chunk.set_entry_start(s * 1000);
    chunk.set_entry_stop((s + 1) * 1000);
    chunk.set_events(1000);
    chunk.set_status(v1::CHUNK_STATUS_OK);
    chunk.set_start_unix_ns(kStart + s * kSecond);
    chunk.set_end_unix_ns(kStart + (s + 1) * kSecond);
    chunk.set_duration_seconds(1);
  }
  return run;
}

v1::AggregatedMetrics AggregateRun(const TestRun& run, double elapsed) {
  AggregationInput input;
  input.report = &run.report;
  input.tracking = &run.tracking;
  input.chunks = &run.chunks;
  input.elapsed_seconds = elapsed;
  absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return metrics.ok() ? *metrics : v1::AggregatedMetrics();
}

TEST(InvariantsTest, MixedWindowsAreNamedAsTheCause) {
  const v1::AggregatedMetrics metrics = AggregateRun(MixedWindows(4), 12);
  // 12 s of chunk wall time over 8 core-seconds tracked.
  ASSERT_TRUE(metrics.efficiency().has_core_efficiency_over_core_seconds_fraction());
  EXPECT_NEAR(metrics.efficiency().core_efficiency_over_core_seconds_fraction(), 1.5, 1e-9);
  const v1::ImpossibleFigure* found = nullptr;
  for (const v1::ImpossibleFigure& figure : metrics.impossible_figures()) {
    if (figure.figure() == "core_efficiency_over_core_seconds") found = &figure;
  }
  ASSERT_NE(found, nullptr) << metrics.DebugString();
  EXPECT_EQ(found->code(), "invalid_efficiency");
  EXPECT_NEAR(found->value(), 1.5, 1e-9);
  EXPECT_EQ(found->limit(), 1);
  EXPECT_TRUE(absl::StrContains(found->message(), "1.50")) << found->message();
  EXPECT_TRUE(absl::StrContains(found->message(), "two time windows mixed")) << found->message();
  EXPECT_TRUE(absl::StrContains(found->message(), "4.0 s before")) << found->message();
}

TEST(InvariantsTest, ConsistentRunHasNone) {
  const v1::AggregatedMetrics metrics = AggregateRun(MixedWindows(0), 12);
  EXPECT_NEAR(metrics.efficiency().core_efficiency_over_core_seconds_fraction(), 1.0, 1e-9);
  EXPECT_EQ(metrics.impossible_figures_size(), 0) << metrics.DebugString();
}

TEST(InvariantsTest, ChunkLongerThanTheRun) {
  TestRun run = MixedWindows(0);
  run.chunks.Mutable(0)->set_duration_seconds(30);
  const v1::AggregatedMetrics metrics = AggregateRun(run, 12);
  bool found = false;
  for (const v1::ImpossibleFigure& figure : metrics.impossible_figures()) {
    if (figure.code() != "invalid_duration") continue;
    found = true;
    EXPECT_EQ(figure.figure(), "chunk_duration_max");
    EXPECT_EQ(figure.value(), 30);
    EXPECT_EQ(figure.limit(), 12);
  }
  EXPECT_TRUE(found) << metrics.DebugString();
}

TEST(InvariantsTest, SharesAboveOneAreInvalidShares) {
  v1::AggregatedMetrics metrics;
  metrics.mutable_cpu()->set_chunk_wall_seconds(10);
  metrics.mutable_cpu()->set_chunk_cpu_seconds(14);
  v1::SectionStats& section = *metrics.mutable_chunks()->add_section_stats();
  section.set_name("read");
  section.set_share_of_chunk_time_fraction(1.2);
  aggregation_internal::InvariantInputs inputs;
  inputs.metrics = &metrics;
  const std::vector<v1::ImpossibleFigure> figures = aggregation_internal::CheckInvariants(inputs);
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(figures[0].code(), "invalid_share");
  EXPECT_EQ(figures[0].figure(), "section_stats.read.time.share_of_chunk_time");
  EXPECT_EQ(figures[1].figure(), "chunk_cpu_seconds");
  EXPECT_NEAR(figures[1].value(), 1.4, 1e-12);
  // Rounding is not a violation.
  metrics.mutable_cpu()->set_chunk_cpu_seconds(10 * (1 + 1e-9));
  section.set_share_of_chunk_time_fraction(1.0);
  EXPECT_TRUE(aggregation_internal::CheckInvariants(inputs).empty());
}

}  // namespace
}  // namespace roastcoffea
