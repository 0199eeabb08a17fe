#include "aggregation/findings.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "aggregation/capacity.h"
#include "aggregation/findings_capacity.h"
#include "aggregation/findings_contention.h"
#include "aggregation/findings_failed_chunks.h"
#include "aggregation/findings_idle_tail.h"
#include "aggregation/findings_order.h"
#include "aggregation/findings_rules.h"
#include "aggregation/worker_names.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace {

// The chunk records in one canonical order, with each record's worker slot interned, read from
// their columns: the rules below read this view instead of copying, re-sorting or naming records
// per chunk, and read a record itself only to name it or to break a tie.
struct ChunkView {
  const ChunkColumns* columns = nullptr;
  size_t size = 0;              // records
  std::vector<uint32_t> order;  // record indices in Before order
  // Per position of `order`: its (worker, thread) pair id and its index in slot_names.
  std::vector<uint32_t> slot, pair;
  std::vector<std::string> slot_names;  // Slot() of each distinct slot, sorted
  bool any_run_queue_wait = false;      // a timed record (end_ns > 0) with a run-queue wait > 0
  std::vector<absl::string_view> pair_worker;  // per pair id: its worker
  // Per position of `order`, the figures the rules read of every record: the columns
  // themselves when the records are in Before order already, else copies in that order.
  const int64_t* start_ns = nullptr;
  const int64_t* end_ns = nullptr;
  const double* seconds = nullptr;
  std::vector<int64_t> start_copy, end_copy;
  std::vector<double> seconds_copy;
  // ImbalanceWork of each (its duration less its wait for a CPU): `seconds` where all equal it.
  const double* work = nullptr;
  std::vector<double> work_copy;
  // The successful records (status OK or unspecified) in record order: their indices and
  // durations (the rules read them in no order, or break ties by Before).
  std::vector<uint32_t> successful;
  std::vector<double> successful_seconds;
  std::vector<const v1::ChunkRecord*> failed;  // the others, in Before order
  std::vector<uint32_t> failed_index;          // their indices
  double median_successful_seconds = 0;        // of the successful records' durations
  bool any_load_evidence = false;  // MayHaveLoadEvidence of any record (findings_contention.h)

  const v1::ChunkRecord& record(uint32_t index) const { return columns->record(index); }
};

// Numbers the worker slots of the records' distinct (worker, thread_index) pairs, named
// `pair_names` (Slot() of each pair id), in name order (so that iterating slot ids is the name
// order the rules use to break ties), and gives each position of view->order its slot.
void NameSlots(const std::vector<std::string>& pair_names, ChunkView* view) {
  // Distinct pairs can name one slot ("w/thread-1" with thread 0 and 2; "" and "?").
  std::vector<std::string> names = pair_names;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<uint32_t> slot_of_pair(pair_names.size());
  for (size_t p = 0; p < pair_names.size(); ++p) {
    slot_of_pair[p] = static_cast<uint32_t>(
        std::lower_bound(names.begin(), names.end(), pair_names[p]) - names.begin());
  }
  view->slot.reserve(view->pair.size());
  for (uint32_t pair : view->pair) view->slot.push_back(slot_of_pair[pair]);
  view->slot_names = std::move(names);
}

// Numbers the (worker id, thread index) pairs of the columns in order of first appearance: a
// dense table where the thread indices span a small range (threadpool and engine workers number
// their threads from 0), a hash map otherwise.
class PairIds {
 public:
  explicit PairIds(const ChunkColumns& c) : c_(c) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const int64_t thread : c.thread_index) {
      lo = std::min(lo, thread);
      hi = std::max(hi, thread);
    }
    constexpr uint64_t kMaxTable = uint64_t{1} << 22;
    const uint64_t workers = c.worker_names.size();
    if (lo <= hi && static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) < kMaxTable &&
        (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1) * workers <= kMaxTable) {
      thread_lo_ = lo;
      threads_ = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
      table_.assign(threads_ * workers, kUnseen);
    }
  }

  // The pair id of record i; `added`: whether it is the pair's first record.
  uint32_t Id(uint32_t i, bool* added) {
    const uint32_t worker = c_.worker[i];
    const int64_t thread = c_.thread_index[i];
    const uint32_t next = static_cast<uint32_t>(count_);
    uint32_t* id;
    if (threads_ > 0) {
      id = &table_[worker * threads_ + static_cast<uint64_t>(thread - thread_lo_)];
    } else {
      id = &map_.try_emplace(std::make_pair(worker, thread), kUnseen).first->second;
    }
    *added = *id == kUnseen;
    if (*added) *id = next, ++count_;
    return *id;
  }

 private:
  static constexpr uint32_t kUnseen = UINT32_MAX;
  const ChunkColumns& c_;
  int64_t thread_lo_ = 0;
  uint64_t threads_ = 0;  // 0: the map
  std::vector<uint32_t> table_;
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, uint32_t> map_;
  size_t count_ = 0;
};

