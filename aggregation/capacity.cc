#include "aggregation/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// One change of a step series: at `ns`, point `index` of series `series` takes effect.
struct Change {
  int64_t ns;
  size_t series;  // index into tracking.workers(); SIZE_MAX for the queue
  int index;
};

constexpr size_t kQueue = SIZE_MAX;

bool UsableStepSeries(const v1::WorkerSeries& w) {
  return w.kind() == v1::SERIES_KIND_STEP && w.time_unix_ns_size() > 0 &&
         CoversPoints(w.cores(), w.time_unix_ns_size()) &&
         w.executing_tasks_size() == w.time_unix_ns_size();
}

// Extends a stretch by [from, to) when adjacent, else starts a new one; keeps the longest.
void Extend(Stretch& current, Stretch& longest, int64_t from, int64_t to) {
  if (current.end_ns != from || current.end_ns == 0) current = Stretch{from, from};
  current.end_ns = to;
  if (current.Seconds() > longest.Seconds()) longest = current;
}

}  // namespace

CoresPerTask CoresPerTaskFromAllocation(const v1::TrackingData& tracking,
                                        const v1::FineMetricsSummary& fine) {
  absl::flat_hash_map<std::string, double> allocated;
  for (const v1::ActivityTotal& t : fine.by_worker()) {
    if (t.context() == "taskvine-worker" && t.activity() == "allocated-core-seconds" &&
        !t.worker().empty() && t.value() > 0) {
      allocated[t.worker()] += t.value();
    }
  }
  CoresPerTask out;
  if (allocated.empty()) return out;
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (!UsableStepSeries(w)) continue;
    const auto it = allocated.find(w.worker());
    if (it == allocated.end()) continue;
    // Step series: each point's value holds until the next point's instant.
    double task_seconds = 0;
    for (int i = 0; i + 1 < w.time_unix_ns_size(); ++i) {
      task_seconds += std::max(0.0, w.executing_tasks(i)) * 1e-9 *
                      static_cast<double>(w.time_unix_ns(i + 1) - w.time_unix_ns(i));
    }
    if (task_seconds > 0) out[w.worker()] = it->second / task_seconds;
  }
  return out;
}

namespace {

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
      double worker_slots = std::max(0.0, ValueAt(w.cores(), change.index));
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

}  // namespace

std::optional<CapacityTimeline> AnalyseCapacity(const v1::TrackingData& tracking,
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

double ReplayMakespan(const std::vector<ReplayTask>& tasks, int slots) {
  if (tasks.empty() || slots <= 0) return 0;
  // Min-heap of the instants each slot frees.
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int s = 0; s < slots; ++s) free_at.push(0);
  double makespan = 0;
  for (const ReplayTask& task : tasks) {
    const double start = std::max(free_at.top(), std::max(0.0, task.ready_seconds));
    free_at.pop();
    const double end = start + std::max(0.0, task.duration_seconds);
    makespan = std::max(makespan, end);
    free_at.push(end);
  }
  return makespan;
}

double ReplayMakespan(const std::vector<double>& durations, int slots) {
  std::vector<ReplayTask> tasks;
  tasks.reserve(durations.size());
  for (double d : durations) tasks.push_back({0, d});
  return ReplayMakespan(tasks, slots);
}

namespace {

int64_t LastInstant(const v1::TrackingData& tracking) {
  int64_t last = 0;
  for (int64_t ns : tracking.worker_count_time_unix_ns()) last = std::max(last, ns);
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (w.time_unix_ns_size() > 0) last = std::max(last, w.time_unix_ns(w.time_unix_ns_size() - 1));
  }
  return last;
}

}  // namespace

std::vector<DeadWorker> DeadWorkers(const v1::TrackingData& tracking) {
  std::vector<DeadWorker> dead;
  const int64_t last = LastInstant(tracking);
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (!UsableStepSeries(w)) continue;
    const int n = w.time_unix_ns_size();
    const int64_t end = w.time_unix_ns(n - 1);
    if (end >= last) continue;
    // The state that held just before the end: the last point before its instant.
    double executing = 0, cores = 0;
    for (int i = n - 1; i >= 0; --i) {
      if (w.time_unix_ns(i) < end) {
        executing = w.executing_tasks(i);
        cores = ValueAt(w.cores(), i);
        break;
      }
    }
    if (executing <= 0) continue;
    double last_seen = 0;
    for (double v : w.last_seen_unix_seconds()) last_seen = std::max(last_seen, v);
    dead.push_back({w.worker(), w.host(), end, executing, cores, last_seen});
  }
  std::sort(dead.begin(), dead.end(), [](const DeadWorker& a, const DeadWorker& c) {
    return a.end_ns != c.end_ns ? a.end_ns < c.end_ns : a.worker < c.worker;
  });
  return dead;
}

std::vector<std::pair<std::string, int64_t>> WorkerEnds(const v1::TrackingData& tracking) {
  std::vector<std::pair<std::string, int64_t>> ends;
  const int64_t last = LastInstant(tracking);
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (!UsableStepSeries(w)) continue;
    const int64_t end = w.time_unix_ns(w.time_unix_ns_size() - 1);
    if (end < last) ends.emplace_back(w.worker(), end);
  }
  return ends;
}

std::vector<std::pair<std::string, int64_t>> WorkerStarts(const v1::TrackingData& tracking) {
  std::vector<std::pair<std::string, int64_t>> starts;
  for (const v1::WorkerSeries& w : tracking.workers()) {
    if (UsableStepSeries(w)) starts.emplace_back(w.worker(), w.time_unix_ns(0));
  }
  return starts;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
