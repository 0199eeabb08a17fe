#include "aggregation/chunk_stats.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

v1::ChunkRecord Chunk(double duration, int64_t events, const std::string& dataset = "ds") {
  v1::ChunkRecord chunk;
  chunk.set_dataset(dataset);
  chunk.set_duration_seconds(duration);
  chunk.set_events(events);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

v1::ChunkRecord WithMemory(v1::ChunkRecord chunk, int64_t before, int64_t after) {
  chunk.set_memory_before_bytes(before);
  chunk.set_memory_after_bytes(after);
  return chunk;
}

v1::ChunkRecord Failed(v1::ChunkRecord chunk) {
  chunk.set_status(v1::CHUNK_STATUS_FAILED);
  chunk.set_error_text("boom");
  return chunk;
}

TEST(ChunkMetricsTest, NoRecordsGivesNothing) { EXPECT_FALSE(ComputeChunkMetrics({}).has_value()); }

TEST(ChunkMetricsTest, DurationStatisticsOfOneToFour) {
  // docs/reference.md §4: durations [1,2,3,4] -> mean 2.5, sample std 1.29099.
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({Chunk(1, 10), Chunk(2, 20), Chunk(3, 30), Chunk(4, 40)});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->num_chunks(), 4);
  EXPECT_EQ(m->num_successful_chunks(), 4);
  EXPECT_EQ(m->num_failed_chunks(), 0);
  EXPECT_EQ(m->duration_seconds().count(), 4);
  EXPECT_DOUBLE_EQ(m->duration_seconds().mean(), 2.5);
  EXPECT_DOUBLE_EQ(m->duration_seconds().min(), 1);
  EXPECT_DOUBLE_EQ(m->duration_seconds().max(), 4);
  EXPECT_NEAR(m->duration_seconds().std(), 1.29099, 1e-5);
  EXPECT_EQ(m->total_events_from_chunks(), 100);
  EXPECT_DOUBLE_EQ(m->events().mean(), 25);
  EXPECT_DOUBLE_EQ(m->events().min(), 10);
  EXPECT_DOUBLE_EQ(m->events().max(), 40);
}

TEST(ChunkMetricsTest, RecordsThatNeverCountEventsLeaveEventStatisticsUnknown) {
  // Engine tasks without a Coffea chunk record: durations known, events not.
  const std::optional<v1::ChunkMetrics> metrics =
      ComputeChunkMetrics({Chunk(1.0, 0), Chunk(2.0, 0, "other")});
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->duration_seconds().count(), 2);
  EXPECT_FALSE(metrics->has_events());
  EXPECT_FALSE(metrics->has_time_per_event_seconds());
  ASSERT_EQ(metrics->per_dataset_size(), 2);
  EXPECT_FALSE(metrics->per_dataset(0).has_events_distribution());
  // One chunk that counts events makes them known, zeros included.
  const std::optional<v1::ChunkMetrics> some = ComputeChunkMetrics({Chunk(1.0, 0), Chunk(2.0, 10)});
  ASSERT_TRUE(some.has_value());
  EXPECT_EQ(some->events().count(), 2);
  EXPECT_DOUBLE_EQ(some->events().min(), 0.0);
}

// Values only some successful records have (memory, time per event) keep each value's dataset,
// whether the records without one come first, between or last.
TEST(ChunkMetricsTest, PartialColumnsKeepTheirDatasets) {
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics(
      {WithMemory(Chunk(1, 10, "a"), 100, 110), WithMemory(Chunk(1, 10, "b"), 100, 120),
       Chunk(1, 0, "a"), WithMemory(Chunk(1, 10, "a"), 100, 130),
       WithMemory(Chunk(1, 5, "b"), 100, 140), Chunk(4, 0, "b")});
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->per_dataset_size(), 2);
  const v1::DatasetChunkMetrics& a = m->per_dataset(0);
  const v1::DatasetChunkMetrics& b = m->per_dataset(1);
  ASSERT_EQ(a.dataset(), "a");
  EXPECT_EQ(a.memory_delta_distribution_bytes().count(), 2);
  EXPECT_DOUBLE_EQ(a.memory_delta_distribution_bytes().min(), 10);
  EXPECT_DOUBLE_EQ(a.memory_delta_distribution_bytes().max(), 30);
  EXPECT_DOUBLE_EQ(b.memory_delta_distribution_bytes().min(), 20);
  EXPECT_DOUBLE_EQ(b.memory_delta_distribution_bytes().max(), 40);
  EXPECT_EQ(a.time_per_event_distribution_seconds().count(), 2);
  EXPECT_DOUBLE_EQ(b.time_per_event_distribution_seconds().min(), 0.1);
  EXPECT_DOUBLE_EQ(b.time_per_event_distribution_seconds().max(), 0.2);
}

