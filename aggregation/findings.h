// Findings: what limited a run, computed from its measured data (internal to //aggregation; the
// one place where each rule and its threshold live). Aggregate stores the result in
// AggregatedMetrics.findings; every output renders that saved list first.
//
// Rules (code: fires when ...), in the order they are evaluated. Thresholds are the named
// constants below; the README's "Findings" section lists the same numbers.
//   cpu_starvation   chunk threads waited for a CPU (run-queue delay) >= kStarvationShare of
//                    chunk wall time (critical from kStarvationCriticalShare); or, without a
//                    run-queue measurement, in-process worker threads > usable CPUs.
//   cpu_contention   the chunks' machines ran more processes than CPUs for a share of the run
//                    (findings_contention.h).
//   io_bound         chunks were blocked (I/O, locks, sleep: wall - CPU - run-queue wait)
//                    >= kBlockedShare of chunk wall time; named I/O only when they read bytes,
//                    and no advice of more threads when cpu_starvation or cpu_contention fired.
//   stragglers       >= kMinChunksForDistribution successful chunks and the slowest is
//                    >= kStragglerRatio x the median and at least kStragglerMinExcessSeconds
//                    above it: names the slowest chunks' files, datasets and worker threads, with
//                    each one's CPU, run-queue wait, blocked time, bytes and attempt; the advice
//                    follows the dominant cause (findings_rules.h AddStragglers).
//   idle_tail        worker slots idle at the end (from each slot's last chunk end to the last
//                    chunk end of the run, or to its worker's departure: a dead worker is no idle
//                    slot) >= kIdleTailShare of the slots' time over the run, and the first
//                    idle slot's wait >= kIdleTailMinSeconds and >= kIdleTailMinRunShare of the
//                    run's elapsed time (IdleTailMatters); the advice follows
//                    the last chunk's own record (findings_idle_tail.h: failed, dead worker,
//                    retry, CPU wait, straggler; smaller chunks only for an ordinary last wave).
//   load_imbalance   >= 2 worker slots and the busiest slot's chunk time (less the time its
//                    chunks waited for a CPU) >= kImbalanceRatio x the mean over slots (with
//                    workers joining or leaving: chunk time over each slot's connected time, dead
//                    workers' slots left out).
//   engine_overhead  Dask: overhead (non-processor task prefixes) CPU + I/O >= kOverheadShare of
//                    the processor's; TaskVine / Work Queue: commit + worker-wait + retrieve +
//                    output-transfer >= kOverheadShare of execute (queue wait is read by the
//                    capacity rules: findings_capacity.h).
//   tiny_chunks      >= kMinChunksForDistribution chunks and the median gap between consecutive
//                    chunks of one worker slot >= kGapShare of the median chunk; or, on an engine
//                    (not in-process workers), a median chunk below kEngineMinChunkSeconds. The
//                    advice never exceeds the largest file and names the backend's knob.
//   read_amplification  the chunks read >= kReadAmplificationRatio x the distinct bytes of
//                    their files (aggregation/read_amplification.h): small chunks re-read the
//                    compressed blocks their entry ranges share.
//   failed_chunks    any failed chunk (critical: their events are missing) or retried chunk
//                    (warning: the work its lost attempts did, where the engine measured it).
//   (capacity)       worker_bound, dispatch_bound, retry_penalty, slow_start, dead_workers,
//                    silent_workers, slow_hosts, limiting_cause: see
//                    findings_capacity.h.
//   data_lost        tracking gaps, or warnings that say engine data were lost, recovered or
//                    kept out (codes dask_fine_metrics_*, taskvine_*, invalid_*, workers_lost).
//   memory_pressure  a worker's memory reached kMemoryLimitShare of its limit (the cgroup limit
//                    for in-process workers), or any bytes were spilled to disk.
//   debug_build      the measured code was compiled without optimisation (critical).
// A rule whose inputs were not measured does not fire: an unknown is never a finding. Each rule
// records whether it was evaluated, and why not (FindingsOutcome.evaluations).
//
// Thread-safety: pure. Cost: O(chunks log chunks + tracking samples + warnings).
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "aggregation/chunk_columns.h"
#include "aggregation/start_order.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Run-queue delay share of chunk wall time: above 10 % the CPUs, not the analysis, set the pace.
inline constexpr double kStarvationShare = 0.10;
inline constexpr double kStarvationCriticalShare = 0.30;
// Blocked share of chunk wall time: above 30 % the chunks wait on I/O (or locks) for a third.
inline constexpr double kBlockedShare = 0.30;
// Distribution rules need this many successful chunks to say anything about a tail.
inline constexpr int kMinChunksForDistribution = 10;
// Slowest chunk against the median.
inline constexpr double kStragglerRatio = 3.0;
inline constexpr double kStragglerMinExcessSeconds = 0.05;
// Worker slots idle at the end of the run, as a share of their time over the run.
inline constexpr double kIdleTailShare = 0.10;
// An idle tail a user cannot notice is none: the first slot to run out of work must have waited
// at least a second, and at least 5 % of the run's elapsed time (setup and merge included), so a
// 5 ms tail of a 20 ms run, or a 2 s tail of a 10 minute run, is no finding.
inline constexpr double kIdleTailMinSeconds = 1.0;
inline constexpr double kIdleTailMinRunShare = 0.05;
// Busiest worker slot's chunk time against the mean over slots.
inline constexpr double kImbalanceRatio = 1.25;
// Engine overhead against the processor's (Dask) or execute (TaskVine) time.
inline constexpr double kOverheadShare = 0.20;
// Per-chunk overhead: the median idle gap between a slot's consecutive chunks against the median
// chunk; on engines, Dask's guidance that a task should take at least 100 ms.
inline constexpr double kGapShare = 0.10;
inline constexpr double kEngineMinChunkSeconds = 0.100;
// Bytes the chunks read against the distinct bytes of their files (WorkflowMetrics.
// read_amplification): at 1.5x a third of the reading repeats bytes already read.
inline constexpr double kReadAmplificationRatio = 1.5;
// Memory against a worker's limit.
inline constexpr double kMemoryLimitShare = 0.80;
// Only slowest chunks, workers and files this many are named.
inline constexpr int kNamedItems = 3;

