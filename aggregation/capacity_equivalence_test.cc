// AnalyseCapacity (capacity.h) takes the timeline's sums, stalls and start-ups from the
// intervals as they come, without holding them (issue #25: ~4 x 10^6 intervals for 10^6 tasks):
// the same timeline, bit for bit, as the implementation that held every interval and read them
// three times, kept below as the reference, on random engine timelines (idle stretches, an
// empty queue refilled later, workers that leave early or never run a task, several cores per
// task, series out of time order). And a log's step series give the same timeline with or
// without the "before" point of each change (the previous state repeated at its instant).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "aggregation/capacity.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// ---- The reference: AnalyseCapacity as it was before the intervals were streamed. ----

// One change of a step series: at `ns`, point `index` of series `series` takes effect.
struct Change {
  int64_t ns;
  size_t series;  // index into tracking.workers(); SIZE_MAX for the queue
  int index;
};

constexpr size_t kQueue = SIZE_MAX;

bool UsableStepSeries(const v1::WorkerSeries& w) {
  return w.kind() == v1::SERIES_KIND_STEP && w.time_unix_ns_size() > 0 &&
         w.cores_size() == w.time_unix_ns_size() &&
         w.executing_tasks_size() == w.time_unix_ns_size();
}

// Extends a stretch by [from, to) when adjacent, else starts a new one; keeps the longest.
void Extend(Stretch& current, Stretch& longest, int64_t from, int64_t to) {
  if (current.end_ns != from || current.end_ns == 0) current = Stretch{from, from};
  current.end_ns = to;
  if (current.Seconds() > longest.Seconds()) longest = current;
}

// The slot timeline between consecutive changes of any series: slots, executing tasks and
// queued tasks over [from, to). Intervals are classified first, the underfed ones only once a
// later queue refill is known.
struct Interval {
  int64_t from, to;
  double slots, busy, waiting;
};

// The changes of the usable step series and of the queue in time order; within an instant by
// series, the queue last, each series' points in stored order (the last change of an instant
// holds). Series in time order (every log-made one) are merged where they lie, by a heap of
// one cursor per series: a 10^6-task run has ~6 x 10^6 points, which a sorted copy held two
// to three times over (24 B each, growth and the sort's buffer: ~380 B per task at the peak
// of collect). Any other input is sorted in a copy, as before.
class ChangeStream {
 public:
  ChangeStream(const v1::TrackingData& tracking, const std::vector<size_t>& usable)
      : tracking_(tracking) {
    bool sorted = std::is_sorted(tracking.worker_count_time_unix_ns().begin(),
                                 tracking.worker_count_time_unix_ns().end());
    for (size_t s : usable) {
      const auto& times = tracking.workers(static_cast<int>(s)).time_unix_ns();
      sorted = sorted && std::is_sorted(times.begin(), times.end());
    }
    if (sorted) {
      for (size_t s : usable) heap_.push_back({Time(s, 0), s, 0});
      if (tracking.worker_count_time_unix_ns_size() > 0) {
        heap_.push_back({Time(kQueue, 0), kQueue, 0});
      }
      std::make_heap(heap_.begin(), heap_.end(), Later());
      return;
    }
    for (size_t s : usable) {
      const auto& times = tracking.workers(static_cast<int>(s)).time_unix_ns();
      for (int i = 0; i < times.size(); ++i) copy_.push_back({times[i], s, i});
    }
    for (int i = 0; i < tracking.worker_count_time_unix_ns_size(); ++i) {
      copy_.push_back({tracking.worker_count_time_unix_ns(i), kQueue, i});
    }
    std::stable_sort(copy_.begin(), copy_.end(),
                     [](const Change& a, const Change& c) { return a.ns < c.ns; });
  }
  bool empty() const { return heap_.empty() && next_ == copy_.size(); }
  const Change& top() const { return heap_.empty() ? copy_[next_] : heap_.front(); }
  void pop() {
    if (heap_.empty()) {
      ++next_;
      return;
    }
    // The top's series moves to its next point in place, sifted down once (a pop and a push
    // would sift twice); a series at its end leaves the heap.
    Change& change = heap_.front();
    if (++change.index < Size(change.series)) {
      change.ns = Time(change.series, change.index);
      SiftDown();
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), Later());
      heap_.pop_back();
    }
  }

 private:
  int Size(size_t s) const {
    return s == kQueue ? tracking_.worker_count_time_unix_ns_size()
                       : tracking_.workers(static_cast<int>(s)).time_unix_ns_size();
  }
  int64_t Time(size_t s, int i) const {
    return s == kQueue ? tracking_.worker_count_time_unix_ns(i)
                       : tracking_.workers(static_cast<int>(s)).time_unix_ns(i);
  }
  struct Later {
    bool operator()(const Change& a, const Change& c) const {
      return a.ns != c.ns ? a.ns > c.ns : a.series > c.series;
    }
  };
  // Restores the heap after the top became later.
  void SiftDown() {
    const size_t n = heap_.size();
    const Change moved = heap_[0];
    size_t at = 0;
    for (;;) {
      size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && Later()(heap_[child], heap_[child + 1])) ++child;
      if (!Later()(moved, heap_[child])) break;
      heap_[at] = heap_[child];
      at = child;
    }
    heap_[at] = moved;
  }
  const v1::TrackingData& tracking_;
  std::vector<Change> heap_;  // a min-heap by (ns, series): the next change on top
  std::vector<Change> copy_;
  size_t next_ = 0;
};

