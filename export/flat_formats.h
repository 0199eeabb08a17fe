// The flat metrics of a measurement for scripts: CSV, JSON or Markdown (`collect show
// --format=csv|json|markdown`).
//
// The keys are, in order: the headline CPU figures (HeadlineFlatMetrics), the original tool's
// (aggregation's ToFlatMetrics, same names, units and order; total_cpu_time there is the
// original's summed chunk WALL time, not CPU), then our additions (AdditionalFlatMetrics).
// Values are printed with 15 significant digits; an unknown value (the original's None, a
// figure nothing measured, or a NaN) is empty in CSV and Markdown and null in JSON: never 0.
//
// Thread-safety: pure functions. Cost: linear in the number of keys.
#ifndef ROASTCOFFEA_EXPORT_FLAT_FORMATS_H_
#define ROASTCOFFEA_EXPORT_FLAT_FORMATS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aggregation/aggregate.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

enum class FlatFormat { kCsv, kJson, kMarkdown };

// "csv", "json" or "markdown" (also "md"). InvalidArgument naming the value otherwise.
absl::StatusOr<FlatFormat> ParseFlatFormat(absl::string_view name);

// Our metrics that the original does not have, flattened the same way:
//   chunk_duration_p50/p90/p95/p99, time_per_event_mean/p50/p99 (s), num_retried_chunks,
//   window_seconds, avg_workers_over_window, core_seconds, avg_cores_over_window,
//   core_efficiency_over_core_seconds, parallel_efficiency, event_rate_core_seconds_khz,
//   total_uncompressed_bytes_read, compression_factor, distinct_file_bytes, read_amplification
//   (x: bytes read / distinct bytes of the files), chunk_peak_live_bytes_mean/max,
//   per_dataset.<dataset>.duration_p50/p95 (s),
//   section_stats.<name>.<time|memory|bytes>.total/mean/p50/p95 (s or bytes),
//   section_stats.<name>.time.share_of_chunk_time (fraction).
// Only keys whose source field is present are emitted.
std::vector<FlatMetric> AdditionalFlatMetrics(const v1::AggregatedMetrics& metrics);

// The figures every output shows first (AggregatedMetrics.cpu, aggregation/cpu_metrics.h), each
// key always present, its value unknown where not measured: cpu_efficiency (fraction),
// cpu_seconds, core_seconds_available, usable_cores, event_rate_per_cpu_second_khz,
// chunk_wall_seconds, chunk_cpu_seconds, chunk_run_queue_wait_seconds, chunk_blocked_seconds,
// summed_chunk_wall_seconds (Coffea's processtime as reported).
std::vector<FlatMetric> HeadlineFlatMetrics(const v1::AggregatedMetrics& metrics);

// HeadlineFlatMetrics, ToFlatMetrics, then AdditionalFlatMetrics.
std::vector<FlatMetric> AllFlatMetrics(const v1::AggregatedMetrics& metrics);

// `measurement` for scripts (CSV, JSON) or for a pull-request comment (Markdown):
//   CSV       "key,value,unit" header; first per finding "finding.<code>,<severity>,severity" and
//             "finding.<code>.<number key>,<value>,<unit>"; per rule "rule.<code>,<state>,state"
//             (fired, clear or not_evaluated) and, when not evaluated,
//             "rule.<code>.reason,<why>,text"; then one row per flat metric (RFC
//             4180 quoting), "\r\n"-free.
//   JSON      {"measurement": name, "findings_evaluated": bool,
//              "findings": [{"severity", "code", "title", "evidence", "suggestion",
//                            "numbers": {key: {"value", "unit"}}}, ...],
//              "rules": [{"code", "state", "reason"}, ...] (empty: written before rule states),
//              "warnings": [{"code", "message"}, ...],
//              "metrics": {key: {"value", "unit"}, ...}, "order": [key, ...]}: keyed
//             (`jq .metrics.data_rate_gbps.value`), the flat order kept in "order"; a key that
//             repeats gets "#2", "#3", ...
//   Markdown  the human outputs: the run header as a list, the findings, then every summary
//             table of FormatSummaryTables as a Markdown table ('|' and newlines escaped,
//             numbers right-aligned).
// The text ends in '\n'.
std::string FormatFlatMetrics(const v1::Measurement& measurement, FlatFormat format);

// FormatFlatMetrics written to `out` in pieces as the keys are made, never all held: for a
// measurement of a million chunk records (the original's chunk_info family, three keys each)
// the JSON costs ~300 MB of output but not of memory. Same bytes as FormatFlatMetrics.
void WriteFlatMetrics(const v1::Measurement& measurement, FlatFormat format, std::ostream& out);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_FLAT_FORMATS_H_