// `column` in `order` (one column at a time: its reads stay in one array). Out of order, each
// read is a cache miss: the reads a few places ahead are prefetched so that they overlap.
template <typename T>
std::vector<T> Gather(const std::vector<T>& column, const std::vector<uint32_t>& order) {
  constexpr size_t kAhead = 16;
  std::vector<T> out(order.size());
  const size_t n = order.size();
  for (size_t k = 0; k < n; ++k) {
    if (k + kAhead < n) __builtin_prefetch(column.data() + order[k + kAhead]);
    out[k] = column[order[k]];
  }
  return out;
}

// `by_start`: the start order of `c` when the caller made it (Aggregate), else null.
ChunkView ViewChunks(const ChunkColumns& c, const StartOrder* by_start) {
  ChunkView view;
  view.columns = &c;
  view.size = c.size();
  view.order = by_start != nullptr ? OrderBefore(c, *by_start) : OrderBefore(c);
  const size_t n = view.size;
  // One pass in record order (each column read front to back): each record's pair (one Slot()
  // string per distinct (worker, thread_index) pair), the successful records and the flags.
  PairIds pair_ids(c);
  std::vector<std::string> pair_names;
  std::vector<uint32_t> pair_of_record;
  pair_of_record.reserve(n);
  uint8_t flags_seen = 0;
  // ImbalanceWork of each record, from the first that differs from its duration on (before it,
  // the durations): a run without run-queue waits needs none.
  std::vector<double> work;
  for (uint32_t i = 0; i < n; ++i) {
    bool added = false;
    pair_of_record.push_back(pair_ids.Id(i, &added));
    if (added) {
      const std::string& worker = c.worker_names[c.worker[i]];
      pair_names.push_back(WorkerThreadName(worker, c.thread_index[i]));
      view.pair_worker.push_back(worker);
    }
    // Read here, front to back: in `order` the two columns would be read at random.
    const double wait = c.run_queue_wait_seconds.empty() ? 0.0 : c.run_queue_wait_seconds[i];
    view.any_run_queue_wait |= wait > 0.0 && c.end_unix_ns[i] > 0;
    const double d = c.duration_seconds[i];
    // Without a wait, a duration of 0 or more is its own work: no call for most records.
    const double w = wait > 0.0 || !(d >= 0.0) ? ImbalanceWork(d, c.cpu_seconds[i], wait) : d;
    if (work.empty() && w != d) {
      work.reserve(n);
      work.assign(c.duration_seconds.begin(), c.duration_seconds.begin() + i);
    }
    if (!work.empty() || w != d) work.push_back(w);
    flags_seen |= c.flags[i];
    if (c.failed(i)) continue;
    view.successful.push_back(i);
    view.successful_seconds.push_back(c.duration_seconds[i]);
  }
  // MayHaveLoadEvidence, from the flags.
  view.any_load_evidence =
      (flags_seen & (ChunkColumns::kHasMachineLoad | ChunkColumns::kHasRunQueueWait)) != 0;
  if ((flags_seen & ChunkColumns::kFailed) != 0) {
    for (const uint32_t i : view.order) {
      if (!c.failed(i)) continue;
      view.failed.push_back(&view.record(i));
      view.failed_index.push_back(i);
    }
  }
  bool identity = true;
  for (uint32_t k = 0; k < n && identity; ++k) identity = view.order[k] == k;
  const bool work_is_duration = work.empty();
  if (identity) {
    view.pair = std::move(pair_of_record);
    view.start_ns = c.start_unix_ns.data();
    view.end_ns = c.end_unix_ns.data();
    view.seconds = c.duration_seconds.data();
    if (!work_is_duration) view.work_copy = std::move(work);
  } else {
    view.pair = Gather(pair_of_record, view.order);
    pair_of_record = std::vector<uint32_t>();
    // Before order sorts by start first: the starts in that order are the sorted starts, which
    // is the column itself when the records came in start order (only ties were reordered).
    const bool starts_sorted = by_start != nullptr
                                   ? by_start->in_order
                                   : std::is_sorted(c.start_unix_ns.begin(), c.start_unix_ns.end());
    if (!starts_sorted) view.start_copy = Gather(c.start_unix_ns, view.order);
    view.end_copy = Gather(c.end_unix_ns, view.order);
    view.seconds_copy = Gather(c.duration_seconds, view.order);
    view.start_ns = starts_sorted ? c.start_unix_ns.data() : view.start_copy.data();
    view.end_ns = view.end_copy.data();
    view.seconds = view.seconds_copy.data();
    if (!work_is_duration) view.work_copy = Gather(work, view.order);
  }
  view.work = work_is_duration ? view.seconds : view.work_copy.data();
  NameSlots(pair_names, &view);
  view.median_successful_seconds = Median(view.successful_seconds);
  return view;
}

