// Reading what a Python analysis leaves for collect: Coffea's workflow report and the original
// roastcoffea's chunk records, both as JSON files.
#ifndef ROASTCOFFEA_TOOLS_COFFEA_JSON_H_
#define ROASTCOFFEA_TOOLS_COFFEA_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Parses the JSON of a Coffea report (`runner(..., savemetrics=True)`): an object with
// `bytesread`, `entries`, `processtime`, `chunks` and `columns`, all optional. A key that is
// absent stays absent in the report (so aggregation applies the original's fall-backs).
// `source` names the input in errors. InvalidArgument for malformed JSON or wrong types.
absl::StatusOr<v1::WorkflowReport> ParseCoffeaReport(absl::string_view json,
                                                     absl::string_view source);

// Parses chunk records in the original's format (reference §1.3): a JSON list of objects, or an
// output object holding that list under "__roastcoffea_metrics__". Keys: t_start/t_end (epoch
// seconds), duration (s), mem_before_mb/mem_after_mb (MiB), bytes_read, num_events, dataset,
// file, uuid, entry_start, entry_stop, accessed_branches, accessed_bytes,
// accessed_uncompressed_bytes, branches_read_percent, bytes_read_percent, timing/memory/bytes
// section dicts, file_metadata, error. Unknown keys are ignored; a record with an `error` key is
// FAILED with that text. Errors name the source and the record's index.
absl::StatusOr<std::vector<v1::ChunkRecord>> ParseChunkRecords(absl::string_view json,
                                                               absl::string_view source);

// Reads `path` and parses it with the functions above. NotFound when the file does not exist.
absl::StatusOr<v1::WorkflowReport> ReadCoffeaReport(const std::string& path);
absl::StatusOr<std::vector<v1::ChunkRecord>> ReadChunkRecords(const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_COFFEA_JSON_H_
