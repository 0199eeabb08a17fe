#include "aggregation/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "absl/numeric/bits.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

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
// queued tasks over [from, to).
struct Interval {
  int64_t from, to;
  double slots, busy, waiting;
};

// The usable step series' columns and the queue's, by series index: the queue is series
// `queue` (after every worker, so that it changes last within an instant).
struct StepColumns {
  explicit StepColumns(const v1::TrackingData& tracking)
      : queue(static_cast<uint32_t>(tracking.workers_size())) {
    const size_t n = static_cast<size_t>(tracking.workers_size()) + 1;
    times.assign(n, nullptr);
    cores.assign(n, nullptr);
    constant_cores.assign(n, 0);
    executing.assign(n, nullptr);
    sizes.assign(n, 0);
    for (uint32_t s = 0; s < queue; ++s) {
      const v1::WorkerSeries& w = tracking.workers(static_cast<int>(s));
      if (!UsableStepSeries(w)) continue;
      usable.push_back(s);
      times[s] = w.time_unix_ns().data();
      // A worker's cores are one value for its whole series (every log-made one): then that
      // value, and the column is not read point by point (one stream fewer in the merge).
      const auto& all_cores = w.cores();
      const bool constant = std::all_of(all_cores.begin(), all_cores.end(),
                                        [&all_cores](double v) { return v == all_cores[0]; });
      if (constant) constant_cores[s] = all_cores[0];
      cores[s] = constant ? nullptr : all_cores.data();
      executing[s] = w.executing_tasks().data();
      sizes[s] = w.time_unix_ns_size();
    }
    times[queue] = tracking.worker_count_time_unix_ns().data();
    sizes[queue] = tracking.worker_count_time_unix_ns_size();
    queued = tracking.queued_chunks().data();
  }
  uint32_t queue;
  std::vector<uint32_t> usable;
  std::vector<const int64_t*> times;
  std::vector<const double*> cores, executing;  // cores: null when constant_cores holds
  std::vector<double> constant_cores;
  std::vector<int> sizes;
  const int32_t* queued = nullptr;
};

// One change of a step series: at `ns`, point `index` of series `series` takes effect.
struct Change {
  int64_t ns;
  uint32_t series;  // a worker series' index, or StepColumns::queue
  int32_t index;
};

// Bits that hold the values 0..max.
int BitsFor(uint64_t max) { return max == 0 ? 0 : 64 - absl::countl_zero(max); }

