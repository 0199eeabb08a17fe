// Aggregation: turns what one run recorded (workflow report, elapsed time, worker tracking,
// chunk records, span fine metrics) into v1::AggregatedMetrics, with the same formulas whatever
// the backend.
//
// The original Python roastcoffea 0.1.2's keys (docs/reference.md §2.1-§2.7) are reproduced
// under their own fields with the original formulas; where docs/reference.md documents an
// error (§6), the original's value is kept and the right number gets its own new field. Each
// formula lives in exactly one file of this package:
//   workflow.cc               totals, data and event rates           (AggregatedMetrics.workflow)
//   report_from_chunks.cc     the workflow report of a run without one, from its chunk records:
//                             which records count events, bytes and process time
//   worker_metrics.cc         workers, cores, memory from tracking   (AggregatedMetrics.workers)
//   series_integral.cc        integrals of tracking series over a window, by series kind:
//                             trapezoid (SAMPLED) or held values (STEP), clipped to the window
//   efficiency.cc             the original's core efficiency, speedup, core rate
//                             (AggregatedMetrics.efficiency: busy-worker occupancy, not CPU);
//                             TaskVine's task-execution core efficiency (execution
//                             core-seconds of its span / the workers' core-seconds)
//   cpu_metrics.cc            measured CPU, CPU efficiency, chunk CPU / run-queue / blocked
//                             split                                  (AggregatedMetrics.cpu)
//   findings.cc               what limited the run: one rule per finding code, thresholds as
//                             named constants                        (AggregatedMetrics.findings);
//                             the rules over aggregated metrics in findings_rules.cc, the
//                             capacity rules in findings_capacity.cc; each records its state
//                             (AggregatedMetrics.rule_evaluations)
//   capacity.cc               an engine run's task timeline: worker-bound, dispatch-bound and
//                             underfed time, dead workers, the 2x-slots replay
//   read_amplification.cc     bytes read over the distinct bytes of the files
//                             (WorkflowMetrics.read_amplification, distinct_file_bytes)
//   invariants.cc             figures that cannot be true (a share over 100 %, an efficiency
//                             over 1, a chunk longer than the run)
//                                                                 (AggregatedMetrics.impossible_figures)
//   chunk_columns.cc          the one pass over chunk records: validates them and makes
//                             compact columns (numbers, interned files/datasets/processes)
//                             that every later chunk figure reads
//   chunk_stats.cc            chunk metrics from the columns: counts, distributions with
//                             percentiles, per-dataset breakdown, failures, retries
//   chunk_info.cc             the original's chunk_info timeline
//   chunk_validation.cc       the InvalidArgument checks of one chunk record
//   section_stats.cc          per-section summaries and statistics   (ChunkMetrics.sections...)
//   fine_metrics.cc           span fine metrics, activity accounting (AggregatedMetrics.fine)
//   branch_coverage.cc        per-file branch and byte coverage      (AggregatedMetrics.branches)
//   distribution_stats.cc     mean/min/max/sample std/percentiles
//   time_weighted_average.cc  the original's time average over a series' own sample window
//                             (integrated by series_integral.cc)
//   input_validation.cc       the InvalidArgument checks of the rest of the input
//   job_queue.h               jobs shared with the helper thread on big inputs
//   flat_metrics.cc           the original's flat key names and units
//   key_names.cc              the original's key-name drift
//   scaling.cc                across runs (collect compare): replicate mean and spread, the
//                             noise rule, Amdahl's law fit of time per event vs cores
//
// Clocks: every instant is UTC nanoseconds since the Unix epoch; durations (elapsed_seconds,
// chunk durations) come from a monotonic clock. Aggregation never mixes the two: the window
// instants only bound the tracking integrals; rates divide by elapsed_seconds.
//
// Thread-safety: every function here is pure; call it from any thread (the inputs must not be
// modified during the call). Aggregate may use up to two helper threads internally (see
// AggregationOptions::parallel_min_records); they only read the input.
#ifndef ROASTCOFFEA_AGGREGATION_AGGREGATE_H_
#define ROASTCOFFEA_AGGREGATION_AGGREGATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aggregation/branch_coverage.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/section_stats.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct AggregationOptions {
  // Which fine-metric task prefixes are the processor's (the rest is overhead). Each entry is an
  // exact name or a glob pattern ('*' any run of characters, '?' one character), e.g.
  // {"MyProcessor", "process-*"}. Empty: every prefix counts as the processor's, as the
  // original does without a processor name.
  std::vector<std::string> processor_task_patterns;
  // Emit ChunkMetrics.chunk_info_columns (one row per record; large for big runs).
  bool include_chunk_info = true;
  // Evaluate the findings (AggregatedMetrics.findings, rule_evaluations; findings_evaluated
  // says whether they were). false: every other figure alone, e.g. to time it apart.
  bool evaluate_findings = true;
  // With at least this many chunk records, helper threads (started and joined inside
  // Aggregate) share the work: the tracking figures meanwhile; validation, branches and
  // sections while the columns are made (records in memory order only); then chunk_info and
  // the percentile selections.
  // SIZE_MAX: never.
  size_t parallel_min_records = 100'000;
};

