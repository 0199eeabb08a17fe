// Internal to //ingest: the reference reading of chunk records, for tests.
#ifndef ROASTCOFFEA_INGEST_COFFEA_JSON_INTERNAL_H_
#define ROASTCOFFEA_INGEST_COFFEA_JSON_INTERNAL_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ingest/coffea_json.h"

namespace roastcoffea {
namespace ingest_internal {

// ParseChunkRecords with every record read by JsonTree, none by the direct parser
// (ingest/chunk_record_parser.h): what ParseChunkRecords must give, to the byte.
absl::StatusOr<ChunkRecordsRead> ParseChunkRecordsThroughTree(absl::string_view json,
                                                              absl::string_view source);

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_COFFEA_JSON_INTERNAL_H_
