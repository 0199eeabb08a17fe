#include "collector/live_status.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

BackendLiveProgress DaskLike() {
  BackendLiveProgress progress;
  progress.tasks_by_prefix["process"] = {10, 1, 3};
  progress.tasks_by_prefix["accumulate"] = {4, 0, 1};
  progress.workers = 2;
  progress.cores = 6;
  progress.memory_bytes = 1e9;
  return progress;
}

TEST(LiveStatusTest, EngineTasksOfTheProcessorCountAsChunksUntilRecordsArrive) {
  LiveStatus status;
  AddBackendProgress(DaskLike(), {"proc*"}, &status);
  EXPECT_EQ(status.chunks_ok, 10);
  EXPECT_EQ(status.chunks_failed, 1);
  EXPECT_EQ(status.chunks_running, 3);
  EXPECT_TRUE(status.chunks_from_engine_tasks);
  EXPECT_EQ(status.workers, 2);
  EXPECT_EQ(status.cores, 6);
  EXPECT_EQ(status.worker_memory_bytes, 1e9);
  EXPECT_FALSE(status.worker_memory_limit_bytes.has_value()) << "not known: N/A, not 0";
}

TEST(LiveStatusTest, WithoutProcessorPatternsEveryPrefixCounts) {
  LiveStatus status;
  AddBackendProgress(DaskLike(), {}, &status);
  EXPECT_EQ(status.chunks_ok, 14);
  EXPECT_EQ(status.chunks_running, 4);
}

TEST(LiveStatusTest, TheSessionsOwnChunkRecordsWin) {
  LiveStatus status;
  v1::ChunkRecord record;
  record.set_events(100);
  CountChunk(record, &status);
  AddBackendProgress(DaskLike(), {"process"}, &status);
  EXPECT_EQ(status.chunks_ok, 1);
  EXPECT_EQ(status.events, 100);
  EXPECT_FALSE(status.chunks_from_engine_tasks);
  EXPECT_EQ(status.chunks_running, 3);
}

TEST(LiveStatusTest, TheWorkerTimelineIsBoundedAndKeepsItsSpan) {
  LiveStatus status;
  status.workers = 4;
  status.cores = 8;
  double step = kWorkerTimelineStep;
  std::vector<LiveStatus::WorkerPoint> timeline;
  for (int i = 0; i < 5000; ++i) {
    status.elapsed_seconds = i * 0.5;
    ExtendWorkerTimeline(status, &step, &timeline);
  }
  ASSERT_LE(timeline.size(), kWorkerTimelinePoints);
  ASSERT_GE(timeline.size(), kWorkerTimelinePoints / 2);
  EXPECT_EQ(timeline.front().elapsed_seconds, 0);
  EXPECT_GT(timeline.back().elapsed_seconds, 2499 - 2 * step);
  EXPECT_EQ(timeline.back().workers, 4);
  EXPECT_EQ(timeline.back().cores, 8);
  for (size_t i = 1; i < timeline.size(); ++i) {
    EXPECT_GT(timeline[i].elapsed_seconds, timeline[i - 1].elapsed_seconds);
  }
  // Without workers nothing is added.
  LiveStatus unknown;
  unknown.elapsed_seconds = 1e6;
  const size_t before = timeline.size();
  ExtendWorkerTimeline(unknown, &step, &timeline);
  EXPECT_EQ(timeline.size(), before);
}

}  // namespace
}  // namespace roastcoffea