void Stragglers(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  if (in.num_chunks() == 0) {
    b.NotEvaluated("stragglers", "no chunk records");
    return;
  }
  if (static_cast<int>(view.successful.size()) < kMinChunksForDistribution) {
    b.NotEvaluated("stragglers",
                   absl::StrCat("fewer than ", kMinChunksForDistribution, " successful chunks"));
    return;
  }
  b.Evaluated("stragglers");
  const double median = view.median_successful_seconds;
  // Only the first kNamedItems of the slowest-first order are ever read: one pass keeps them,
  // reading the durations' column (the records only on equal durations).
  const std::vector<double>& seconds = view.successful_seconds;
  // Equal durations (common: an engine's fixed-length tasks) break by Before, which view.order
  // already is: the records' positions there, made on the first tie, never the records (on a
  // table each record read whole is built: all of them, when all durations are equal).
  std::vector<uint32_t> position;
  const auto slower = [&](size_t a, size_t c) {
    if (seconds[a] != seconds[c]) return seconds[a] > seconds[c];
    if (position.empty()) {
      position.resize(view.size);
      for (uint32_t p = 0; p < view.size; ++p) position[view.order[p]] = p;
    }
    return position[view.successful[a]] < position[view.successful[c]];
  };
  std::vector<size_t> top;
  for (size_t i = 0; i < seconds.size(); ++i) {
    if (top.size() == static_cast<size_t>(kNamedItems) && !slower(i, top.back())) continue;
    top.insert(std::upper_bound(top.begin(), top.end(), i, slower), i);
    if (top.size() > static_cast<size_t>(kNamedItems)) top.pop_back();
  }
  std::vector<const v1::ChunkRecord*> slowest;
  for (size_t i : top) slowest.push_back(&view.record(view.successful[i]));
  const double max = slowest.front()->duration_seconds();
  if (median <= 0.0 || max < kStragglerRatio * median ||
      max - median < kStragglerMinExcessSeconds) {
    return;
  }
  int64_t stragglers = 0;
  for (const double seconds : view.successful_seconds) {
    stragglers += seconds >= kStragglerRatio * median ? 1 : 0;
  }
  std::vector<const v1::ChunkRecord*> named;
  for (size_t i = 0; i < slowest.size() && static_cast<int>(i) < kNamedItems; ++i) {
    if (slowest[i]->duration_seconds() < kStragglerRatio * median) break;
    named.push_back(slowest[i]);
  }
  std::vector<double> bytes;
  bytes.reserve(view.successful.size());
  for (const uint32_t i : view.successful) {
    bytes.push_back(
        static_cast<double>(std::max<int64_t>(0, view.columns->compressed_bytes_read[i])));
  }
  const auto median_events = [&view] {
    std::vector<double> events;
    events.reserve(view.successful.size());
    for (const uint32_t i : view.successful) {
      events.push_back(static_cast<double>(std::max<int64_t>(0, view.columns->events[i])));
    }
    return Median(std::move(events));
  };
  AddStragglers(named, stragglers, view.successful.size(), max, median, Median(std::move(bytes)),
                median_events, b);
}