TEST(ChunkMetricsTest, SingleChunkHasZeroStd) {
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({Chunk(1.5, 7)});
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->duration_seconds().std(), 0);
  EXPECT_DOUBLE_EQ(m->duration_seconds().mean(), 1.5);
}

v1::ChunkRecord RanOn(v1::ChunkRecord chunk, const std::string& worker, int64_t start,
                      int64_t end) {
  chunk.set_worker(worker);
  chunk.set_start_unix_ns(start);
  chunk.set_end_unix_ns(end);
  return chunk;
}

TEST(ChunkMetricsTest, MemorySourceSaysWhenChunksSharedAProcess) {
  // One chunk at a time per process: the delta is the chunk's own.
  const std::optional<v1::ChunkMetrics> serial =
      ComputeChunkMetrics({RanOn(WithMemory(Chunk(1, 1), 10, 20), "h:1/thread-0", 0, 100),
                           RanOn(WithMemory(Chunk(1, 1), 20, 30), "h:1/thread-1", 100, 200),
                           RanOn(WithMemory(Chunk(1, 1), 20, 30), "h:2/thread-0", 50, 150)});
  ASSERT_TRUE(serial.has_value());
  EXPECT_EQ(serial->memory_delta_source(), v1::MEMORY_SOURCE_PROCESS_RSS);
  // Two threads of one process at once: other threads' allocations are in each delta.
  const std::optional<v1::ChunkMetrics> shared =
      ComputeChunkMetrics({RanOn(WithMemory(Chunk(1, 1), 10, 20), "h:1/thread-0", 0, 100),
                           RanOn(WithMemory(Chunk(1, 1), 20, 5), "h:1/thread-1", 50, 150)});
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->memory_delta_source(), v1::MEMORY_SOURCE_SHARED_PROCESS_RSS);
}

// Two records of one process overlap when, in (start, end) order, one starts before an
// earlier one ends (a zero-length record overlaps nothing starting at its instant).
bool OverlapByPairs(const std::vector<v1::ChunkRecord>& chunks) {
  for (const v1::ChunkRecord& a : chunks) {
    for (const v1::ChunkRecord& b : chunks) {
      if (&a == &b || a.worker().substr(0, 3) != b.worker().substr(0, 3)) continue;
      const bool a_first = std::make_pair(a.start_unix_ns(), a.end_unix_ns()) <=
                           std::make_pair(b.start_unix_ns(), b.end_unix_ns());
      if (a_first && b.start_unix_ns() < a.end_unix_ns()) return true;
    }
  }
  return false;
}

TEST(ChunkMetricsTest, MemorySourceDoesNotDependOnTheRecordOrder) {
  // Records in (start, end) order per process take the one-pass path, others the sort; both
  // must agree with the pairwise definition, zero-length records and equal starts included.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, 3);
  int overlapping_runs = 0;
  for (int run = 0; run < 300; ++run) {
    std::vector<v1::ChunkRecord> chunks;
    for (int i = 0; i < 4; ++i) {
      const int64_t start = pick(rng) * 10;
      chunks.push_back(RanOn(WithMemory(Chunk(1, 1), 10, 20),
                             absl::StrCat("h:", pick(rng), "/thread-", pick(rng)), start,
                             start + pick(rng) * 10));
    }
    const bool expected = OverlapByPairs(chunks);
    overlapping_runs += expected ? 1 : 0;
    for (int order = 0; order < 2; ++order) {
      if (order == 1) {
        std::sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) {
          return std::make_pair(a.start_unix_ns(), a.end_unix_ns()) <
                 std::make_pair(b.start_unix_ns(), b.end_unix_ns());
        });
      }
      const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics(chunks);
      ASSERT_TRUE(m.has_value());
      EXPECT_EQ(m->memory_delta_source(),
                expected ? v1::MEMORY_SOURCE_SHARED_PROCESS_RSS : v1::MEMORY_SOURCE_PROCESS_RSS)
          << "run " << run << " order " << order;
    }
  }
  // Both answers occur, so the comparison means something.
  EXPECT_GT(overlapping_runs, 30);
  EXPECT_LT(overlapping_runs, 270);
}