// The changes of the usable step series and of the queue in time order; within an instant by
// series, the queue last, each series' points in stored order (the last change of an instant
// holds). Series in time order (every log-made one) are merged where they lie, by a heap of
// one cursor per series: a 10^6-task run has ~4 x 10^6 points, which a sorted copy held two
// to three times over (24 B each, growth and the sort's buffer: ~380 B per task at the peak
// of collect). The heap holds each cursor as one integer, its instant (less the earliest)
// above its series, so that a step down the heap is one comparison, made without a branch
// (the branches of a two-field comparison were mispredicted at every step). Any other input
// (a series out of time order, instants too far apart to pack) is sorted in a copy.
class ChangeStream {
 public:
  explicit ChangeStream(const StepColumns& columns) : c_(columns) {
    bool sorted = true;
    std::vector<uint32_t> all = columns.usable;
    if (columns.sizes[columns.queue] > 0) all.push_back(columns.queue);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const uint32_t s : all) {
      const int64_t* times = columns.times[s];
      const int size = columns.sizes[s];
      sorted = sorted && std::is_sorted(times, times + size);
      lo = std::min(lo, times[0]);
      hi = std::max(hi, times[size - 1]);
    }
    series_bits_ = BitsFor(columns.queue);
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (sorted && !all.empty() && BitsFor(span) + series_bits_ <= 64) {
      lo_ = lo;
      cursor_.assign(columns.sizes.size(), 0);
      for (const uint32_t s : all) heap_.push_back(Key(columns.times[s][0], s));
      std::make_heap(heap_.begin(), heap_.end(), std::greater<uint64_t>());
      SetTop();
      return;
    }
    for (const uint32_t s : all) {
      for (int i = 0; i < columns.sizes[s]; ++i) copy_.push_back({columns.times[s][i], s, i});
    }
    std::stable_sort(copy_.begin(), copy_.end(),
                     [](const Change& a, const Change& c) { return a.ns < c.ns; });
  }
  bool empty() const { return heap_.empty() && next_ == copy_.size(); }
  const Change& top() const { return heap_.empty() ? copy_[next_] : top_; }
  void pop() {
    if (heap_.empty()) {
      ++next_;
      return;
    }
    PopHeap();
    if (!heap_.empty()) SetTop();
  }

 private:
  void PopHeap() {
    // The top's series moves to its next point in place, sifted down once (a pop and a push
    // would sift twice); a series at its end leaves the heap.
    const uint32_t s = static_cast<uint32_t>(heap_.front() & SeriesMask());
    const int32_t index = ++cursor_[s];
    if (index < c_.sizes[s]) {
      Prefetch(s, index + kPrefetchAhead);
      SiftDown(Key(c_.times[s][index], s));
    } else {
      const uint64_t last = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) SiftDown(last);
    }
  }
  // The change on top of the heap, read from its key (no column is read for it).
  void SetTop() {
    const uint64_t key = heap_.front();
    top_.series = static_cast<uint32_t>(key & SeriesMask());
    top_.index = cursor_[top_.series];
    top_.ns = static_cast<int64_t>(static_cast<uint64_t>(lo_) + (key >> series_bits_));
  }
  uint64_t SeriesMask() const { return (uint64_t{1} << series_bits_) - 1; }
  uint64_t Key(int64_t ns, uint32_t s) const {
    return (static_cast<uint64_t>(ns) - static_cast<uint64_t>(lo_)) << series_bits_ | s;
  }
  // Each series is read front to back, but a hundred of them at once (three columns each) are
  // more streams than the hardware prefetcher follows.
  static constexpr int kPrefetchAhead = 16;
  void Prefetch(uint32_t s, int index) const {
    __builtin_prefetch(c_.times[s] + index);
    if (s == c_.queue) {
      __builtin_prefetch(c_.queued + index);
    } else {
      if (c_.cores[s] != nullptr) __builtin_prefetch(c_.cores[s] + index);
      __builtin_prefetch(c_.executing[s] + index);
    }
  }
  // Puts `moved` at the top and restores the heap (keys are distinct: one per series).
  void SiftDown(uint64_t moved) {
    const size_t n = heap_.size();
    size_t at = 0;
    for (;;) {
      size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n) child += heap_[child + 1] < heap_[child] ? 1 : 0;
      if (moved < heap_[child]) break;
      heap_[at] = heap_[child];
      at = child;
    }
    heap_[at] = moved;
  }

  const StepColumns& c_;
  int series_bits_ = 0;
  int64_t lo_ = 0;               // the earliest instant
  std::vector<uint64_t> heap_;   // a min-heap of Key(next instant, series)
  std::vector<int32_t> cursor_;  // per series: its next point
  Change top_{0, 0, 0};          // the heap's top
  std::vector<Change> copy_;
  size_t next_ = 0;
};

// The slots of a worker with `cores`, of which a task takes `task_cores` (0: one per core).
double WorkerSlots(double cores, double task_cores) {
  const double slots = std::max(0.0, cores);
  // A few ulps below a whole number of tasks still count as that many.
  return task_cores > 0 && slots > 0 ? std::max(1.0, std::floor(slots / task_cores + 1e-6)) : slots;
}