// The intervals of `tracking`'s step series; empty when no worker series is usable.
std::vector<Interval> SlotIntervals(const v1::TrackingData& tracking,
                                    const CoresPerTask* cores_per_task) {
  std::vector<size_t> usable;
  for (size_t s = 0; s < static_cast<size_t>(tracking.workers_size()); ++s) {
    if (UsableStepSeries(tracking.workers(static_cast<int>(s)))) usable.push_back(s);
  }
  if (usable.empty()) return {};
  ChangeStream changes(tracking, usable);

  // Cores one task takes on each usable series' worker (0: one slot per core), looked up once
  // per series rather than once per point.
  std::vector<double> task_cores_of(static_cast<size_t>(tracking.workers_size()), 0);
  if (cores_per_task != nullptr) {
    for (size_t s : usable) {
      const auto it = cores_per_task->find(tracking.workers(static_cast<int>(s)).worker());
      if (it != cores_per_task->end() && it->second > 0) task_cores_of[s] = it->second;
    }
  }
  // State per worker: slots and executing now (0 before its first point and after its last).
  std::vector<double> slots_of(static_cast<size_t>(tracking.workers_size()), 0);
  std::vector<double> busy_of(slots_of.size(), 0);
  double slots = 0, busy = 0, waiting = 0;
  std::vector<Interval> intervals;
  while (!changes.empty()) {
    const int64_t now = changes.top().ns;
    for (; !changes.empty() && changes.top().ns == now; changes.pop()) {
      const Change& change = changes.top();
      if (change.series == kQueue) {
        waiting = std::max(0, tracking.queued_chunks(change.index));
        continue;
      }
      const v1::WorkerSeries& w = tracking.workers(static_cast<int>(change.series));
      const bool last = change.index + 1 == w.time_unix_ns_size();
      double worker_slots = std::max(0.0, w.cores(change.index));
      const double task_cores = task_cores_of[change.series];
      if (task_cores > 0 && worker_slots > 0) {
        // A few ulps below a whole number of tasks still count as that many.
        worker_slots = std::max(1.0, std::floor(worker_slots / task_cores + 1e-6));
      }
      const double new_slots = last ? 0 : worker_slots;
      const double new_busy = last ? 0 : std::max(0.0, w.executing_tasks(change.index));
      slots += new_slots - slots_of[change.series];
      busy += new_busy - busy_of[change.series];
      slots_of[change.series] = new_slots;
      busy_of[change.series] = new_busy;
    }
    if (!changes.empty()) {
      intervals.push_back(
          {now, changes.top().ns, std::max(0.0, slots), std::max(0.0, busy), waiting});
    }
  }
  return intervals;
}

