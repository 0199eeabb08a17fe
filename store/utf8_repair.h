// Strings that are not UTF-8 in a protobuf message (internal to //export).
//
// proto3 `string` fields must hold UTF-8. libprotobuf serialises invalid bytes anyway (with a log
// line) but then refuses to parse the result, so one Latin-1 byte in a command-line argument,
// a path or a worker name from an engine's log would make a saved measurement unreadable.
#ifndef ROASTCOFFEA_STORE_UTF8_REPAIR_H_
#define ROASTCOFFEA_STORE_UTF8_REPAIR_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
// U+10FFFF). Cost: O(size).
bool IsValidUtf8(absl::string_view text);

// `text` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
std::string RepairUtf8(absl::string_view text);

// True when every string field of `message`, at any depth (map keys and values included), is
// valid UTF-8. Cost: O(size of the message); no copy.
bool AllStringsValidUtf8(const google::protobuf::Message& message);

// Whether AllStringsValidUtf8 reads chunk records by their generated accessors (10^6 records:
// a third of a save's CPU time through reflection). It does while it knows every string field
// the schema gives them; a string field added there and not to it falls back to reflection
// (slower, never wrong), and utf8_repair_test says so.
bool ChunkRecordsCheckedByAccessors();

// Repairs every string field of `message` that is not valid UTF-8 (RepairUtf8) and returns how
// many were repaired; `first_path` (may be null) receives the path of the first one, e.g.
// "metadata.name" or "chunks[3].worker".
int RepairStringsUtf8(google::protobuf::Message* message, std::string* first_path);

// The same for a message found at `path` in the message saved (e.g. "chunks[3]" for a chunk
// record saved on its own): `first_path` then starts with `path` ("chunks[3].worker").
int RepairStringsUtf8(google::protobuf::Message* message, const std::string& path,
                      std::string* first_path);

// Whether every string of `record` is valid UTF-8: AllStringsValidUtf8 for one record, without
// its per-call set-up (by the generated accessors while ChunkRecordsCheckedByAccessors()).
bool ChunkRecordStringsValidUtf8(const v1::ChunkRecord& record);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_UTF8_REPAIR_H_