TEST(ChunkMetricsTest, PeakLiveBytesFromAllocationCounting) {
  v1::ChunkRecord a = Chunk(1, 1), b = Chunk(1, 1), c = Chunk(1, 1);
  a.set_peak_live_bytes(100);
  b.set_peak_live_bytes(300);
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({a, b, c});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->peak_live_bytes().count(), 2);
  EXPECT_DOUBLE_EQ(m->peak_live_bytes().mean(), 200);
  EXPECT_DOUBLE_EQ(m->peak_live_bytes().max(), 300);
  EXPECT_FALSE(m->has_memory_delta_bytes());
  EXPECT_EQ(m->memory_delta_source(), v1::MEMORY_SOURCE_UNSPECIFIED);
}

TEST(ChunkMetricsTest, MemoryDeltaIsAfterMinusBefore) {
  // docs/reference.md §4: deltas 10, 20, 30 MiB -> mean 20, std 10 (stored in bytes).
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({WithMemory(Chunk(1, 1), 100 * kMiB, 110 * kMiB),
                           WithMemory(Chunk(1, 1), 100 * kMiB, 120 * kMiB),
                           WithMemory(Chunk(1, 1), 200 * kMiB, 230 * kMiB)});
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->has_memory_delta_bytes());
  EXPECT_EQ(m->memory_delta_bytes().count(), 3);
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().mean(), 20.0 * kMiB);
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().min(), 10.0 * kMiB);
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().max(), 30.0 * kMiB);
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().std(), 10.0 * kMiB);
}

TEST(ChunkMetricsTest, NegativeMemoryDeltaIsKept) {
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({WithMemory(Chunk(1, 1), 300 * kMiB, 250 * kMiB)});
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().mean(), -50.0 * kMiB);
}

TEST(ChunkMetricsTest, ChunksWithoutMemoryReadingsAreLeftOutOfMemoryStats) {
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({WithMemory(Chunk(1, 1), 100, 150), Chunk(2, 1)});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->memory_delta_bytes().count(), 1);
  EXPECT_DOUBLE_EQ(m->memory_delta_bytes().mean(), 50);
  EXPECT_EQ(m->duration_seconds().count(), 2);
}

TEST(ChunkMetricsTest, NoMemoryReadingsLeaveMemoryStatsUnset) {
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({Chunk(1, 1), Chunk(2, 1)});
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->has_memory_delta_bytes());
}

TEST(ChunkMetricsTest, FailedChunksAreCountedButLeftOutOfStatistics) {
  // docs/reference.md §4: durations [1.0, error, 2.0] -> mean 1.5 and 300 events (100 + 200 on the
  // successful chunks; the failed chunk's 1000 are left out).
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({Chunk(1.0, 100), Failed(Chunk(99.0, 1000)), Chunk(2.0, 200)});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->num_chunks(), 3);
  EXPECT_EQ(m->num_successful_chunks(), 2);
  EXPECT_EQ(m->num_failed_chunks(), 1);
  EXPECT_DOUBLE_EQ(m->duration_seconds().mean(), 1.5);
  EXPECT_EQ(m->total_events_from_chunks(), 300);
  ASSERT_EQ(m->per_dataset_size(), 1);
  EXPECT_EQ(m->per_dataset(0).num_chunks(), 2);
}

TEST(ChunkMetricsTest, AllFailedGivesCountsOnly) {
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({Failed(Chunk(1, 1)), Failed(Chunk(2, 2))});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->num_chunks(), 2);
  EXPECT_EQ(m->num_successful_chunks(), 0);
  EXPECT_EQ(m->num_failed_chunks(), 2);
  EXPECT_FALSE(m->has_duration_seconds());
  EXPECT_FALSE(m->has_events());
  EXPECT_FALSE(m->has_memory_delta_bytes());
  EXPECT_EQ(m->total_events_from_chunks(), 0);
  EXPECT_EQ(m->per_dataset_size(), 0);
}

