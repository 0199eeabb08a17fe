#include "backends/dask/worker_timeline.h"

#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

WorkerSnapshot Worker(const std::string& address, double memory) {
  WorkerSnapshot w;
  w.address = address;
  w.host = "127.0.0.1";
  w.nthreads = 2;
  w.memory_limit_bytes = 1e9;
  w.memory_bytes = memory;
  w.last_seen_unix_seconds = memory;
  w.spilled_bytes = 0;
  w.network_read_bytes_per_second = 1;
  w.network_write_bytes_per_second = 2;
  return w;
}

TEST(WorkerTimelineTest, KeepsOneColumnPerFieldInFirstSeenOrder) {
  WorkerTimeline timeline;
  timeline.Append(10, Worker("tcp://b:1", 100), {3, 0.5});
  timeline.Append(10, Worker("tcp://a:1", 200), {1, 0.25});
  timeline.Append(20, Worker("tcp://b:1", 150), {2, 0.75});
  EXPECT_EQ(timeline.samples(), 3);
  std::vector<v1::WorkerSeries> series = timeline.TakeSegment();
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].worker(), "tcp://b:1");
  EXPECT_EQ(series[0].host(), "127.0.0.1");
  ASSERT_EQ(series[0].time_unix_ns_size(), 2);
  EXPECT_EQ(series[0].memory_bytes(1), 150);
  EXPECT_EQ(series[0].active_tasks(0), 3);
  EXPECT_EQ(series[0].occupancy_seconds(1), 0.75);
  EXPECT_EQ(series[0].cores(0), 2);
  EXPECT_EQ(series[0].network_write_bytes_per_second(1), 2);
  EXPECT_EQ(series[0].disk_read_bytes_per_second_size(), 0) << "never reported";
  EXPECT_EQ(series[1].memory_limit_bytes(0), 1e9);
}

TEST(WorkerTimelineTest, AColumnASampleLacksGoesForTheWorker) {
  WorkerTimeline timeline;
  timeline.Append(10, Worker("tcp://a:1", 100), {0, 1.0});
  WorkerSnapshot lacking = Worker("tcp://a:1", 110);
  lacking.spilled_bytes.reset();
  timeline.Append(20, lacking, {0, std::nullopt});
  timeline.Append(30, Worker("tcp://a:1", 120), {0, 1.0});
  const std::vector<v1::WorkerSeries> series = timeline.TakeSegment();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].time_unix_ns_size(), 3);
  EXPECT_EQ(series[0].spilled_bytes_size(), 0);
  EXPECT_EQ(series[0].occupancy_seconds_size(), 0);
  EXPECT_EQ(series[0].network_read_bytes_per_second_size(), 3);
}

TEST(WorkerTimelineTest, TakingASegmentLeavesOnlyTheNames) {
  WorkerTimeline timeline;
  for (int i = 0; i < 100; ++i) timeline.Append(i, Worker("tcp://a:1", 100 + i), {});
  const int64_t full = timeline.SpaceUsedBytes();
  ASSERT_EQ(timeline.TakeSegment()[0].time_unix_ns_size(), 100);
  EXPECT_EQ(timeline.samples(), 0);
  EXPECT_LT(timeline.SpaceUsedBytes(), full / 10);
  timeline.Append(200, Worker("tcp://a:1", 1), {});
  const std::vector<v1::WorkerSeries> next = timeline.TakeSegment();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].worker(), "tcp://a:1");
  ASSERT_EQ(next[0].time_unix_ns_size(), 1);
  EXPECT_EQ(next[0].time_unix_ns(0), 200);
}

}  // namespace
}  // namespace roastcoffea::dask
