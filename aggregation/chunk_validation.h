// Checks of one chunk record (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_VALIDATION_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_VALIDATION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// OK, or InvalidArgument naming chunks[index] (uuid, file, entry range) and the problem:
// duration_seconds NaN, infinite or negative; end_unix_ns before start_unix_ns (both set);
// negative events; a section of unknown kind, or whose duration is NaN, infinite or negative
// or whose cpu_seconds is not finite. Cost: O(sections).
absl::Status ValidateChunkRecord(const v1::ChunkRecord& chunk, size_t index);

// The same rules and message for record `index` of `table`, read from its columns (a record
// whose sections are in its remainder, SectionsInRest, is materialized first).
absl::Status ValidateTableRecord(const ChunkTable& table, size_t index);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_VALIDATION_H_