struct SlotTimes {
  int64_t last_end_ns = 0;
  double busy_seconds = 0;              // chunk time less its wait for a CPU (ImbalanceWork)
  int64_t worker_end_ns = INT64_MAX;    // its worker left the run then (INT64_MAX: stayed)
  int64_t worker_start_ns = INT64_MIN;  // its worker joined then (INT64_MIN: from the start)
  bool worker_died = false;             // with tasks on it: its lost attempts are no chunk records
  // The most of its chunks that ran at once: an engine worker without thread identity runs
  // several tasks on one named slot, which is as many slots for load_imbalance.
  size_t capacity = 1;
  bool overlapping = false;  // more than one of its chunks is running (IdleTailAndImbalance)
};

// Load imbalance: the busiest slot's chunk time (less its chunks' wait for a CPU: ImbalanceWork,
// and over the most chunks it ran at once: SlotTimes.capacity) against the mean over slots. When
// workers joined late or left early, each slot's chunk time is taken over the part of the run its
// worker was connected: a worker that was there for a third of the run is not "least busy";
// the slots of workers that died are left out (their lost attempts are no chunk records, so
// their chunk time says nothing of how busy they were).
void LoadImbalance(const FindingsInputs& in, const ChunkView& view,
                   const std::vector<SlotTimes>& slot_times, const std::vector<bool>& seen,
                   int64_t run_start, int64_t run_end, bool waited, Builder& b) {
  bool churn = false;
  for (size_t id = 0; id < slot_times.size(); ++id) {
    churn |= seen[id] &&
             (slot_times[id].worker_start_ns > run_start || slot_times[id].worker_end_ns < run_end);
  }
  double total = 0, max = 0, min = INFINITY;
  int slots = 0;
  size_t concurrent = 1;
  std::string busiest, least_busy;
  for (size_t id = 0; id < slot_times.size(); ++id) {
    if (!seen[id]) continue;
    const SlotTimes& slot = slot_times[id];
    const int64_t life =
        std::min(run_end, slot.worker_end_ns) - std::max(run_start, slot.worker_start_ns);
    if (churn && (life <= 0 || slot.worker_died)) continue;
    const double value =
        (churn ? slot.busy_seconds / (1e-9 * static_cast<double>(life)) : slot.busy_seconds) /
        static_cast<double>(slot.capacity);
    concurrent = std::max(concurrent, slot.capacity);
    ++slots;
    total += value;
    if (value > max) max = value, busiest = view.slot_names[id];
    if (value < min) min = value, least_busy = view.slot_names[id];
  }
  const double mean = slots > 0 ? total / slots : 0.0;
  if (mean <= 0.0 || max < kImbalanceRatio * mean) return;
  const auto figure = [churn](double v) { return churn ? Pct(v) : Seconds(v); };
  v1::Finding& f =
      b.Add(v1::Finding::SEVERITY_WARNING, "load_imbalance",
            absl::StrCat(
                "Load imbalance: the busiest worker slot ", churn ? "was busy " : "ran ",
                absl::StrFormat("%.2fx", max / mean),
                churn ? " the mean share of its workers' connected time" : " the mean chunk time"),
            absl::StrCat(
                churn ? "Chunk time over the time its worker was connected, per slot (workers "
                        "joined or left during the run): busiest "
                      : ImbalanceEvidencePrefix(waited),
                busiest, " ", figure(max), ", least busy ", least_busy, " ", figure(min), ", mean ",
                figure(mean), " over ", slots, " slots", ConcurrentNote(concurrent), "."),
            ImbalanceSuggestion(InProcess(in), churn, b));
  Number(f, "max_over_mean", max / mean, "ratio");
  Number(f, churn ? "busiest_slot_busy_fraction" : "busiest_slot_seconds", max,
         churn ? "fraction" : "s");
  Number(f, churn ? "least_busy_slot_busy_fraction" : "least_busy_slot_seconds", min,
         churn ? "fraction" : "s");
  Number(f, churn ? "mean_slot_busy_fraction" : "mean_slot_seconds", mean,
         churn ? "fraction" : "s");
}

