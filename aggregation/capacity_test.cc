// AnalyseCapacity reads step series in time order: merged where they lie when each series is in
// time order (every log-made one), from a sorted copy otherwise, with the same timeline.
#include "aggregation/capacity.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
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

// Many series changing at the same instants (a run's tasks start and end together), some
// workers with several cores per task: the merge of the series where they lie gives what the
// sorted copy gives. The copy is taken when one series is out of time order: the queue's first
// two points swapped, which the copy's stable sort puts back.
TEST(AnalyseCapacity, ManySeriesMergedAsTheSortedCopy) {
  std::mt19937_64 rng(3);
  v1::TrackingData tracking;
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (int k = 0; k < 200; ++k) {
    tracking.add_worker_count_time_unix_ns(k * kSecond / 2);
    tracking.add_worker_count(40);
    tracking.add_queued_chunks(k % 7 == 6 ? 0 : static_cast<int>(rng() % 50));
  }
  CoresPerTask cores_per_task;
  for (int w = 0; w < 40; ++w) {
    const std::string name = "worker-" + std::to_string(w);
    const double cores = 1 + static_cast<double>(w % 4);
    std::vector<Point> points;
    int64_t ns = static_cast<int64_t>(rng() % 4) * kSecond / 2;
    while (ns < 100 * kSecond) {
      points.push_back({ns, static_cast<double>(rng() % 5)});
      // Half-second steps: most instants are shared by many workers; some repeat an instant.
      ns += static_cast<int64_t>(rng() % 3) * kSecond / 2;
    }
    AddWorker(name.c_str(), cores, points, &tracking);
    if (w % 3 == 0) cores_per_task[name] = 2;
  }
  const std::optional<CapacityTimeline> merged = AnalyseCapacity(tracking, &cores_per_task);
  ASSERT_TRUE(merged.has_value());
  EXPECT_GT(merged->dispatch_bound_seconds, 0);
  EXPECT_GT(merged->worker_bound_seconds, 0);

  v1::TrackingData copied = tracking;
  copied.mutable_worker_count_time_unix_ns()->SwapElements(0, 1);
  copied.mutable_queued_chunks()->SwapElements(0, 1);
  copied.mutable_worker_count()->SwapElements(0, 1);
  const std::optional<CapacityTimeline> sorted = AnalyseCapacity(copied, &cores_per_task);
  ASSERT_TRUE(sorted.has_value());
  ExpectSameTimeline(*merged, *sorted);
  EXPECT_EQ(merged->slot_seconds, sorted->slot_seconds);
  EXPECT_EQ(merged->longest_dispatch_stall.start_ns, sorted->longest_dispatch_stall.start_ns);
  EXPECT_EQ(merged->longest_underfed_stall.end_ns, sorted->longest_underfed_stall.end_ns);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
