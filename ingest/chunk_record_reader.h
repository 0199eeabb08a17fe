// Internal to //ingest:coffea_json: one chunk record in the original's format (a parsed
// JsonTree) read into a v1::ChunkRecord, each bad value left out with a warning naming it.
#ifndef ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_
#define ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "ingest/ingest_warnings.h"
#include "ingest/json_tree.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace ingest_internal {

// Reads record `index` of `source` (parsed into `tree`) into `chunk`, which must be empty.
// False (with a warning) when the record is not an object: `chunk` is then to be dropped.
bool ReadChunkRecord(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, v1::ChunkRecord* chunk);

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_