// The tracking's view of each (worker, thread) pair's worker, looked up once per pair rather than
// once per record.
struct PairWorker {
  std::optional<int64_t> end_ns, start_ns;
  bool died = false;
};

std::vector<PairWorker> PairWorkers(const FindingsInputs& in, const ChunkView& view) {
  std::vector<PairWorker> out(view.pair_worker.size());
  if (in.tracking == nullptr) return out;
  // A worker that left the run (killed, lost, or gone) is no idle slot after it left.
  absl::flat_hash_map<std::string, int64_t> worker_ends, worker_starts;
  absl::flat_hash_map<std::string, bool> died;
  for (const DeadWorker& w : DeadWorkers(*in.tracking)) died[w.worker] = true;
  for (auto& [worker, end] : WorkerEnds(*in.tracking)) worker_ends[worker] = end;
  for (auto& [worker, start] : WorkerStarts(*in.tracking)) worker_starts[worker] = start;
  for (size_t p = 0; p < out.size(); ++p) {
    const absl::string_view worker = view.pair_worker[p];
    if (const auto it = worker_ends.find(worker); it != worker_ends.end()) {
      out[p].end_ns = it->second;
    }
    if (const auto it = worker_starts.find(worker); it != worker_starts.end()) {
      out[p].start_ns = it->second;
    }
    out[p].died = died.contains(worker);
  }
  return out;
}

// The position (in view.order) of the chunk that ended last; ties: the first in Before order,
// which is view.order's: the first position (no record is read).
size_t LastToEnd(const ChunkView& view) {
  size_t last = 0;
  for (size_t i = 1; i < view.size; ++i) {
    if (view.end_ns[i] > view.end_ns[last]) last = i;
  }
  return last;
}

// Counts a chunk from `start` to `end` (in start order, before slot.last_end_ns counts it) among
// its slot's running chunks: slot.capacity, the most at once. `ends` is the slot's min-heap of the
// running chunks' ends, used only while more than one runs (slot.overlapping).
void CountRunning(int64_t start, int64_t end, SlotTimes& slot, std::vector<int64_t>& ends) {
  if (start >= slot.last_end_ns) {
    slot.overlapping = false;
    return;
  }
  if (!slot.overlapping) ends.assign(1, slot.last_end_ns);
  slot.overlapping = true;
  while (!ends.empty() && ends.front() <= start) {
    std::pop_heap(ends.begin(), ends.end(), std::greater<int64_t>());
    ends.pop_back();
  }
  ends.push_back(end);
  std::push_heap(ends.begin(), ends.end(), std::greater<int64_t>());
  slot.capacity = std::max(slot.capacity, ends.size());
}

