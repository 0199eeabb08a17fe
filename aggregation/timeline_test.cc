#include "aggregation/timeline.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

constexpr int64_t kT0 = 1767268800LL * 1000000000;  // 2026-01-01 12:00:00 UTC
constexpr int64_t kSecond = 1000000000;

v1::ChunkRecord* AddChunk(v1::Measurement* m, const std::string& worker, int thread,
                          const std::string& dataset, double start_s, double end_s, int64_t bytes) {
  v1::ChunkRecord* chunk = m->add_chunks();
  chunk->set_worker(worker);
  chunk->set_thread_index(thread);
  chunk->set_dataset(dataset);
  chunk->set_start_unix_ns(kT0 + static_cast<int64_t>(start_s * kSecond));
  chunk->set_end_unix_ns(kT0 + static_cast<int64_t>(end_s * kSecond));
  chunk->set_compressed_bytes_read(bytes);
  return chunk;
}

TEST(TimelineTest, OriginIsTheStartTimeElseTheEarliestInstant) {
  v1::Measurement m;
  EXPECT_EQ(TimelineOriginUnixNs(m), 0);
  AddChunk(&m, "w", 0, "a", 2, 3, 0);
  EXPECT_EQ(TimelineOriginUnixNs(m), kT0 + 2 * kSecond);
  m.mutable_metadata()->mutable_start_time()->set_seconds(kT0 / kSecond);
  EXPECT_EQ(TimelineOriginUnixNs(m), kT0);
  EXPECT_DOUBLE_EQ(SecondsSince(kT0, kT0 + 1500000000), 1.5);
  EXPECT_DOUBLE_EQ(SecondsSince(kT0 + 1, kT0), -1e-9);
  // Issue #16: an absurd saved start (crafted near INT64_MAX seconds) is not the origin.
  m.mutable_metadata()->mutable_start_time()->set_seconds(9223372036854775807);
  EXPECT_EQ(TimelineOriginUnixNs(m), kT0 + 2 * kSecond);
  m.mutable_metadata()->mutable_start_time()->set_seconds(8993721600);  // 2255-01-01
  EXPECT_EQ(TimelineOriginUnixNs(m), kT0 + 2 * kSecond);
}