// Chunk records in the compact form aggregation reads (aggregation/chunk_columns.h: columns of
// numbers, interned names, the branch and section accumulations), made once by PrepareChunks,
// for a caller that aggregates the same records more than once or holds them before the run
// ends. Read-only for Aggregate: one PreparedChunks serves any number of calls.
struct PreparedChunks {
  // columns.records or columns.table: the records it was made from.
  aggregation_internal::ChunkColumns columns;
  aggregation_internal::BranchCoverageAccumulator branches;
  aggregation_internal::SectionAccumulator sections;
};

// The pass over `chunks` that Aggregate makes otherwise (validation included: the same
// InvalidArgument for the first invalid record). `chunks` must outlive the result, unchanged.
// With at least `parallel_min_records` records in memory order the pass uses a helper thread
// (see BuildChunkColumns). Cost: O(records + sections).
absl::StatusOr<std::unique_ptr<PreparedChunks>> PrepareChunks(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
    size_t parallel_min_records = AggregationOptions().parallel_min_records);
// The same pass over the records of a table, read from its columns (no record is built, except
// one at a time for a record with fields outside them); a helper thread from
// `parallel_min_records` records. `chunks` must outlive the result, unchanged.
// Cost: O(records + sections).
absl::StatusOr<std::unique_ptr<PreparedChunks>> PrepareChunks(
    const ChunkTable& chunks,
    size_t parallel_min_records = AggregationOptions().parallel_min_records);

