// Spans and task prefixes as tables and flat rows: the workload's own spans (Dask
// `distributed.span`), and per task prefix (Dask) or category (TaskVine) the engine's fine
// metrics, which measurement.json holds exactly but the summary tables only total.
//
//   "Workload Spans": one row per span the workload declared (Span.workload_spans of every
//     collect window, parents before children, children indented under their parent): its
//     duration, CPU (thread-cpu), off CPU (thread-noncpu: not split, it holds run-queue, GIL,
//     lock and I/O waits), the sum of its "seconds" activities, and its task prefixes (a '*'
//     marks a prefix that also ran in other spans: its figures are the prefix's totals over
//     those spans, as the engine does not split them).
//   "Task Prefixes": one row per task prefix of FineMetricsSummary.by_task_prefix, largest total
//     first (the first kMaxTaskPrefixRows; a last row counts the rest): CPU, off CPU (or, where
//     the run queue was measured, waiting for a CPU and blocked), other activities, total.
// Empty when the measurement has neither. Values are seconds summed over workers.
//
// Flat rows (stable snake_case keys, seconds; a name is kept as the engine wrote it):
//   span.<name path joined by '/'>.duration_seconds / .cpu_seconds / .off_cpu_seconds /
//     .total_seconds;
//   task_prefix.<prefix>.cpu_seconds / .off_cpu_seconds / .run_queue_wait_seconds (when
//     measured) / .other_seconds / .total_seconds (every prefix, none left out).
#ifndef ROASTCOFFEA_EXPORT_SPAN_TABLES_H_
#define ROASTCOFFEA_EXPORT_SPAN_TABLES_H_

#include <cstddef>
#include <vector>

#include "aggregation/aggregate.h"
#include "export/tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

inline constexpr size_t kMaxTaskPrefixRows = 20;

// The two tables above, those that have rows.
std::vector<SummaryTable> BuildSpanTables(const v1::Measurement& measurement);

// The flat rows above.
std::vector<FlatMetric> SpanFlatMetrics(const v1::Measurement& measurement);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_SPAN_TABLES_H_