struct FindingsInputs {
  // The metrics Aggregate computed (cpu, chunks, fine, workers); required.
  const v1::AggregatedMetrics* metrics = nullptr;
  // Null where absent.
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord>* chunks = nullptr;
  // The columns BuildChunkColumns made of `chunks` (columns->records == chunks), when the caller
  // has them (Aggregate). The rules read columns, and a record only to name it or to break a
  // tie; null (or columns of other records): EvaluateFindings makes them (ColumnsOf).
  const ChunkColumns* columns = nullptr;
  // The start order of `columns` (OrderByStart), when the caller made it (Aggregate makes it once
  // for chunk_info and the findings); null: made here.
  const StartOrder* start_order = nullptr;
  // The chunk records as a table instead of `chunks` (set at most one): the rules read the
  // columns (columns->table == chunk_table) and the table's, and build only the records they
  // name or compare whole.
  const ChunkTable* chunk_table = nullptr;
  const v1::TrackingData* tracking = nullptr;
  const google::protobuf::RepeatedPtrField<v1::Warning>* warnings = nullptr;
  const v1::BuildInfo* analysis_build = nullptr;
  const v1::HostFacts* host_facts = nullptr;
  double elapsed_seconds = 0;
  // CPUs this process may use (HostFacts.usable_cpus), when known.
  std::optional<double> usable_cpus;
  // MeasurementMetadata.backend ("threadpool", "workqueue", "dask", ...), "" when unknown.
  std::string backend;
  // MeasurementMetadata.configuration (the backend and its knobs: "backend", "chunk_size",
  // "chunks_per_task"); null when absent.
  const google::protobuf::Map<std::string, std::string>* configuration = nullptr;

  // Whether chunk records were given (either form; maybe none), and how many.
  bool has_chunks() const { return chunks != nullptr || chunk_table != nullptr; }
  size_t num_chunks() const;
  // Runs with at least this many chunk records and a tracking read its memory samples (the
  // memory_pressure rule's scan) on a second thread while the chunk rules run: the same findings
  // in the same order (tests set 0 and SIZE_MAX to compare the two paths).
  size_t two_threads_min_records = 50000;
};

// Every rule above that fires, most severe first (rule order within a severity).
std::vector<v1::Finding> ComputeFindings(const FindingsInputs& inputs);

// The findings, and one RuleEvaluation per rule in rule order: evaluated or not (with why), and
// whether it fired.
struct FindingsOutcome {
  std::vector<v1::Finding> findings;
  std::vector<v1::RuleEvaluation> evaluations;
};
FindingsOutcome EvaluateFindings(const FindingsInputs& inputs);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_H_
