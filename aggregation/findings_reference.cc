// The chunk rules of findings.cc (stragglers, idle tail and imbalance, tiny chunks, failures)
// as they were before its big-run rewrite (one string-keyed map per rule, full sorts, per-chunk
// slot names): kept unchanged as the straightforward reference that findings_equivalence_test
// compares the optimised rules with. The other rules are findings_rules.h's, shared. Test only.
#include "aggregation/findings_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
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
#include "aggregation/findings_rules.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {
namespace reference {
namespace {

struct ChunkView {
  std::vector<const v1::ChunkRecord*> all;         // every record, in Before order
  std::vector<const v1::ChunkRecord*> successful;  // status OK (or unspecified)
  std::vector<const v1::ChunkRecord*> failed;      // the others, in Before order
};

ChunkView ViewChunks(const FindingsInputs& in) {
  ChunkView view;
  if (in.chunks == nullptr) return view;
  for (const v1::ChunkRecord& chunk : *in.chunks) {
    view.all.push_back(&chunk);
  }
  // One order whatever the input's, so that sums round the same way every time.
  std::sort(view.all.begin(), view.all.end(),
            [](const auto* a, const auto* c) { return Before(*a, *c); });
  for (const v1::ChunkRecord* chunk : view.all) {
    (chunk->status() != v1::CHUNK_STATUS_FAILED ? view.successful : view.failed).push_back(chunk);
  }
  return view;
}

// The failed records by findings_failed_chunks.h's rule, the straightforward way: a set of
// every successful record's chunk (the optimised count probes only candidates).
FailedChunkCounts CountFailed(const ChunkView& view) {
  std::set<std::tuple<std::string, int64_t, int64_t>> succeeded;
  for (const v1::ChunkRecord* chunk : view.successful) {
    if (NamesItsChunk(*chunk)) {
      succeeded.emplace(chunk->file(), chunk->entry_start(), chunk->entry_stop());
    }
  }
  FailedChunkCounts counts;
  for (const v1::ChunkRecord* chunk : view.failed) {
    if (!NamesItsChunk(*chunk)) {
      ++counts.unnamed;
    } else if (succeeded.count({chunk->file(), chunk->entry_start(), chunk->entry_stop()}) > 0) {
      ++counts.recovered;
    } else {
      ++counts.missing;
    }
  }
  return counts;
}

void Stragglers(const ChunkView& view, Builder& b) {
  if (static_cast<int>(view.successful.size()) < kMinChunksForDistribution) return;
  std::vector<double> durations;
  std::vector<double> bytes, events;
  for (const v1::ChunkRecord* chunk : view.successful) {
    durations.push_back(chunk->duration_seconds());
    bytes.push_back(static_cast<double>(std::max<int64_t>(0, chunk->compressed_bytes_read())));
    // The median events came with the rule: "large files" is said only of larger chunks.
    events.push_back(static_cast<double>(std::max<int64_t>(0, chunk->events())));
  }
  const double median = Median(durations);
  std::vector<const v1::ChunkRecord*> slowest = view.successful;
  std::sort(slowest.begin(), slowest.end(), [](const auto* a, const auto* c) {
    return a->duration_seconds() != c->duration_seconds()
               ? a->duration_seconds() > c->duration_seconds()
               : Before(*a, *c);
  });
  const double max = slowest.front()->duration_seconds();
  if (median <= 0.0 || max < kStragglerRatio * median ||
      max - median < kStragglerMinExcessSeconds) {
    return;
  }
  int64_t stragglers = 0;
  for (double d : durations) stragglers += d >= kStragglerRatio * median ? 1 : 0;
  std::vector<const v1::ChunkRecord*> named;
  for (size_t i = 0; i < slowest.size() && static_cast<int>(i) < kNamedItems; ++i) {
    if (slowest[i]->duration_seconds() < kStragglerRatio * median) break;
    named.push_back(slowest[i]);
  }
  AddStragglers(
      named, stragglers, durations.size(), max, median, Median(bytes),
      [&events] { return Median(events); }, b);
}

struct SlotTimes {
  int64_t last_end_ns = 0;
  double busy_seconds = 0;
  std::vector<const v1::ChunkRecord*> chunks;  // in Before order
};

// The most chunks of `chunks` (in Before order) running at once: for each, itself and the earlier
// ones still running at its start.
size_t Capacity(const std::vector<const v1::ChunkRecord*>& chunks) {
  size_t capacity = 1;
  for (size_t k = 0; k < chunks.size(); ++k) {
    size_t running = 1;
    for (size_t j = 0; j < k; ++j) {
      running += chunks[j]->end_unix_ns() > chunks[k]->start_unix_ns() ? 1 : 0;
    }
    capacity = std::max(capacity, running);
  }
  return capacity;
}

void IdleTailAndImbalance(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  std::map<std::string, SlotTimes> slots;  // ordered: ties name the same slot every time
  int64_t run_start = INT64_MAX, run_end = INT64_MIN;
  bool waited = false;
  for (const v1::ChunkRecord* chunk : view.all) {
    if (chunk->end_unix_ns() <= 0) continue;
    SlotTimes& slot = slots[Slot(*chunk)];
    slot.last_end_ns = std::max(slot.last_end_ns, chunk->end_unix_ns());
    slot.chunks.push_back(chunk);
    // Both measures of a slot's work: chunk time less the wait for a CPU (ImbalanceWork).
    slot.busy_seconds += ImbalanceWork(chunk->duration_seconds(), chunk->cpu_seconds(),
                                       chunk->run_queue_wait_seconds());
    waited |= chunk->run_queue_wait_seconds() > 0.0;
    run_start = std::min(run_start, chunk->start_unix_ns());
    run_end = std::max(run_end, chunk->end_unix_ns());
  }
  if (slots.size() < 2 || run_end <= run_start) return;
  const double span = 1e-9 * static_cast<double>(run_end - run_start);
  const int slot_count = static_cast<int>(slots.size());

  double idle = 0, longest_idle = 0;
  int idle_slots = 0;
  double busy_total = 0, busy_max = 0, busy_min = INFINITY;
  std::string busiest, least_busy;
  size_t concurrent = 1;
  for (const auto& [name, slot] : slots) {
    // A slot that ran several chunks at once is that many slots (findings.cc SlotTimes).
    const size_t capacity = Capacity(slot.chunks);
    concurrent = std::max(concurrent, capacity);
    const double busy = slot.busy_seconds / static_cast<double>(capacity);
    const double slot_idle = 1e-9 * static_cast<double>(run_end - slot.last_end_ns);
    idle += slot_idle;
    longest_idle = std::max(longest_idle, slot_idle);
    idle_slots += slot_idle >= kIdleTailShare * span ? 1 : 0;
    busy_total += busy;
    if (busy > busy_max) busy_max = busy, busiest = name;
    if (busy < busy_min) busy_min = busy, least_busy = name;
  }
  const double idle_share = idle / (slot_count * span);
  // The floor (IdleTailMatters) came with the rule: a 5 ms tail of a 20 ms run was a finding.
  if (idle_share >= kIdleTailShare && IdleTailMatters(longest_idle, span, in.elapsed_seconds)) {
    const v1::ChunkRecord* last = nullptr;
    for (const v1::ChunkRecord* chunk : view.all) {
      if (last == nullptr || chunk->end_unix_ns() > last->end_unix_ns() ||
          (chunk->end_unix_ns() == last->end_unix_ns() && Before(*chunk, *last))) {
        last = chunk;
      }
    }
    IdleTail tail{idle_slots, slot_count, idle_share, longest_idle, span, last};
    if (in.tracking != nullptr) {
      for (const DeadWorker& w : DeadWorkers(*in.tracking)) {
        tail.last_worker_died |= w.worker == last->worker();
      }
    }
    std::vector<double> durations;
    for (const v1::ChunkRecord* chunk : view.successful) {
      durations.push_back(chunk->duration_seconds());
    }
    tail.median_successful_seconds = Median(durations);
    AddIdleTail(tail, b);
  }

  const double busy_mean = busy_total / slot_count;
  const bool enough = static_cast<int>(view.successful.size()) >= kMinChunksForDistribution;
  if (enough && busy_mean > 0.0 && busy_max >= kImbalanceRatio * busy_mean) {
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "load_imbalance",
        absl::StrFormat("Load imbalance: the busiest worker slot ran %.2fx the mean chunk time",
                        busy_max / busy_mean),
        absl::StrCat(ImbalanceEvidencePrefix(waited), busiest, " ", Seconds(busy_max),
                     ", least busy ", least_busy, " ", Seconds(busy_min), ", mean ",
                     Seconds(busy_mean), " over ", slot_count, " slots", ConcurrentNote(concurrent),
                     "."),
        // Shared with findings.cc: threads of one process cannot join late (in-process).
        ImbalanceSuggestion(InProcess(in), /*churn=*/false, b));
    Number(f, "max_over_mean", busy_max / busy_mean, "ratio");
    Number(f, "busiest_slot_seconds", busy_max, "s");
    Number(f, "least_busy_slot_seconds", busy_min, "s");
    Number(f, "mean_slot_seconds", busy_mean, "s");
  }
}

void TinyChunks(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  if (static_cast<int>(view.successful.size()) < kMinChunksForDistribution) return;
  std::vector<double> durations, events;
  for (const v1::ChunkRecord* chunk : view.successful) {
    durations.push_back(chunk->duration_seconds());
    if (chunk->events() > 0) events.push_back(static_cast<double>(chunk->events()));
  }
  const double median = Median(durations);
  if (median <= 0.0) return;
  // Gaps between consecutive chunks of one slot; a slot whose chunks overlap (an engine worker
  // running several at once without thread identity) has no such gaps.
  absl::flat_hash_map<std::string, std::vector<const v1::ChunkRecord*>> by_slot;
  for (const v1::ChunkRecord* chunk : view.all) by_slot[Slot(*chunk)].push_back(chunk);
  std::vector<double> gaps;
  for (auto& [slot, chunks] : by_slot) {
    std::sort(chunks.begin(), chunks.end(),
              [](const auto* a, const auto* c) { return Before(*a, *c); });
    std::vector<double> slot_gaps;
    bool overlap = false;
    for (size_t i = 1; i < chunks.size(); ++i) {
      const int64_t gap = chunks[i]->start_unix_ns() - chunks[i - 1]->end_unix_ns();
      if (gap < 0) overlap = true;
      slot_gaps.push_back(1e-9 * static_cast<double>(gap));
    }
    if (!overlap) gaps.insert(gaps.end(), slot_gaps.begin(), slot_gaps.end());
  }
  const bool measured_gaps = static_cast<int>(gaps.size()) >= kMinChunksForDistribution / 2;
  const double median_gap = measured_gaps ? Median(gaps) : 0.0;
  const bool gap_rule = measured_gaps && median_gap >= kGapShare * median;
  const bool engine_rule = !InProcess(in) && median < kEngineMinChunkSeconds;
  if (!gap_rule && !engine_rule) return;

  std::string evidence = absl::StrCat("Median chunk ", Seconds(median));
  if (!events.empty()) {
    absl::StrAppend(&evidence, absl::StrFormat(" (%.0f events)", Median(events)));
  }
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
  std::string suggestion = TinyChunksSuggestion(in, events.empty() ? 0.0 : Median(events), target,
                                                median, LargestFileEntries(view.successful),
                                                view.successful.size(), by_slot.size());
  v1::Finding& f = b.Add(
      v1::Finding::SEVERITY_WARNING, "tiny_chunks",
      absl::StrCat("Tiny chunks: per-chunk overhead matters at ", Seconds(median), " per chunk"),
      std::move(evidence), std::move(suggestion));
  Number(f, "median_chunk_seconds", median, "s");
  if (measured_gaps) Number(f, "median_gap_seconds", median_gap, "s");
  if (!events.empty()) Number(f, "median_chunk_events", Median(events), "events");
}

void FailedAndRetried(const FindingsInputs& in, const ChunkView& view, Builder& b) {
  const v1::AggregatedMetrics& m = *in.metrics;
  if (!m.has_chunks()) return;
  const v1::ChunkMetrics& chunks = m.chunks();
  if (chunks.num_failed_chunks() > 0) {
    AddFailedChunksFinding(view.failed, CountFailed(view), chunks.num_chunks(), b);
  }
  if (chunks.num_retried_chunks() > 0) {
    double retried_seconds = 0;
    for (const v1::ChunkRecord* chunk : view.all) {
      if (chunk->attempt() > 0) retried_seconds += chunk->duration_seconds();
    }
    v1::Finding& f = b.Add(
        v1::Finding::SEVERITY_WARNING, "retried_chunks",
        absl::StrCat(Count(chunks.num_retried_chunks(), "chunk was", "chunks were"), " retried"),
        absl::StrCat("The reruns took ", Seconds(retried_seconds),
                     " of chunk time (the lost attempts' time was not measured)."),
        "Retries repeat work: check why the first attempts were lost (worker memory limit, "
        "preemption, a flaky file server).");
    Number(f, "retried_chunks", static_cast<double>(chunks.num_retried_chunks()), "chunks");
    Number(f, "retry_seconds", retried_seconds, "s");
  }
}

std::vector<v1::Finding> Compute(const FindingsInputs& in) {
  std::vector<v1::Finding> findings;
  if (in.metrics == nullptr) return findings;
  Builder b(&findings);
  const ChunkView view = ViewChunks(in);
  CpuStarvation(in, b);
  CpuContention(in,
                in.chunks != nullptr &&
                    std::any_of(in.chunks->begin(), in.chunks->end(), MayHaveLoadEvidence),
                b);
  IoBound(in, b);
  Stragglers(view, b);
  IdleTailAndImbalance(in, view, b);
  EngineOverhead(in, b);
  Capacity(in, b);  // engine timelines only; random runs have none
  TinyChunks(in, view, b);
  ReadAmplificationRule(in, b);
  FailedAndRetried(in, view, b);
  DataLost(in, b);
  MemoryPressure(in, b);
  DebugBuild(in, b);
  SortBySeverity(findings);
  return findings;
}

}  // namespace
}  // namespace reference
}  // namespace findings_rules

namespace findings_reference {

std::vector<v1::Finding> ComputeFindingsReference(const FindingsInputs& in) {
  return findings_rules::reference::Compute(in);
}

}  // namespace findings_reference
}  // namespace aggregation_internal
}  // namespace roastcoffea