void IdleTailAndImbalance(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  const std::vector<PairWorker> pairs = PairWorkers(in, view);
  // Indexed by slot id, which is the slots' name order: ties name the same slot every time.
  std::vector<SlotTimes> slot_times(view.slot_names.size());
  std::vector<bool> seen(view.slot_names.size(), false);
  int64_t run_start = INT64_MAX, run_end = INT64_MIN;
  // Per slot whose chunks overlap, a min-heap of the ends of its chunks still running at the
  // current start (view.order is by start). A thread's chunks run one after the other: each starts
  // after its slot's earlier ones ended, so the one running is the last (SlotTimes.overlapping
  // false), and its heap is never touched.
  std::vector<std::vector<int64_t>> running(view.slot_names.size());
  for (size_t i = 0; i < view.size; ++i) {
    if (view.end_ns[i] <= 0) continue;
    SlotTimes& slot = slot_times[view.slot[i]];
    seen[view.slot[i]] = true;
    CountRunning(view.start_ns[i], view.end_ns[i], slot, running[view.slot[i]]);
    slot.last_end_ns = std::max(slot.last_end_ns, view.end_ns[i]);
    slot.busy_seconds += view.work[i];
    const PairWorker& worker = pairs[view.pair[i]];
    if (worker.end_ns.has_value()) slot.worker_end_ns = *worker.end_ns;
    if (worker.start_ns.has_value()) slot.worker_start_ns = *worker.start_ns;
    slot.worker_died |= worker.died;
    run_start = std::min(run_start, view.start_ns[i]);
    run_end = std::max(run_end, view.end_ns[i]);
  }
  running.clear();
  const int slot_count = static_cast<int>(std::count(seen.begin(), seen.end(), true));
  if (slot_count < 2 || run_end <= run_start) {
    b.NotEvaluated("idle_tail", "fewer than 2 worker slots with timed chunks");
    b.NotEvaluated("load_imbalance", "fewer than 2 worker slots with timed chunks");
    return;
  }
  b.Evaluated("idle_tail");
  // A spread over slots needs chunks enough to be one: 3 chunks on 2 threads are "1.31x" by their
  // count alone.
  const bool enough = static_cast<int>(view.successful.size()) >= kMinChunksForDistribution;
  if (enough) {
    b.Evaluated("load_imbalance");
  } else {
    b.NotEvaluated("load_imbalance",
                   absl::StrCat("fewer than ", kMinChunksForDistribution, " successful chunks"));
  }
  const double span = 1e-9 * static_cast<double>(run_end - run_start);

  double idle = 0, longest_idle = 0;
  int idle_slots = 0;
  for (size_t id = 0; id < slot_times.size(); ++id) {
    if (!seen[id]) continue;
    const SlotTimes& slot = slot_times[id];
    const double slot_idle =
        1e-9 * static_cast<double>(
                   std::max<int64_t>(0, std::min(run_end, slot.worker_end_ns) - slot.last_end_ns));
    idle += slot_idle;
    longest_idle = std::max(longest_idle, slot_idle);
    idle_slots += slot_idle >= kIdleTailShare * span ? 1 : 0;
  }
  const double idle_share = idle / (slot_count * span);
  if (idle_share >= kIdleTailShare && IdleTailMatters(longest_idle, span, in.elapsed_seconds)) {
    IdleTail tail{idle_slots, slot_count, idle_share, longest_idle, span};
    const size_t last = LastToEnd(view);
    tail.last = &view.record(view.order[last]);
    tail.last_worker_died = pairs[view.pair[last]].died;
    tail.median_successful_seconds = view.median_successful_seconds;
    AddIdleTail(tail, b);
  }

  if (enough) {
    LoadImbalance(in, view, slot_times, seen, run_start, run_end, view.any_run_queue_wait, b);
  }
}

// LargestFileEntries (findings_rules.h) of the successful records, from their columns.
int64_t LargestFileEntries(const ChunkView& view) {
  int64_t largest = 0;
  for (const uint32_t i : view.successful) {
    if (view.columns->file[i] != ChunkColumns::kNone) {
      largest = std::max(largest, view.columns->entry_stop[i]);
    }
  }
  return largest;
}