// Sums the intervals into `t` (span, slot time, waiting, dispatch-bound, worker-bound and
// underfed time, the longest stalls); `last_active_ns` is where the last work ended.
void ClassifyIntervals(const std::vector<Interval>& intervals, CapacityTimeline& t,
                       int64_t& last_active_ns) {
  // The timeline ends with the last work: a log that runs on after it (no MANAGER END, idle
  // workers kept connected) adds no capacity to judge.
  int64_t last_waiting_ns = 0;
  last_active_ns = 0;
  for (const Interval& i : intervals) {
    if (i.waiting > 0) last_waiting_ns = i.from;
    if (i.waiting > 0 || i.busy > 0) last_active_ns = i.to;
  }
  Stretch dispatch_run, underfed_run;
  for (Interval i : intervals) {
    i.to = std::min(i.to, last_active_ns);
    if (i.slots < 1 || i.to <= i.from) continue;
    if (t.start_ns == 0) t.start_ns = i.from;
    t.end_ns = i.to;
    const double dt = 1e-9 * static_cast<double>(i.to - i.from);
    const double free = std::max(0.0, i.slots - i.busy);
    t.slot_seconds += i.slots * dt;
    if (i.waiting > 0) {
      t.waiting_seconds += dt;
      if (free >= 1) {
        t.dispatch_bound_seconds += dt;
        t.free_slot_seconds_while_waiting += free * dt;
        Extend(dispatch_run, t.longest_dispatch_stall, i.from, i.to);
      } else {
        t.worker_bound_seconds += dt;
      }
    } else if (free >= 1 && i.from < last_waiting_ns) {
      t.underfed_seconds += dt;
      Extend(underfed_run, t.longest_underfed_stall, i.from, i.to);
    }
  }
}

// Kept stalls: the stretches of dispatch-bound intervals, split where the state changed.
void KeepStalls(const std::vector<Interval>& intervals, int64_t last_active_ns,
                CapacityTimeline& t) {
  Stretch run;
  for (Interval i : intervals) {
    i.to = std::min(i.to, last_active_ns);
    const bool stalled = i.to > i.from && i.slots >= 1 && i.waiting > 0 && i.slots - i.busy >= 1;
    if (stalled && run.end_ns == i.from && run.end_ns != 0) {
      run.end_ns = i.to;
      continue;
    }
    if (run.Seconds() >= kStallKeptSeconds) t.dispatch_stalls.push_back(run);
    run = stalled ? Stretch{i.from, i.to} : Stretch{};
  }
  if (run.Seconds() >= kStallKeptSeconds) t.dispatch_stalls.push_back(run);
}

// Start-ups: waiting time between a worker's first point and its first executing task, from
// prefix sums of the waiting time over the intervals.
void FindStartups(const v1::TrackingData& tracking, const std::vector<Interval>& intervals,
                  CapacityTimeline& t) {
  std::vector<int64_t> bounds;
  std::vector<double> waited_before;  // waiting seconds before bounds[k]
  double waited = 0;
  for (const Interval& i : intervals) {
    bounds.push_back(i.from);
    waited_before.push_back(waited);
    if (i.waiting > 0 && i.to > i.from) waited += 1e-9 * static_cast<double>(i.to - i.from);
  }
  const auto waited_until = [&](int64_t ns) {
    // Intervals are contiguous: the one holding ns contributes its part up to ns.
    const size_t k =
        static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), ns) - bounds.begin());
    if (k == 0) return 0.0;
    const Interval& i = intervals[k - 1];
    const int64_t upto = std::min(ns, i.to);
    return waited_before[k - 1] + (i.waiting > 0 ? 1e-9 * static_cast<double>(upto - i.from) : 0.0);
  };
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (!UsableStepSeries(w)) continue;
    const int64_t connect = w.time_unix_ns(0);
    int64_t first_busy = 0;
    for (int i = 0; i + 1 < w.time_unix_ns_size(); ++i) {
      if (w.executing_tasks(i) > 0) {
        first_busy = w.time_unix_ns(i);
        break;
      }
    }
    if (first_busy == 0) continue;  // never ran a task: no start-up that ended
    const double wait = waited_until(first_busy) - waited_until(connect);
    if (wait > 0) t.startups.push_back({w.worker(), connect, first_busy, wait, w.cores(0)});
  }
}

