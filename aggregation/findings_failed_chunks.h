// The failed_chunks finding, shared by the findings and their reference (one text, one rule).
// It checks its cause in the records before it says that events are missing: a failed record
// that names its chunk (a file, or an entry range) is recovered when a successful record names
// the same chunk; a failed record that names no chunk (an engine task seen only in its logs)
// cannot be matched to a resubmission, so whether its work is missing is not known.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_FAILED_CHUNKS_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_FAILED_CHUNKS_H_

#include <cstdint>
#include <vector>

#include "aggregation/chunk_columns.h"
#include "aggregation/findings_rules.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_rules {

struct FailedChunkCounts {
  int64_t missing = 0;    // names its chunk, and no successful record names the same one
  int64_t recovered = 0;  // names its chunk, and a successful record names the same one
  int64_t unnamed = 0;    // names no chunk: a resubmission cannot be matched to it
};

// Whether `chunk` names its chunk: a file, or a non-empty entry range. Two records name the
// same chunk when their file and entry range are equal.
bool NamesItsChunk(const v1::ChunkRecord& chunk);

// Counts the failed records `failed` by the rule above against `successful` (every other
// record, in any order), both given as record indices of `columns`. Reads the columns only (a
// file as its interned id), no record; only a successful record whose entry range equals a
// failed record's is looked up, so a run where failures are few does little more than one
// integer test per successful record. Cost: O(failed + successful).
FailedChunkCounts CountFailedChunks(const ChunkColumns& columns,
                                    const std::vector<uint32_t>& failed,
                                    const std::vector<uint32_t>& successful);

// Adds the failed_chunks finding for `failed` (the failed records, in their canonical order)
// with their `counts` (CountFailedChunks) when any failed: CRITICAL when events are missing,
// WARNING when only unnamed tasks failed, INFO when every failed attempt was rerun successfully.
void AddFailedChunksFinding(const std::vector<const v1::ChunkRecord*>& failed,
                            const FailedChunkCounts& counts, int64_t num_chunks, Builder& b);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_FAILED_CHUNKS_H_
