// Checks of AggregationInput before any formula runs (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_INPUT_VALIDATION_H_
#define ROASTCOFFEA_AGGREGATION_INPUT_VALIDATION_H_

#include "absl/status/status.h"
#include "aggregation/aggregate.h"

namespace roastcoffea {
namespace aggregation_internal {

// OK, or InvalidArgument naming the first offending input: elapsed_seconds NaN, infinite or
// negative; a window with one end set or end before start; worker_count and
// worker_count_time_unix_ns of different lengths; a worker series column that is neither empty
// nor as long as its time_unix_ns; a NaN, infinite or negative cores or memory_bytes sample; a
// non-finite fine metric. Chunk records are checked by ValidateChunkRecord during the chunk pass.
// Cost: O(samples + fine metrics).
absl::Status ValidateAggregationInput(const AggregationInput& input);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_INPUT_VALIDATION_H_
