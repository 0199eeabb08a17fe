// Chunk metrics from chunk records (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_

#include <optional>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's aggregate_chunk_metrics (reference §2.5). nullopt for no records. Otherwise:
//   num_chunks = all records; num_failed_chunks = records with status FAILED (the original's
//   `error` key); num_successful_chunks = the rest. Statistics use successful records only:
//   duration_seconds and events: DistributionStats over every successful record;
//   memory_delta_bytes: memory_after_bytes - memory_before_bytes over the successful records
//     that measured memory (before or after non-zero); unset when none did;
//   total_events_from_chunks: sum of events;
//   per_dataset (sorted by name; "" counts as "unknown"): num_chunks, total and mean duration,
//     total events, mean_events_per_chunk set only when total events > 0.
// When every record failed only the three counts are set. The result does not depend on the
// record order. Durations must already be validated (finite, >= 0). Cost: O(n log n).
std::optional<v1::ChunkMetrics> ComputeChunkMetrics(const std::vector<v1::ChunkRecord>& chunks);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_STATS_H_
