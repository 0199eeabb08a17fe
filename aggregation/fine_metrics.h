// Fine metrics from span metrics: Dask's activity accounting (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_FINE_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_FINE_METRICS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// True when `task_prefix` equals `pattern` or matches it as a glob ('*' any run of characters,
// '?' exactly one). Cost: O(|prefix| * |pattern|) worst case.
bool MatchesTaskPattern(absl::string_view task_prefix, absl::string_view pattern);

// The context of a worker's, a task prefix's or a span's fine metrics that holds its thread time,
// each second once: "execute" when it has one (Dask's digests split its threads' time over
// activities), else "task-stream" (Dask before 2023.4: its task stream's compute and transfer
// intervals are the same seconds seen another way), else "" for every context (a backend with
// one view, e.g. TaskVine's categories). `has_context` says which contexts there are. The one
// rule of worker_seconds below and of the span and task-prefix tables (export/span_tables.h).
std::string ThreadTimeContext(absl::FunctionRef<bool(absl::string_view)> has_context);

// The original's parse_fine_metrics (docs/reference.md §2.4) plus the full accounting. nullopt when
// no span carries a metric. Metrics with an empty `worker` are cluster totals; metrics with a
// worker are that worker's. The original's keys and by_task_prefix use the cluster totals, or,
// when there are none, the per-worker metrics summed. Spans are summed (they should not nest).
//   processor vs overhead: a prefix is the processor's when it matches any of
//     `processor_patterns` (MatchesTaskPattern), or when the list is empty (the original
//     without processor name); applies to thread-cpu and thread-noncpu only, as the original;
//   processor_cpu_time_seconds / _io_wait_: thread-cpu / thread-noncpu (any unit, any context,
//     as the original), percents = 100 * part / (cpu + io_wait) (0 when the sum is 0);
//   processor_run_queue_wait_seconds: thread-run-queue-wait of processor prefixes (a part of
//     thread-noncpu, capped at it; not counted again in worker_seconds), when any is given;
//   total_bytes_memory_read, disk_read_bytes, disk_write_bytes: memory-read, disk-read,
//     disk-write with unit "bytes", all prefixes; (de)compression and (de)serialization times:
//     decompress, compress, deserialize, serialize, any unit, and their sums;
//   by_task_prefix: every (context, task prefix, activity, unit) total, none dropped (executor,
//     other, idle included), sorted;
//   by_worker: every (worker, context, activity, unit) total of the per-worker metrics, sorted;
//   worker_seconds: per worker its thread time, each second counted once: the sum of its
//     "seconds" activities of context "execute" (Dask's digests) when it has any, else of
//     "task-stream" (Dask before 2023.4), else of every context (wall time x threads when the
//     backend accounts for all of it; never more than its core-seconds) and, from
//     `core_seconds_by_worker` (may be null), the tracked core-seconds of that worker for
//     comparison;
//   a worker whose every total is 0 (idle) has neither by_worker nor worker_seconds rows: one
//     row per worker and activity of zeros would make the output grow with idle connections.
// Values must already be validated (finite). Cost: O(m log k) for m metrics, k distinct keys.
std::optional<v1::FineMetricsSummary> ComputeFineMetrics(
    const google::protobuf::RepeatedPtrField<v1::Span>& spans,
    const std::vector<std::string>& processor_patterns,
    const absl::flat_hash_map<std::string, double>* core_seconds_by_worker);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINE_METRICS_H_
