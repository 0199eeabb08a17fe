// AnalyseCapacity reads step series in time order: merged where they lie when each series is in
// time order (every log-made one), from a sorted copy otherwise, with the same timeline.
#include "aggregation/capacity.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

struct Point {
  int64_t ns;
  double executing;
};

void AddWorker(const char* name, double cores, const std::vector<Point>& points,
               v1::TrackingData* tracking) {
  v1::WorkerSeries* w = tracking->add_workers();
  w->set_worker(name);
  w->set_kind(v1::SERIES_KIND_STEP);
  for (const Point& p : points) {
    w->add_time_unix_ns(p.ns);
    w->add_cores(cores);
    w->add_executing_tasks(p.executing);
  }
}

// Two one-core workers and a queue that waits while a slot is free (dispatch-bound), with
// worker-a's points in `a_points`' order.
v1::TrackingData TwoWorkers(const std::vector<Point>& a_points) {
  v1::TrackingData tracking;
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (const auto& [ns, queued] : std::vector<std::pair<int64_t, int>>{
           {0, 3}, {4 * kSecond, 2}, {9 * kSecond, 0}, {20 * kSecond, 0}}) {
    tracking.add_worker_count_time_unix_ns(ns);
    tracking.add_worker_count(2);
    tracking.add_queued_chunks(queued);
  }
  AddWorker("worker-a", 1, a_points, &tracking);
  AddWorker("worker-b", 1, {{0, 1}, {12 * kSecond, 0}, {20 * kSecond, 0}}, &tracking);
  return tracking;
}

void ExpectSameTimeline(const CapacityTimeline& a, const CapacityTimeline& b) {
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_DOUBLE_EQ(a.slot_seconds, b.slot_seconds);
  EXPECT_DOUBLE_EQ(a.waiting_seconds, b.waiting_seconds);
  EXPECT_DOUBLE_EQ(a.worker_bound_seconds, b.worker_bound_seconds);
  EXPECT_DOUBLE_EQ(a.dispatch_bound_seconds, b.dispatch_bound_seconds);
  EXPECT_DOUBLE_EQ(a.free_slot_seconds_while_waiting, b.free_slot_seconds_while_waiting);
  EXPECT_DOUBLE_EQ(a.underfed_seconds, b.underfed_seconds);
  EXPECT_EQ(a.dispatch_stalls.size(), b.dispatch_stalls.size());
  EXPECT_EQ(a.startups.size(), b.startups.size());
}

TEST(AnalyseCapacity, SeriesOutOfTimeOrderAreReadInTimeOrder) {
  // worker-a idles 0-4 s while 3 tasks wait (dispatch-bound), runs 4-9 s, idles, leaves at 20 s.
  const std::vector<Point> in_order = {
      {0, 0}, {4 * kSecond, 1}, {9 * kSecond, 0}, {15 * kSecond, 0}, {20 * kSecond, 0}};
  const std::optional<CapacityTimeline> sorted = AnalyseCapacity(TwoWorkers(in_order));
  ASSERT_TRUE(sorted.has_value());
  EXPECT_DOUBLE_EQ(sorted->dispatch_bound_seconds, 4.0);
  EXPECT_DOUBLE_EQ(sorted->worker_bound_seconds, 5.0);

  // The same points, the middle ones stored out of time order (the last stays last).
  const std::vector<Point> shuffled = {
      {0, 0}, {15 * kSecond, 0}, {9 * kSecond, 0}, {4 * kSecond, 1}, {20 * kSecond, 0}};
  const std::optional<CapacityTimeline> unsorted = AnalyseCapacity(TwoWorkers(shuffled));
  ASSERT_TRUE(unsorted.has_value());
  ExpectSameTimeline(*unsorted, *sorted);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