// Everything Aggregate reads. It holds pointers to the caller's data and copies nothing: the
// pointed-to data must outlive the Aggregate call. A null pointer means "not recorded".
struct AggregationInput {
  // What the executor says it processed (null: nothing reported, so events, bytes and rates
  // are unknown and left absent). If `report->datasets` is
  // non-empty, the totals are summed over the datasets and the report's own totals are ignored
  // (as the original does with its custom metrics).
  const v1::WorkflowReport* report = nullptr;
  // Monotonic wall time of the whole run, in seconds. Must be finite and >= 0; 0 gives rates 0.
  double elapsed_seconds = 0;
  // The run's wall-clock window (UTC ns). Both 0: unknown, then the tracking samples' own span
  // is used. Otherwise both must be set and end >= start. Tracking integrals (core-seconds,
  // worker averages "over_window") are taken over this window: samples outside it are cut off,
  // segments crossing its edges are cut there (interpolated for SAMPLED series, held for STEP).
  int64_t window_start_unix_ns = 0;
  int64_t window_end_unix_ns = 0;
  // Worker tracking; null = no worker tracking (then `workers` and the core-based efficiency
  // metrics are unset).
  const v1::TrackingData* tracking = nullptr;
  // One record per processed chunk (per attempt), in any order. Null or empty: `chunks` and
  // `branches` are unset.
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord>* chunks = nullptr;
  // Optional: PrepareChunks(*chunks) (or PrepareChunks(*chunk_table)), made beforehand;
  // Aggregate then skips its own pass over the records (`chunks` is still read by the findings
  // and for the failed records' texts). InvalidArgument if it was made from other records.
  const PreparedChunks* prepared_chunks = nullptr;
  // The chunk records as a table (schema/chunk_table.h) instead of `chunks`: set at most one of
  // the two. Aggregate reads the table's columns without building records (a record is built
  // only when read whole: one with fields outside the columns, a failed one, a finding naming
  // it, and every record for a finding rule that reads fields beyond the columns); the result,
  // findings included, is byte-identical to that of the table's records as `chunks`.
  const ChunkTable* chunk_table = nullptr;
  // Span fine metrics. Null, or no metric in any span: `fine` is unset.
  const google::protobuf::RepeatedPtrField<v1::Span>* spans = nullptr;
  // CPUs the collecting process may use (HostFacts.usable_cpus), when known: caps the capacity
  // of in-process workers (tracking->workers_share_process) in the CPU efficiency.
  std::optional<double> usable_cpus;
  // Read only by the findings (findings.h); null where absent: the run's warnings (lost or
  // recovered engine data, host load), how the measured code was built, the host's facts.
  const google::protobuf::RepeatedPtrField<v1::Warning>* warnings = nullptr;
  const v1::BuildInfo* analysis_build = nullptr;
  const v1::HostFacts* host_facts = nullptr;
  // The run's backend (metadata.backend) and configuration (backend, chunk size, chunks per
  // task): the knob a finding names.
  std::string backend;
  const google::protobuf::Map<std::string, std::string>* configuration = nullptr;
  AggregationOptions options;
};

// True when `report` says nothing (no events, chunks, datasets, bytes, process time or columns):
// an executor that reported nothing, whose figures are unknown rather than 0.
bool IsEmptyReport(const v1::WorkflowReport& report);

// An input viewing `measurement` (which must outlive it): its report (unless IsEmptyReport),
// tracking (if present), chunks and spans; elapsed_seconds from metadata.elapsed_seconds; the
// window from metadata.start_time/end_time when both are set; usable_cpus and host_facts from
// metadata.host_facts; analysis_build and configuration from metadata; the warnings present so
// far.
AggregationInput AggregationInputFromMeasurement(const v1::Measurement& measurement,
                                                 const AggregationOptions& options = {});

// Computes every aggregated metric. The result does not depend on the order of chunk records,
// of workers, of spans or of samples inside a series (series are sorted by time; sums are
// compensated so that only the last bit could ever depend on the order).
//
// Returns InvalidArgument, naming the offending input, for: a NaN, infinite or negative
// elapsed_seconds; a window with only one end set or end before start; worker_count and its
// time column of different lengths; a worker series column that is neither empty nor as long as
// its time_unix_ns; a NaN, infinite or negative cores or memory_bytes sample; a chunk record
// whose duration_seconds is NaN, infinite or negative, whose end_unix_ns is before its
// start_unix_ns, whose events are negative, or with a section whose kind is unknown or whose
// duration is NaN, infinite or negative; a fine metric whose value is NaN or infinite.
// Documented treatments (not errors): samples of one worker series sharing a timestamp are
// averaged into one sample for the window integrals (the original's keys keep its own
// treatment); fine metrics with a unit other than "seconds"/"bytes"/"count" are kept in the
// activity accounting under their unit and enter no original key that filters on the unit.
//
// Cost: O(n) in chunk records, sections and samples (percentiles by selection, not sorting),
// plus O(s log s) for s samples only when a series is not in time order.
absl::StatusOr<v1::AggregatedMetrics> Aggregate(const AggregationInput& input);