std::optional<CapacityTimeline> ReferenceAnalyseCapacity(const v1::TrackingData& tracking,
                                                         const CoresPerTask* cores_per_task) {
  if (tracking.worker_count_kind() != v1::SERIES_KIND_STEP ||
      tracking.queued_chunks_size() != tracking.worker_count_time_unix_ns_size() ||
      tracking.queued_chunks_size() == 0) {
    return std::nullopt;
  }
  const std::vector<Interval> intervals = SlotIntervals(tracking, cores_per_task);
  if (intervals.empty()) return std::nullopt;
  CapacityTimeline t;
  int64_t last_active_ns = 0;
  ClassifyIntervals(intervals, t, last_active_ns);
  if (t.end_ns <= t.start_ns) return std::nullopt;
  KeepStalls(intervals, last_active_ns, t);
  FindStartups(tracking, intervals, t);
  t.mean_slots = t.slot_seconds / (1e-9 * static_cast<double>(t.end_ns - t.start_ns));
  return t;
}

// ---- The comparison. ----

constexpr int64_t kSecond = 1'000'000'000;

void ExpectSame(const std::optional<CapacityTimeline>& a,
                const std::optional<CapacityTimeline>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a.has_value()) return;
  EXPECT_EQ(a->start_ns, b->start_ns);
  EXPECT_EQ(a->end_ns, b->end_ns);
  // Bit for bit: the same sums in the same order.
  EXPECT_EQ(a->slot_seconds, b->slot_seconds);
  EXPECT_EQ(a->mean_slots, b->mean_slots);
  EXPECT_EQ(a->waiting_seconds, b->waiting_seconds);
  EXPECT_EQ(a->worker_bound_seconds, b->worker_bound_seconds);
  EXPECT_EQ(a->dispatch_bound_seconds, b->dispatch_bound_seconds);
  EXPECT_EQ(a->free_slot_seconds_while_waiting, b->free_slot_seconds_while_waiting);
  EXPECT_EQ(a->underfed_seconds, b->underfed_seconds);
  EXPECT_EQ(a->longest_dispatch_stall.start_ns, b->longest_dispatch_stall.start_ns);
  EXPECT_EQ(a->longest_dispatch_stall.end_ns, b->longest_dispatch_stall.end_ns);
  EXPECT_EQ(a->longest_underfed_stall.start_ns, b->longest_underfed_stall.start_ns);
  EXPECT_EQ(a->longest_underfed_stall.end_ns, b->longest_underfed_stall.end_ns);
  ASSERT_EQ(a->dispatch_stalls.size(), b->dispatch_stalls.size());
  for (size_t k = 0; k < a->dispatch_stalls.size(); ++k) {
    EXPECT_EQ(a->dispatch_stalls[k].start_ns, b->dispatch_stalls[k].start_ns);
    EXPECT_EQ(a->dispatch_stalls[k].end_ns, b->dispatch_stalls[k].end_ns);
  }
  ASSERT_EQ(a->startups.size(), b->startups.size());
  for (size_t k = 0; k < a->startups.size(); ++k) {
    EXPECT_EQ(a->startups[k].worker, b->startups[k].worker);
    EXPECT_EQ(a->startups[k].connect_ns, b->startups[k].connect_ns);
    EXPECT_EQ(a->startups[k].first_task_ns, b->startups[k].first_task_ns);
    EXPECT_EQ(a->startups[k].waited_seconds, b->startups[k].waited_seconds);
    EXPECT_EQ(a->startups[k].cores, b->startups[k].cores);
  }
}