void TinyChunks(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  if (in.num_chunks() == 0) {
    b.NotEvaluated("tiny_chunks", "no chunk records");
    return;
  }
  if (static_cast<int>(view.successful.size()) < kMinChunksForDistribution) {
    b.NotEvaluated("tiny_chunks",
                   absl::StrCat("fewer than ", kMinChunksForDistribution, " successful chunks"));
    return;
  }
  const double median = view.median_successful_seconds;
  if (median <= 0.0) {
    b.NotEvaluated("tiny_chunks", "no chunk durations");
    return;
  }
  b.Evaluated("tiny_chunks");
  // Gaps between consecutive chunks of one slot (view.order is Before order, so each slot's
  // chunks are too); a slot whose chunks overlap (an engine worker running several at once
  // without thread identity) has no such gaps.
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> previous(view.slot_names.size(), kNone);  // position in view.order
  std::vector<bool> overlap(view.slot_names.size(), false);
  for (size_t i = 0; i < view.size; ++i) {
    size_t& prev = previous[view.slot[i]];
    if (prev != kNone && view.start_ns[i] < view.end_ns[prev]) {
      overlap[view.slot[i]] = true;
    }
    prev = i;
  }
  std::fill(previous.begin(), previous.end(), kNone);
  std::vector<double> gaps;
  for (size_t i = 0; i < view.size; ++i) {
    size_t& prev = previous[view.slot[i]];
    if (prev != kNone && !overlap[view.slot[i]]) {
      gaps.push_back(1e-9 * static_cast<double>(view.start_ns[i] - view.end_ns[prev]));
    }
    prev = i;
  }
  const bool measured_gaps = static_cast<int>(gaps.size()) >= kMinChunksForDistribution / 2;
  const double median_gap = measured_gaps ? Median(gaps) : 0.0;
  const bool gap_rule = measured_gaps && median_gap >= kGapShare * median;
  const bool engine_rule = !InProcess(in) && median < kEngineMinChunkSeconds;
  if (!gap_rule && !engine_rule) return;

  std::vector<double> events;
  for (const uint32_t i : view.successful) {
    if (view.columns->events[i] > 0) events.push_back(static_cast<double>(view.columns->events[i]));
  }
  const double median_events = events.empty() ? 0.0 : Median(std::move(events));
  std::string evidence = absl::StrCat("Median chunk ", Seconds(median));
  if (median_events > 0)
    absl::StrAppend(&evidence, absl::StrFormat(" (%.0f events)", median_events));
  if (measured_gaps) {
    absl::StrAppend(&evidence, "; median gap between a worker's chunks ", Seconds(median_gap), " (",
                    Pct(median_gap / median), " of a chunk)");
  }
  if (engine_rule) {
    absl::StrAppend(&evidence, "; an engine task should take at least ",
                    Seconds(kEngineMinChunkSeconds));
  }
  absl::StrAppend(&evidence, ".");
  // A chunk long enough that the gap is 2 % of it (and, on engines, at least 100 ms).
  double target = measured_gaps ? median_gap / 0.02 : 0.0;
  if (!InProcess(in)) target = std::max(target, kEngineMinChunkSeconds);
  std::string suggestion =
      TinyChunksSuggestion(in, median_events, target, median, LargestFileEntries(view),
                           view.successful.size(), view.slot_names.size());
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "tiny_chunks",
      absl::StrCat("Tiny chunks: per-chunk overhead matters at ", Seconds(median), " per chunk"),
      std::move(evidence), std::move(suggestion));
  Number(f, "median_chunk_seconds", median, "s");
  if (measured_gaps) Number(f, "median_gap_seconds", median_gap, "s");
  if (median_events > 0) Number(f, "median_chunk_events", median_events, "events");
}

void FailedAndRetried(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  const v1::AggregatedMetrics& m = *in.metrics;
  if (!m.has_chunks()) {
    b.NotEvaluated("failed_chunks", "no chunk records");
    b.NotEvaluated("retried_chunks", "no chunk records");
    return;
  }
  b.Evaluated("failed_chunks");
  b.Evaluated("retried_chunks");
  const v1::ChunkMetrics& chunks = m.chunks();
  if (chunks.num_failed_chunks() > 0) {
    AddFailedChunksFinding(view.failed,
                           CountFailedChunks(*view.columns, view.failed_index, view.successful),
                           chunks.num_chunks(), b);
  }
  if (chunks.num_retried_chunks() > 0) {
    double retried_seconds = 0;
    for (const uint32_t i : view.order) {
      if (view.columns->attempt[i] > 0) retried_seconds += view.columns->duration_seconds[i];
    }
    // The cost of a retry is the work its lost attempts did (the engine's lost-task-seconds),
    // not the rerun, which would have run anyway.
    // Attempts retried on their worker (resources exceeded) are not in lost-task-seconds.
    const size_t dead = in.tracking == nullptr ? 0 : DeadWorkers(*in.tracking).size();
    // A plain pair rather than the optional: gcc -O1 (the sanitizer builds) warns that an
    // optional<double> tested twice "may be used uninitialized".
    const std::optional<double> measured_loss = LostWorkSeconds(in);
    const bool loss_known = measured_loss.has_value() && (*measured_loss > 0 || dead > 0);
    const double lost_seconds = loss_known ? *measured_loss : 0.0;
    std::string evidence =
        loss_known ? absl::StrCat("The lost attempts had run ", Seconds(lost_seconds),
                                  " of chunk time, done again by the retries.")
                   : absl::StrCat("The reruns took ", Seconds(retried_seconds),
                                  " of chunk time (the lost attempts' time was not measured).");
    if (dead > 0) {
      absl::StrAppend(&evidence, " ", Count(static_cast<int64_t>(dead), "worker", "workers"),
                      " died with tasks running (see that finding).");
    }
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "retried_chunks",
        absl::StrCat(Count(chunks.num_retried_chunks(), "chunk was", "chunks were"), " retried"),
        std::move(evidence),
        dead > 0 ? "Retries repeat the work of the attempts lost with dead workers: find why "
                   "they died."
                 : "Retries repeat work: check why the first attempts were lost (worker memory "
                   "limit, preemption, a flaky file server).");
    Number(f, "retried_chunks", static_cast<double>(chunks.num_retried_chunks()), "chunks");
    Number(f, "retry_seconds", retried_seconds, "s");
    if (loss_known) Number(f, "lost_work_seconds", lost_seconds, "s");
  }
}