TEST(TimelineTest, ReadRateSpreadsEachChunkOverItsDuration) {
  v1::Measurement m;
  // 4 MB over [0, 4] s and 2 MB over [2, 4] s: 1 MB/s, then 2 MB/s.
  AddChunk(&m, "w", 0, "a", 0, 4, 4000000);
  AddChunk(&m, "w", 1, "a", 2, 4, 2000000);
  const StepTimeline rate = ReadRateTimeline(m, kT0, 4);
  EXPECT_THAT(rate.time_seconds, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(rate.value, ElementsAre(DoubleNear(1e6, 1), DoubleNear(1e6, 1), DoubleNear(2e6, 1),
                                      DoubleNear(2e6, 1), DoubleNear(2e6, 1)));
  // The integral is the bytes read.
  double total = 0;
  for (size_t i = 0; i + 1 < rate.value.size(); ++i) {
    total += rate.value[i] * (rate.time_seconds[i + 1] - rate.time_seconds[i]);
  }
  EXPECT_NEAR(total, 6e6, 1);
  EXPECT_TRUE(ReadRateTimeline(v1::Measurement(), kT0).value.empty());
}

TEST(TimelineTest, RunningChunksStepsAtStartsAndEnds) {
  v1::Measurement m;
  AddChunk(&m, "w", 0, "a", 0, 2, 0);
  AddChunk(&m, "w", 1, "a", 1, 3, 0);
  AddChunk(&m, "w", 0, "a", 2, 3, 0);  // starts when the first ends: stays at 2
  const StepTimeline running = RunningChunksTimeline(m, kT0);
  EXPECT_THAT(running.time_seconds, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(running.value, ElementsAre(1, 2, 2, 0));
}

// Records out of start order, several changes at one instant, ends out of order: each instant
// once, with every change there counted.
TEST(TimelineTest, RunningChunksOfRecordsOutOfOrder) {
  v1::Measurement m;
  AddChunk(&m, "w", 0, "a", 5, 9, 0);
  AddChunk(&m, "w", 1, "a", 1, 5, 0);
  AddChunk(&m, "w", 2, "a", 1, 2, 0);
  AddChunk(&m, "w", 3, "a", 5, 5, 0);  // zero length: +1 and -1 at 5
  AddChunk(&m, "w", 4, "a", 0, 9, 0);
  const StepTimeline running = RunningChunksTimeline(m, kT0);
  EXPECT_THAT(running.time_seconds, ElementsAre(0, 1, 2, 5, 9));
  EXPECT_THAT(running.value, ElementsAre(1, 3, 2, 2, 0));
}

TEST(TimelineTest, BinnedMeanIsTimeWeighted) {
  StepTimeline running;
  running.time_seconds = {0, 0.5, 1, 2};
  running.value = {2, 0, 1, 0};
  const StepTimeline mean = BinnedMean(running, 2);
  EXPECT_THAT(mean.time_seconds, ElementsAre(0, 1, 2));
  EXPECT_THAT(mean.value, ElementsAre(DoubleNear(1, 1e-12), DoubleNear(1, 1e-12), 1));
  EXPECT_EQ(BinnedMean(StepTimeline(), 3).value.size(), 0u);
}

TEST(TimelineTest, LanesCountBusyAndIdleTimeAndBinByDataset) {
  v1::Measurement m;
  AddChunk(&m, "w", 0, "a", 0, 1, 0);
  AddChunk(&m, "w", 0, "b", 3, 4, 0);
  AddChunk(&m, "w", 1, "b", 0, 4, 0);
  m.add_chunks()->set_dataset("never started");
  const ChunkLanes lanes = BuildChunkLanes(m, kT0);
  ASSERT_EQ(lanes.lanes.size(), 2u);
  EXPECT_EQ(lanes.chunk_count, 3u);
  EXPECT_THAT(lanes.datasets, ElementsAre("a", "b"));
  EXPECT_DOUBLE_EQ(lanes.lanes[0].busy_seconds, 2);
  EXPECT_DOUBLE_EQ(lanes.lanes[0].idle_seconds, 2);
  EXPECT_DOUBLE_EQ(lanes.lanes[1].idle_seconds, 0);
  EXPECT_EQ(lanes.lanes[1].slot, 0);
  const std::vector<LaneBins> bins = BinChunkLanes(lanes, 4);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_THAT(bins[0].busy_fraction, ElementsAre(1, 0, 0, 1));
  EXPECT_THAT(bins[0].dominant_dataset, ElementsAre(0, SIZE_MAX, SIZE_MAX, 1));
  EXPECT_THAT(bins[1].dominant_dataset, ElementsAre(1, 1, 1, 1));
}

TEST(TimelineTest, OverlappingChunksOfOneThreadGetSlots) {
  v1::Measurement m;
  AddChunk(&m, "vine", 0, "a", 0, 2, 0);
  AddChunk(&m, "vine", 0, "a", 1, 3, 0);    // overlaps the first: slot 1
  AddChunk(&m, "vine", 0, "a", 2.5, 4, 0);  // the first slot is free again
  const ChunkLanes lanes = BuildChunkLanes(m, kT0);
  ASSERT_EQ(lanes.lanes.size(), 2u);
  EXPECT_EQ(lanes.lanes[0].slot, 0);
  EXPECT_EQ(lanes.lanes[0].chunks.size(), 2u);
  EXPECT_DOUBLE_EQ(lanes.lanes[0].busy_seconds, 3.5);
  EXPECT_EQ(lanes.lanes[1].slot, 1);
  EXPECT_DOUBLE_EQ(lanes.lanes[1].idle_seconds, 2);
}

}  // namespace
}  // namespace roastcoffea