// A random engine timeline: workers joining at random instants (some late, some leaving early,
// some never running a task), tasks of random lengths on a grid of tenths of a second (instants
// shared between workers), a queue with empty stretches refilled later, and an idle tail.
v1::TrackingData RandomTimeline(uint64_t seed, bool before_points, bool shuffle_one) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  v1::TrackingData tracking;
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  const int64_t tenth = kSecond / 10;
  const int horizon = 200 + uniform(400);  // tenths
  for (int k = 0; k < horizon; k += 1 + uniform(6)) {
    tracking.add_worker_count_time_unix_ns(k * tenth);
    tracking.add_worker_count(0);
    tracking.add_queued_chunks(uniform(4) == 0 ? 0 : uniform(30) - 2);  // negatives clamp to 0
  }
  const int workers = 1 + uniform(12);
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries* series = tracking.add_workers();
    series->set_worker("worker-" + std::to_string(w));
    series->set_kind(v1::SERIES_KIND_STEP);
    const double cores = 1 + uniform(4) + (uniform(5) == 0 ? 0.5 : 0.0);
    const bool idle_forever = uniform(8) == 0;
    int k = uniform(horizon / 2);
    const int end = uniform(3) == 0 ? k + uniform(horizon) : horizon + 50;
    double executing = 0;
    // Some workers' cores change along their series (most keep one value).
    const bool varying_cores = (seed + static_cast<uint64_t>(w)) % 5 == 0;
    const auto add = [&](int at, double value) {
      series->add_time_unix_ns(at * tenth);
      series->add_cores(varying_cores && at % 7 == 0 ? cores + 1 : cores);
      series->add_executing_tasks(value);
    };
    add(k, 0);
    while (true) {
      k += 1 + uniform(8);
      if (k >= end) break;
      const double next =
          idle_forever ? 0 : static_cast<double>(uniform(static_cast<int>(cores) + 2));
      if (before_points) add(k, executing);  // the previous state, at the change's instant
      add(k, next);
      executing = next;
    }
    add(end, executing);
  }
  if (shuffle_one && tracking.workers_size() > 0) {
    v1::WorkerSeries* w = tracking.mutable_workers(0);
    if (w->time_unix_ns_size() > 3) {
      w->mutable_time_unix_ns()->SwapElements(1, 2);
      w->mutable_cores()->SwapElements(1, 2);
      w->mutable_executing_tasks()->SwapElements(1, 2);
    }
  }
  return tracking;
}

TEST(CapacityEquivalence, StreamedTimelineIsTheHeldIntervalsTimeline) {
  int with_timeline = 0, with_startups = 0, with_underfed = 0, with_stalls = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    SCOPED_TRACE(seed);
    const v1::TrackingData tracking = RandomTimeline(seed, seed % 2 == 0, seed % 5 == 0);
    CoresPerTask cores_per_task;
    if (seed % 3 == 0) cores_per_task["worker-1"] = 2;
    const std::optional<CapacityTimeline> streamed = AnalyseCapacity(tracking, &cores_per_task);
    ExpectSame(streamed, ReferenceAnalyseCapacity(tracking, &cores_per_task));
    if (!streamed.has_value()) continue;
    ++with_timeline;
    with_startups += streamed->startups.empty() ? 0 : 1;
    with_underfed += streamed->underfed_seconds > 0 ? 1 : 0;
    with_stalls += streamed->dispatch_stalls.empty() ? 0 : 1;
  }
  // The random timelines reach every part of the timeline.
  EXPECT_GT(with_timeline, 300);
  EXPECT_GT(with_startups, 50);
  EXPECT_GT(with_underfed, 50);
  EXPECT_GT(with_stalls, 50);
}

TEST(CapacityEquivalence, BeforePointsChangeNothing) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SCOPED_TRACE(seed);
    ExpectSame(AnalyseCapacity(RandomTimeline(seed, /*before_points=*/true, false)),
               AnalyseCapacity(RandomTimeline(seed, /*before_points=*/false, false)));
  }
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