// Takes out of `measurement` what Aggregate would refuse, so that one bad value from a peer the
// tool does not control (an engine's sample, a chunk record the user's command wrote) costs that
// value, never the run. Returns one warning per kind of problem, naming the first few values
// and where they came from:
//   a non-finite or negative elapsed time -> 0 (unknown);
//   a tracking column whose length is not its time column's -> dropped (unknown);
//   worker_count and its time column of different lengths -> cut to the shorter;
//   a tracking sample with a non-finite or negative value, cores above 10^6 per worker or bytes
//     above 2^60 -> that sample (its time and every column) removed from its worker's series;
//   a chunk record Aggregate would refuse (see Aggregate) -> moved to rejected_chunks, as is;
//   a fine metric with a non-finite value -> removed.
// After it, Aggregate(AggregationInputFromMeasurement(*measurement)) does not fail on these.
// Cost: O(size of the measurement).
std::vector<v1::Warning> RepairForAggregation(v1::Measurement* measurement);
// The same for a measurement whose chunk records are held apart as a table (MeasuredRun,
// aggregation/measure.h; measurement->chunks() empty): the records Aggregate would refuse move
// from `chunks` to measurement->rejected_chunks, with the same warnings in the same order.
std::vector<v1::Warning> RepairForAggregation(v1::Measurement* measurement, ChunkTable* chunks);

// True when the engine split thread time into CPU and the rest (fine metrics with a
// "thread-cpu" or "thread-noncpu" activity; for a summary without by_task_prefix, such as the
// original tool's metrics.json, when its split figures are not all 0): only then are the
// processor/overhead CPU and I/O-and-wait figures of FineMetricsSummary measured.
bool HasThreadTimeSplit(const v1::FineMetricsSummary& fine);

// One entry of the original tool's flat metrics dict.
struct FlatMetric {
  std::string key;              // the original's key name, e.g. "elapsed_time_seconds"
  std::optional<double> value;  // nullopt where the original gives None
  std::string unit;             // "s", "bytes", "Gbps", "kHz", "MiB", ...
};

// The original tool's flat view of `metrics`: every key it would emit for the metrics present,
// under its original name and unit, in the original's order (workflow, workers, efficiency,
// fine metrics, chunks, branch coverage). Keys of absent sections are left out (no tracking: no
// worker keys; no spans: no fine keys; no chunk records: no chunk or branch keys), as in the
// original. Chunk memory deltas are given in MiB ("chunk_mem_delta_mean_mb", ...), like the
// original's "MB". Nested values are flattened with dots, sorted by name:
//   "per_dataset.<dataset>.<field>", "sections.<name>.<field>",
//   "chunk_info.<file>:<entry_start>:<entry_stop>[#<attempt> for
//   retries].<t_start|t_end|bytes_read>", "file_read_metrics.<file>.<field>",
//   "file_metadata.<file>.<field>",
// where <file> is the file's base name, with as many parent directories as it takes to tell it
// from the run's other files ("f.root", "mc/f.root"): never an absolute path (unless the files
// differ only there).
//   "compression_ratios.<i>", "bytes_read_percent_per_file.<i>".
// The passthrough keys (tracking_data, raw_chunk_metrics, raw_section_metrics,
// raw_span_metrics) are not duplicated: they are Measurement.tracking, .chunks (sections
// inside) and .spans. Our additions that the original does not have are not included.
// Cost: O(number of keys).
std::vector<FlatMetric> ToFlatMetrics(const v1::AggregatedMetrics& metrics);
// The same keys, in the same order, handed to `sink` one at a time instead of held in a vector:
// the original's chunk_info family has three keys per chunk record (3 x 10^6 for a million).
void ForEachFlatMetric(const v1::AggregatedMetrics& metrics,
                       absl::FunctionRef<void(FlatMetric&&)> sink);

// Maps an old key name from the original's key-name drift (docs/reference.md §2.9) to the current
// name: "wall_time" -> "elapsed_time_seconds", "overall_rate_gbps" -> "data_rate_gbps",
// "event_rate_wall_khz" -> "event_rate_elapsed_khz", "processor_noncpu_*" ->
// "processor_io_wait_*", "*_percentage" -> "*_percent", ... A current name maps to itself.
// Returns nullopt for unknown keys and for keys that were removed without a successor
// ("overall_rate_mbps", "overall_rate_mbs"). Only the name is mapped: "event_rate_core_hz" was in
// Hz per core, its successor "event_rate_core_khz" is in kHz per core.
std::optional<std::string> CanonicalKeyName(absl::string_view key);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_AGGREGATE_H_
