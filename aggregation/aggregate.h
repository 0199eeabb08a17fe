// Aggregation: turns what one run recorded (workflow report, elapsed time, worker tracking,
// chunk records) into v1::AggregatedMetrics, with the same formulas whatever the backend.
//
// The formulas are those of the original Python roastcoffea 0.1.2 (reference §2.1-§2.5), in the
// same units. Each formula lives in exactly one file of this package:
//   workflow.cc               totals, data and event rates           (AggregatedMetrics.workflow)
//   worker_metrics.cc         workers, cores, memory from tracking   (AggregatedMetrics.workers)
//   efficiency.cc             core efficiency, speedup, core rate    (AggregatedMetrics.efficiency)
//   chunk_stats.cc            chunk counts, per-dataset breakdown    (AggregatedMetrics.chunks)
//   distribution_stats.cc     mean/min/max/sample std
//   time_weighted_average.cc  trapezoid time average of a sample series
//   input_validation.cc       the InvalidArgument checks listed at Aggregate
//   flat_metrics.cc           the original's flat key names and units
//
// Thread-safety: every function here is pure; call it from any thread.
#ifndef ROASTCOFFEA_AGGREGATION_AGGREGATE_H_
#define ROASTCOFFEA_AGGREGATION_AGGREGATE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Everything Aggregate reads. Plain data; fill in what the run produced.
struct AggregationInput {
  // What the executor says it processed. If `report.datasets` is non-empty, the totals are
  // summed over the datasets and the report's own totals are ignored (as the original does
  // with its custom metrics).
  v1::WorkflowReport report;
  // Monotonic wall time of the whole run, in seconds. Must be finite and >= 0; 0 gives rates 0.
  double elapsed_seconds = 0;
  // Worker tracking; nullopt = no worker tracking (then `workers` and the core-based
  // efficiency metrics are unset).
  std::optional<v1::TrackingData> tracking;
  // One record per processed chunk (per attempt), in any order. Empty: `chunks` is unset.
  std::vector<v1::ChunkRecord> chunks;
  // Fine metrics. Not used yet (fine metrics come later): accepted and ignored.
  std::vector<v1::Span> spans;
};

// Computes every aggregated metric. The result does not depend on the order of chunk records,
// of workers, or of samples inside a series (series are sorted by time).
//
// Returns InvalidArgument, naming the offending input, for: a NaN, infinite or negative
// elapsed_seconds; tracking.worker_count and tracking.worker_count_time_unix_ns of different
// lengths; a worker series with a non-empty column whose length differs from its
// time_unix_ns; a chunk record whose duration_seconds is NaN, infinite or negative.
//
// Cost: O(n log n) in the number of samples and chunk records.
absl::StatusOr<v1::AggregatedMetrics> Aggregate(const AggregationInput& input);

// One entry of the original tool's flat metrics dict.
struct FlatMetric {
  std::string key;               // the original's key name, e.g. "elapsed_time_seconds"
  std::optional<double> value;   // nullopt where the original gives None
  std::string unit;              // "s", "bytes", "Gbps", "kHz", "MiB", ...
};

// The original tool's flat view of `metrics`: every key it would emit for the metrics present,
// under its original name and unit, in the original's order (workflow, workers, efficiency,
// chunks). Keys of absent sections are left out (no tracking: no worker keys; no chunk
// records: no chunk keys), as in the original. Chunk memory deltas are given in MiB
// ("chunk_mem_delta_mean_mb", ...), like the original's "MB". Per-dataset chunk values are
// flattened as "per_dataset.<dataset>.<field>", datasets sorted by name. Our additions that the
// original does not store (MB/s, uncompressed bytes, compression factor) are not included.
// Cost: O(number of keys).
std::vector<FlatMetric> ToFlatMetrics(const v1::AggregatedMetrics& metrics);

// Maps an old key name from the original's key-name drift (reference §2.9) to the current name:
// "wall_time" -> "elapsed_time_seconds", "overall_rate_gbps" -> "data_rate_gbps",
// "event_rate_wall_khz" -> "event_rate_elapsed_khz", "processor_noncpu_*" ->
// "processor_io_wait_*", "*_percentage" -> "*_percent", ... A current name maps to itself.
// Returns nullopt for unknown keys and for keys that were removed without a successor
// ("overall_rate_mbps", "overall_rate_mbs"). Only the name is mapped: "event_rate_core_hz" was in
// Hz per core, its successor "event_rate_core_khz" is in kHz per core.
std::optional<std::string> CanonicalKeyName(absl::string_view key);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_AGGREGATE_H_