// Hands each interval of the usable step series, in time order, to `sink`; returns how many.
template <typename Sink>
size_t ForEachInterval(const v1::TrackingData& tracking, const StepColumns& c,
                       const CoresPerTask* cores_per_task, Sink&& sink) {
  ChangeStream changes(c);
  // Cores one task takes on each usable series' worker (0: one slot per core), looked up once
  // per series rather than once per point.
  std::vector<double> task_cores_of(c.sizes.size(), 0);
  if (cores_per_task != nullptr) {
    for (const uint32_t s : c.usable) {
      const auto it = cores_per_task->find(tracking.workers(static_cast<int>(s)).worker());
      if (it != cores_per_task->end() && it->second > 0) task_cores_of[s] = it->second;
    }
  }
  // The slots of each worker's last cores value (NaN: none yet, and never equal).
  std::vector<double> cores_of(c.sizes.size(), std::nan("")), worker_slots_of(c.sizes.size(), 0);
  // State per worker: slots and executing now (0 before its first point and after its last).
  std::vector<double> slots_of(c.sizes.size(), 0);
  std::vector<double> busy_of(slots_of.size(), 0);
  double slots = 0, busy = 0, waiting = 0;
  size_t intervals = 0;
  while (!changes.empty()) {
    const int64_t now = changes.top().ns;
    for (; !changes.empty() && changes.top().ns == now; changes.pop()) {
      const Change change = changes.top();
      const uint32_t s = change.series;
      if (s == c.queue) {
        waiting = std::max(0, c.queued[change.index]);
        continue;
      }
      const bool last = change.index + 1 == c.sizes[s];
      const double cores = c.cores[s] != nullptr ? c.cores[s][change.index] : c.constant_cores[s];
      if (!(cores == cores_of[s])) {  // a worker's cores rarely change: its slots kept
        cores_of[s] = cores;
        worker_slots_of[s] = WorkerSlots(cores, task_cores_of[s]);
      }
      const double worker_slots = worker_slots_of[s];
      const double new_slots = last ? 0 : worker_slots;
      const double new_busy = last ? 0 : std::max(0.0, c.executing[s][change.index]);
      slots += new_slots - slots_of[s];
      busy += new_busy - busy_of[s];
      slots_of[s] = new_slots;
      busy_of[s] = new_busy;
    }
    if (!changes.empty()) {
      sink(Interval{now, changes.top().ns, std::max(0.0, slots), std::max(0.0, busy), waiting});
      ++intervals;
    }
  }
  return intervals;
}

// The timeline's sums, stalls and start-ups, taken from the intervals as they come (no copy of
// them: one per instant of the run, ~4 x 10^6 for 10^6 tasks). The timeline ends with the last
// work (a log that runs on after it, idle workers kept connected, adds no capacity to judge):
// idle intervals are held until work follows them. Free time with nothing queued is underfed
// only when tasks were queued again later: such intervals are held until then.
class TimelineBuilder {
 public:
  // `queries`: the instants whose waiting time so far (WaitedUntil) the start-ups need.
  explicit TimelineBuilder(std::vector<int64_t> queries) : queries_(std::move(queries)) {
    std::sort(queries_.begin(), queries_.end());
    queries_.erase(std::unique(queries_.begin(), queries_.end()), queries_.end());
    waited_at_.resize(queries_.size());
  }

  void Add(const Interval& i) {
    AnswerQueries(i);
    AddToStalls(i);
    if (i.waiting <= 0 && i.busy <= 0) {
      idle_.push_back(i);
      return;
    }
    for (const Interval& held : idle_) Keep(held);
    idle_.clear();
    if (i.waiting > 0) {  // every free interval before it with nothing queued was underfed
      for (const Stretch& u : underfed_) {
        t_.underfed_seconds += u.Seconds();
        Extend(underfed_run_, t_.longest_underfed_stall, u.start_ns, u.end_ns);
      }
      underfed_.clear();
    }
    Keep(i);
  }

  // The timeline; WaitedUntil answers from here on.
  CapacityTimeline Finish() {
    if (stall_.Seconds() >= kStallKeptSeconds) t_.dispatch_stalls.push_back(stall_);
    for (; next_query_ < queries_.size(); ++next_query_) {
      // After the last interval: all of it (the last interval holding the instant).
      waited_at_[next_query_] =
          waited_before_last_ +
          (last_.waiting > 0 ? 1e-9 * static_cast<double>(last_.to - last_.from) : 0.0);
    }
    return std::move(t_);
  }

  // Seconds some task waited before `ns`, one of the queries.
  double WaitedUntil(int64_t ns) const {
    const size_t k = static_cast<size_t>(std::lower_bound(queries_.begin(), queries_.end(), ns) -
                                         queries_.begin());
    return waited_at_[k];
  }

 private:
  // An interval before the timeline's end: its sums.
  void Keep(const Interval& i) {
    if (i.slots < 1 || i.to <= i.from) return;
    if (t_.start_ns == 0) t_.start_ns = i.from;
    t_.end_ns = i.to;
    const double dt = 1e-9 * static_cast<double>(i.to - i.from);
    const double free = std::max(0.0, i.slots - i.busy);
    t_.slot_seconds += i.slots * dt;
    if (i.waiting > 0) {
      t_.waiting_seconds += dt;
      if (free >= 1) {
        t_.dispatch_bound_seconds += dt;
        t_.free_slot_seconds_while_waiting += free * dt;
        Extend(dispatch_run_, t_.longest_dispatch_stall, i.from, i.to);
      } else {
        t_.worker_bound_seconds += dt;
      }
    } else if (free >= 1) {
      underfed_.push_back({i.from, i.to});
    }
  }

