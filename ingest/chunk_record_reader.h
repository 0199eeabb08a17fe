// Internal to //ingest:coffea_json: one chunk record in the original's format read into a
// v1::ChunkRecord, each bad value left out with a warning naming it. The record's members come
// either from the direct parser (ingest/chunk_record_parser.h: the common, well-formed record)
// or from a parsed JsonTree (any other record); both give the same RecordMembers, read here by
// one set of rules.
#ifndef ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_
#define ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"
#include "ingest/ingest_warnings.h"
#include "ingest/json_tree.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace ingest_internal {

// The keys of a chunk record that are read; the rest are ignored.
enum RecordKey {
  kTaskId,
  kDataset,
  kFile,
  kUuid,
  kEntryStart,
  kEntryStop,
  kNumEvents,
  kTStart,
  kTEnd,
  kDuration,
  kMemBefore,
  kMemAfter,
  kBytesRead,
  kAccessedBytes,
  kAccessedUncompressedBytes,
  kBranchesReadPercent,
  kBytesReadPercent,
  kTiming,
  kMemory,
  kBytes,
  kAccessedBranches,
  kFileMetadata,
  kError,
  kRecordKeyCount
};

// The key `name` stands for; kRecordKeyCount when it is not read.
RecordKey FindRecordKey(absl::string_view name);
// The name of `key` (not kRecordKeyCount).
absl::string_view RecordKeyName(RecordKey key);

// One JSON value as the reader sees it: a kind, and the number or (unescaped) string; a list or
// object is its kind only (its entries, where they are read, are in RecordMembers).
struct JsonScalar {
  JsonNode::Kind kind = JsonNode::Kind::kNull;
  double number = 0;
  absl::string_view text;
};

struct NamedScalar {
  absl::string_view name;
  JsonScalar value;
};

// The members of one record object, viewing the text they were parsed from.
struct RecordMembers {
  // By RecordKey; kNull when absent (or null).
  JsonScalar fields[kRecordKeyCount];
  // The entries, in the order written, of `timing`, `memory` and `bytes` (by key - kTiming)
  // and of `file_metadata` when they are objects, and of `accessed_branches` when a list.
  std::vector<NamedScalar> sections[3];
  std::vector<NamedScalar> file_metadata;
  std::vector<JsonScalar> branches;
  // Ids of the JSON text of `accessed_branches` and `file_metadata`, when the direct parser
  // read them as a list and an object (0 otherwise): one parser gives equal texts equal ids
  // while it remembers them (ChunkRowReader's cache key).
  uint64_t branches_id = 0;
  uint64_t file_metadata_id = 0;

  void Clear() {
    for (JsonScalar& field : fields) field.kind = JsonNode::Kind::kNull;
    for (std::vector<NamedScalar>& entries : sections) entries.clear();
    file_metadata.clear();
    branches.clear();
    branches_id = 0;
    file_metadata_id = 0;
  }
};

// Reads record `index` of `source` (its members in `members`) into `chunk`, which must be empty.
void ReadChunkRecord(const RecordMembers& members, absl::string_view source, size_t index,
                     Warnings* warnings, v1::ChunkRecord* chunk);

// The same for a record parsed into `tree`; `members` is scratch. False (with a warning) when
// the record is not an object: `chunk` is then to be dropped.
bool ReadChunkRecord(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, RecordMembers* members, v1::ChunkRecord* chunk);

// The same into `row` (cleared first), which views `members`' text (and owns what it makes):
// what ChunkTable::Append takes, without a v1::ChunkRecord on the way.
void ReadChunkRecord(const RecordMembers& members, absl::string_view source, size_t index,
                     Warnings* warnings, ChunkRow* row);
bool ReadChunkRecord(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, RecordMembers* members, ChunkRow* row);

// ReadChunkRecord into one ChunkRow reused record after record, keeping what clearing the row
// would free (the rest's file metadata and its strings) for the next record that has it. The
// row is to be filled by this reader only (empty at first): of its rest, it clears only what it
// sets. The rest (branches and file metadata) of a record whose text for them was met recently
// comes serialized from a cache (ChunkRow::rest_bytes), valid until the next Read.
class ChunkRowReader {
 public:
  void Read(const RecordMembers& members, absl::string_view source, size_t index,
            Warnings* warnings, ChunkRow* row);
  bool Read(const JsonTree& tree, absl::string_view source, size_t index, Warnings* warnings,
            RecordMembers* members, ChunkRow* row);

 private:
  // A rest serialized, by the ids of the text it was read from (RecordMembers). Rich records
  // repeat a file's branches and metadata in each of its chunks: they are read, built and
  // serialized once per distinct text. The members read are to come from one parser.
  struct CachedRest {
    uint64_t branches_id = 0;
    uint64_t file_metadata_id = 0;
    std::string bytes;  // the row's rest serialized ("" for none)
  };
  // Read for a record with rest ids (RecordMembers), through the cache below; out of line,
  // so that the common record's path stays as short as without it.
  ABSL_ATTRIBUTE_NOINLINE void ReadWithRemembered(const RecordMembers& members,
                                                  absl::string_view source, size_t index,
                                                  Warnings* warnings, ChunkRow* row);
  // The entry for `members`' rest, or nullptr when the rest is not to be cached (no ids from
  // the direct parser, or a value that gives a warning).
  CachedRest* CacheEntry(const RecordMembers& members, bool* hit);

  std::unique_ptr<v1::FileMetadata> spare_file_metadata_;
  std::vector<CachedRest> rest_cache_;  // direct-mapped by the ids
};

}  // namespace ingest_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_CHUNK_RECORD_READER_H_