TEST(ChunkMetricsTest, PerDatasetBreakdown) {
  // docs/reference.md §4: dataset A {1 s, 3 s; 100, 300 events} -> 2 chunks, mean 2 s, 400 events,
  // 200 per chunk.
  const std::optional<v1::ChunkMetrics> m =
      ComputeChunkMetrics({Chunk(1, 100, "A"), Chunk(5, 0, "B"), Chunk(3, 300, "A")});
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->per_dataset_size(), 2);
  const v1::DatasetChunkMetrics& a = m->per_dataset(0);
  EXPECT_EQ(a.dataset(), "A");
  EXPECT_EQ(a.num_chunks(), 2);
  EXPECT_DOUBLE_EQ(a.total_duration_seconds(), 4);
  EXPECT_DOUBLE_EQ(a.mean_duration_seconds(), 2);
  EXPECT_EQ(a.total_events(), 400);
  ASSERT_TRUE(a.has_mean_events_per_chunk());
  EXPECT_DOUBLE_EQ(a.mean_events_per_chunk(), 200);
  // B has no events: mean_events_per_chunk stays unset, as in the original.
  const v1::DatasetChunkMetrics& b = m->per_dataset(1);
  EXPECT_EQ(b.dataset(), "B");
  EXPECT_EQ(b.num_chunks(), 1);
  EXPECT_EQ(b.total_events(), 0);
  EXPECT_FALSE(b.has_mean_events_per_chunk());
}

TEST(ChunkMetricsTest, ChunksWithoutDatasetGoToUnknown) {
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({Chunk(1, 10, "")});
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->per_dataset_size(), 1);
  EXPECT_EQ(m->per_dataset(0).dataset(), "unknown");
}

TEST(ChunkMetricsTest, ZeroDurationIsValid) {
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({Chunk(0, 10)});
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->duration_seconds().mean(), 0);
  EXPECT_DOUBLE_EQ(m->per_dataset(0).mean_duration_seconds(), 0);
}

TEST(ChunkMetricsTest, RecordOrderDoesNotMatter) {
  std::vector<v1::ChunkRecord> chunks = {WithMemory(Chunk(0.1, 5, "Z"), 10, 30),
                                         Chunk(0.2, 7, "A"),
                                         WithMemory(Chunk(0.3, 11, "Z"), 50, 20),
                                         Failed(Chunk(4, 1, "Q")),
                                         Chunk(1e16, 13, "A"),
                                         Chunk(0.7, 17, "M")};
  const std::optional<v1::ChunkMetrics> expected = ComputeChunkMetrics(chunks);
  ASSERT_TRUE(expected.has_value());
  std::sort(chunks.begin(), chunks.end(), [](const v1::ChunkRecord& a, const v1::ChunkRecord& b) {
    return a.duration_seconds() > b.duration_seconds();
  });
  do {
    const std::optional<v1::ChunkMetrics> actual = ComputeChunkMetrics(chunks);
    ASSERT_TRUE(actual.has_value());
    EXPECT_EQ(actual->SerializeAsString(), expected->SerializeAsString());
  } while (std::next_permutation(chunks.begin(), chunks.end(),
                                 [](const v1::ChunkRecord& a, const v1::ChunkRecord& b) {
                                   return a.duration_seconds() > b.duration_seconds();
                                 }));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea

namespace roastcoffea {
namespace aggregation_internal {
namespace {

TEST(ChunkMetricsTest, SectionsOfSuccessfulChunksAndFailuresWithErrorText) {
  v1::ChunkRecord ok = Chunk(2, 10);
  v1::SectionRecord* jets = ok.add_sections();
  jets->set_name("jets");
  jets->set_kind(v1::SectionRecord::KIND_TIME);
  jets->set_entries(1);
  jets->set_duration_seconds(0.5);
  v1::ChunkRecord failed = Failed(ok);  // its section is not counted
  failed.set_uuid("bad");
  failed.set_task_id("45");
  const std::optional<v1::ChunkMetrics> m = ComputeChunkMetrics({ok, failed});
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->sections_size(), 1);
  EXPECT_EQ(m->sections(0).count(), 1);
  ASSERT_EQ(m->section_stats_size(), 1);
  EXPECT_DOUBLE_EQ(m->section_stats(0).share_of_chunk_time_fraction(), 0.25);
  ASSERT_EQ(m->failed_chunks_size(), 1);
  EXPECT_EQ(m->failed_chunks(0).uuid(), "bad");
  EXPECT_EQ(m->failed_chunks(0).error_text(), "boom");
  EXPECT_EQ(m->failed_chunks(0).task_id(), "45");
  EXPECT_DOUBLE_EQ(m->duration_seconds().percentiles().p50(), 2);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