FindingsOutcome Compute(const FindingsInputs& in) {
  FindingsOutcome outcome;
  std::vector<v1::Finding>& findings = outcome.findings;
  if (in.metrics == nullptr) return outcome;
  Builder b(&findings, &outcome.evaluations);
  // The findings read chunk columns: the caller's (Aggregate's), else made here.
  ChunkColumns own_columns;
  const ChunkColumns* columns = in.columns;
  if (columns == nullptr || !columns->BuiltFrom(in.chunks, in.chunk_table)) {
    if (in.chunks != nullptr) own_columns = ColumnsOf(*in.chunks);
    if (in.chunk_table != nullptr) own_columns = ColumnsOf(*in.chunk_table);
    columns = &own_columns;
  }
  // Big runs: the tracking's memory scan on a helper thread while this one reads the chunks; every
  // rule still runs here, in its order (memory_pressure reads whether tiny_chunks fired).
  MemoryScan memory;
  std::thread memory_thread;
  const bool two_threads = in.tracking != nullptr && columns->size() >= in.two_threads_min_records;
  if (two_threads) memory_thread = std::thread([&in, &memory] { memory = ScanMemory(in); });
  const bool has_start_order =
      columns == in.columns && in.start_order != nullptr && in.start_order->size == columns->size();
  const ChunkView view = ViewChunks(*columns, has_start_order ? in.start_order : nullptr);
  CpuStarvation(in, b);
  CpuContention(in, view.any_load_evidence, b);
  IoBound(in, b);
  Stragglers(in, view, b);
  IdleTailAndImbalance(in, view, b);
  EngineOverhead(in, b);
  Capacity(in, b);
  TinyChunks(in, view, b);
  ReadAmplificationRule(in, b);
  FailedAndRetried(in, view, b);
  DataLost(in, b);
  if (two_threads) {
    memory_thread.join();
  } else {
    memory = ScanMemory(in);
  }
  MemoryPressure(in, memory, b);
  DebugBuild(in, b);
  SortBySeverity(findings);
  for (v1::RuleEvaluation& e : outcome.evaluations) {
    e.set_fired(e.evaluated() &&
                std::any_of(findings.begin(), findings.end(),
                            [&](const v1::Finding& f) { return f.code() == e.code(); }));
  }
  return outcome;
}

}  // namespace
}  // namespace findings_rules

size_t FindingsInputs::num_chunks() const {
  if (chunks != nullptr) return static_cast<size_t>(chunks->size());
  return chunk_table != nullptr ? chunk_table->size() : 0;
}

std::vector<v1::Finding> ComputeFindings(const FindingsInputs& in) {
  return findings_rules::Compute(in).findings;
}

FindingsOutcome EvaluateFindings(const FindingsInputs& in) { return findings_rules::Compute(in); }

}  // namespace aggregation_internal
}  // namespace roastcoffea