  // Kept stalls: the stretches of dispatch-bound intervals, split where the state changed.
  // (Past the timeline's end nothing waits: no stall there.)
  void AddToStalls(const Interval& i) {
    const bool stalled = i.to > i.from && i.slots >= 1 && i.waiting > 0 && i.slots - i.busy >= 1;
    if (stalled && stall_.end_ns == i.from && stall_.end_ns != 0) {
      stall_.end_ns = i.to;
      return;
    }
    if (stall_.Seconds() >= kStallKeptSeconds) t_.dispatch_stalls.push_back(stall_);
    stall_ = stalled ? Stretch{i.from, i.to} : Stretch{};
  }

  // The waiting time before each query instant inside [i.from, i.to) (before the first
  // interval: none), then i's own.
  void AnswerQueries(const Interval& i) {
    for (; next_query_ < queries_.size() && queries_[next_query_] < i.to; ++next_query_) {
      const int64_t ns = queries_[next_query_];
      waited_at_[next_query_] =
          ns < i.from ? 0.0
                      : waited_ + (i.waiting > 0 ? 1e-9 * static_cast<double>(ns - i.from) : 0.0);
    }
    last_ = i;
    waited_before_last_ = waited_;
    if (i.waiting > 0 && i.to > i.from) waited_ += 1e-9 * static_cast<double>(i.to - i.from);
  }

  CapacityTimeline t_;
  Stretch dispatch_run_, underfed_run_, stall_;
  std::vector<Interval> idle_;     // since the last interval with work
  std::vector<Stretch> underfed_;  // free, nothing queued, since the last queued interval
  std::vector<int64_t> queries_;   // sorted, distinct
  std::vector<double> waited_at_;  // per query
  size_t next_query_ = 0;
  double waited_ = 0, waited_before_last_ = 0;
  Interval last_{0, 0, 0, 0, 0};
};

// A worker's connection and its first point with a task executing (0: none before its last).
struct WorkerStart {
  uint32_t series;
  int64_t connect_ns, first_busy_ns;
};

std::vector<WorkerStart> WorkerFirstTasks(const StepColumns& c) {
  std::vector<WorkerStart> out;
  for (const uint32_t s : c.usable) {
    int64_t first_busy = 0;
    for (int i = 0; i + 1 < c.sizes[s]; ++i) {
      if (c.executing[s][i] > 0) {
        first_busy = c.times[s][i];
        break;
      }
    }
    out.push_back({s, c.times[s][0], first_busy});
  }
  return out;
}

}  // namespace

std::optional<CapacityTimeline> AnalyseCapacity(const v1::TrackingData& tracking,
                                                const CoresPerTask* cores_per_task) {
  if (tracking.worker_count_kind() != v1::SERIES_KIND_STEP ||
      tracking.queued_chunks_size() != tracking.worker_count_time_unix_ns_size() ||
      tracking.queued_chunks_size() == 0) {
    return std::nullopt;
  }
  const StepColumns columns(tracking);
  if (columns.usable.empty()) return std::nullopt;
  // Start-ups: waiting time between a worker's first point and its first executing task.
  const std::vector<WorkerStart> starts = WorkerFirstTasks(columns);
  std::vector<int64_t> queries;
  for (const WorkerStart& w : starts) {
    if (w.first_busy_ns == 0) continue;  // never ran a task: no start-up that ended
    queries.push_back(w.connect_ns);
    queries.push_back(w.first_busy_ns);
  }
  TimelineBuilder builder(std::move(queries));
  const size_t intervals = ForEachInterval(tracking, columns, cores_per_task,
                                           [&builder](const Interval& i) { builder.Add(i); });
  if (intervals == 0) return std::nullopt;
  CapacityTimeline t = builder.Finish();
  if (t.end_ns <= t.start_ns) return std::nullopt;
  for (const WorkerStart& w : starts) {
    if (w.first_busy_ns == 0) continue;
    const double wait = builder.WaitedUntil(w.first_busy_ns) - builder.WaitedUntil(w.connect_ns);
    const v1::WorkerSeries& series = tracking.workers(static_cast<int>(w.series));
    if (wait > 0) {
      t.startups.push_back({series.worker(), w.connect_ns, w.first_busy_ns, wait, series.cores(0)});
    }
  }
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
