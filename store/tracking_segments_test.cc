#include "store/tracking_segments.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

v1::WorkerSeries Series(const std::string& worker, std::vector<int64_t> times, bool spilled) {
  v1::WorkerSeries s;
  s.set_worker(worker);
  s.set_host("h");
  s.set_kind(v1::SERIES_KIND_SAMPLED);
  for (const int64_t t : times) {
    s.add_time_unix_ns(t);
    s.add_memory_bytes(static_cast<double>(t) * 10);
    s.add_cores(2);
    if (spilled) s.add_spilled_bytes(1);
  }
  return s;
}

v1::TrackingData Segment(std::vector<int64_t> count_times, std::vector<v1::WorkerSeries> workers) {
  v1::TrackingData t;
  t.set_backend("dask");
  t.set_interval_seconds(0.25);
  t.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
  for (const int64_t time : count_times) {
    t.add_worker_count_time_unix_ns(time);
    t.add_worker_count(static_cast<int32_t>(workers.size()));
  }
  for (v1::WorkerSeries& s : workers) *t.add_workers() = std::move(s);
  return t;
}

// Split anywhere, the joined data is the data kept whole.
TEST(TrackingSegmentsTest, SegmentsJoinToTheWholeSeries) {
  const v1::TrackingData whole =
      Segment({1, 2, 3, 4}, {Series("a", {1, 2, 3, 4}, true), Series("b", {2, 3, 4}, true)});
  v1::TrackingData joined;
  MergeTrackingSegment(Segment({1, 2}, {Series("a", {1, 2}, true), Series("b", {2}, true)}),
                       &joined);
  MergeTrackingSegment(Segment({}, {Series("b", {}, true)}), &joined);  // nothing new
  MergeTrackingSegment(Segment({3, 4}, {Series("b", {3, 4}, true), Series("a", {3, 4}, true)}),
                       &joined);
  EXPECT_EQ(joined.SerializeAsString(), whole.SerializeAsString())
      << joined.DebugString() << "\nvs\n"
      << whole.DebugString();
}

TEST(TrackingSegmentsTest, AColumnMissingInOneSegmentIsDroppedForThatWorker) {
  v1::TrackingData joined;
  MergeTrackingSegment(Segment({1}, {Series("a", {1}, true), Series("b", {1}, true)}), &joined);
  MergeTrackingSegment(Segment({2}, {Series("a", {2}, false), Series("b", {2}, true)}), &joined);
  MergeTrackingSegment(Segment({3}, {Series("a", {3}, true), Series("b", {3}, true)}), &joined);
  ASSERT_EQ(joined.workers_size(), 2);
  EXPECT_EQ(joined.workers(0).time_unix_ns_size(), 3);
  EXPECT_EQ(joined.workers(0).memory_bytes_size(), 3);
  EXPECT_EQ(joined.workers(0).spilled_bytes_size(), 0);
  EXPECT_EQ(joined.workers(1).spilled_bytes_size(), 3);
  EXPECT_EQ(joined.worker_count_size(), 3);
}

