// Chunk metrics from chunk records (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "aggregation/branch_coverage.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/section_stats.h"
#include "aggregation/start_order.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's aggregate_chunk_metrics and build_chunk_info (docs/reference.md §2.5), plus our
// additions, in one pass over the records. nullopt for no records. Otherwise:
//   num_chunks = all records (retries included: attempt > 0 is its own record, counted again
//   in num_retried_chunks); num_failed_chunks = records with status FAILED (the original's
//   `error` key), each listed in failed_chunks with its error text (sorted by dataset, file,
//   entry range, attempt, uuid); num_successful_chunks = the rest.
//   Statistics use successful records only:
//   duration_seconds and events: DistributionStats over every successful record;
//   memory_delta_bytes: memory_after_bytes - memory_before_bytes over the successful records
//     that measured memory (before or after non-zero); unset when none did;
//   time_per_event_seconds: duration / events over successful records with events > 0;
//     the four distributions carry exact percentiles p50/p90/p95/p99;
//   total_events_from_chunks: sum of events;
//   per_dataset (sorted by name; "" counts as "unknown"): num_chunks, total and mean duration,
//     total events, mean_events_per_chunk set only when total events > 0, and the four
//     distributions of that dataset;
//   sections / section_stats: see SectionAccumulator (successful records only);
//   chunk_info (when `include_chunk_info`): BuildChunkInfo; with at least
//     `parallel_min_records` records it is built on a second thread (joined before returning).
// When every record failed only the counts and failed_chunks are set. The result does not
// depend on the record order.
// Reads the records' columns (BuildChunkColumns) and the sections they fed to `sections`; the
// percentile selections and chunk_info are jobs run on two threads with at least
// `parallel_min_records` records. Cost: O(n) (+ O(n log n) for chunk_info and failures not
// already in that order).
std::optional<v1::ChunkMetrics> AggregateChunkColumns(const ChunkColumns& columns,
                                                      const SectionAccumulator* sections,
                                                      bool include_chunk_info,
                                                      size_t parallel_min_records);
// The same, also making the records' start order (start_order.h) into `*start_order` when not
// null, on the helper thread with the rest (chunk_info's order starts from it): for the
// findings, which start from it too. Left as it was when `columns` is empty.
std::optional<v1::ChunkMetrics> AggregateChunkColumns(const ChunkColumns& columns,
                                                      const SectionAccumulator* sections,
                                                      bool include_chunk_info,
                                                      size_t parallel_min_records,
                                                      StartOrder* start_order);

// The same from the records: BuildChunkColumns (which validates each record, returning the first
// invalid record's error, and feeds `branches`, not null), then AggregateChunkColumns.
absl::StatusOr<std::optional<v1::ChunkMetrics>> AggregateChunkRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, bool include_chunk_info,
    size_t parallel_min_records, BranchCoverageAccumulator* branches);

// Convenience for tests: the same on a vector of valid records (copied), with chunk_info;
// nullopt also for invalid records.
std::optional<v1::ChunkMetrics> ComputeChunkMetrics(const std::vector<v1::ChunkRecord>& chunks);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_