// Hours of segments hold at most the budget per worker; what the figures read is kept.
TEST(TrackingSegmentsTest, JoiningManySegmentsStaysWithinTheBudget) {
  constexpr int kBudget = 64;
  v1::TrackingData joined;
  int64_t t = 1'000'000'000;
  for (int segment = 0; segment < 100; ++segment) {
    std::vector<int64_t> times;
    for (int i = 0; i < 120; ++i) times.push_back(t += 250'000'000);
    MergeTrackingSegment(Segment({times.front()}, {Series("a", times, true)}), &joined, kBudget);
    ASSERT_LE(joined.workers(0).time_unix_ns_size(), kBudget);
  }
  const v1::WorkerSeries& a = joined.workers(0);
  EXPECT_EQ(a.samples_before_reduction(), 100 * 120);
  EXPECT_EQ(a.time_unix_ns(0), 1'250'000'000);
  EXPECT_EQ(a.time_unix_ns(a.time_unix_ns_size() - 1), t);
  EXPECT_EQ(a.max_memory_bytes(), static_cast<double>(t) * 10);  // the last sample is the peak
  EXPECT_EQ(a.spilled_bytes_size(), a.time_unix_ns_size());
  EXPECT_EQ(joined.worker_count_size(), 100);  // the count is small and kept whole

  v1::TrackingData unbounded;
  MergeTrackingSegment(Segment({}, {Series("a", {1, 2, 3, 4, 5, 6, 7, 8}, true)}), &unbounded, 0);
  MergeTrackingSegment(Segment({}, {Series("a", {9, 10, 11, 12, 13, 14, 15, 16, 17}, true)}),
                       &unbounded, 0);
  EXPECT_EQ(unbounded.workers(0).time_unix_ns_size(), 17);
  EXPECT_EQ(unbounded.workers(0).samples_before_reduction(), 0);
}

// The default budget is the tracking's: a few workers keep every sample far past 1,024; as
// workers join, each one's share falls to the floor.
TEST(TrackingSegmentsTest, TheDefaultBudgetIsTheTrackingsShareOfItsWorkerSamples) {
  EXPECT_EQ(MaxSamplesPerWorker(1), kMaxTrackingSamples);
  EXPECT_EQ(MaxSamplesPerWorker(10), kMaxTrackingSamples / 10);
  EXPECT_EQ(MaxSamplesPerWorker(100'000), kDefaultMaxSamplesPerWorker);
  v1::TrackingData joined;
  std::vector<int64_t> times;
  for (int i = 1; i <= 5'000; ++i) times.push_back(int64_t{i} * 250'000'000);
  MergeTrackingSegment(Segment({}, {Series("a", times, true), Series("b", times, true)}), &joined);
  EXPECT_EQ(joined.workers(0).time_unix_ns_size(), 5'000);
  EXPECT_EQ(joined.workers(0).samples_before_reduction(), 0);
  // 2,000 workers: a share of 524 is raised to the floor, and 5,000 samples are reduced.
  v1::TrackingData many;
  std::vector<v1::WorkerSeries> series;
  for (int w = 0; w < 2'000; ++w) series.push_back(Series(absl::StrCat("w", w), {1, 2}, true));
  series.push_back(Series("a", times, true));
  MergeTrackingSegment(Segment({}, series), &many);
  EXPECT_LE(many.workers(2'000).time_unix_ns_size(), kDefaultMaxSamplesPerWorker);
  EXPECT_EQ(many.workers(2'000).samples_before_reduction(), 5'000);
}

TEST(TrackingSegmentsTest, GapsAreAppended) {
  v1::TrackingData joined;
  v1::TrackingData first = Segment({1}, {});
  first.add_gaps()->set_reason("one");
  v1::TrackingData second = Segment({2}, {});
  second.add_gaps()->set_reason("two");
  MergeTrackingSegment(first, &joined);
  MergeTrackingSegment(second, &joined);
  ASSERT_EQ(joined.gaps_size(), 2);
  EXPECT_EQ(joined.gaps(1).reason(), "two");
}

// A series whose cores are stored once (schema/worker_series_columns.h) joins as the same
// series with its cores at every point.
TEST(TrackingSegmentsTest, ColumnsStoredOnceJoinAsAtEveryPoint) {
  const v1::TrackingData whole = Segment({1, 2, 3, 4}, {Series("a", {1, 2, 3, 4}, false)});
  v1::TrackingData first = Segment({1, 2}, {Series("a", {1, 2}, false)});
  v1::TrackingData second = Segment({3, 4}, {Series("a", {3, 4}, false)});
  for (v1::TrackingData* part : {&first, &second}) {
    part->mutable_workers(0)->mutable_cores()->Truncate(1);  // 2 at every point, stored once
  }
  v1::TrackingData joined;
  MergeTrackingSegment(first, &joined);
  MergeTrackingSegment(second, &joined);
  EXPECT_EQ(joined.SerializeAsString(), whole.SerializeAsString())
      << joined.DebugString() << "\nvs\n"
      << whole.DebugString();
}

}  // namespace
}  // namespace roastcoffea
