// Reading what a Python analysis leaves for collect: Coffea's workflow report and the original
// roastcoffea's chunk records, both as JSON files.
#ifndef ROASTCOFFEA_INGEST_COFFEA_JSON_H_
#define ROASTCOFFEA_INGEST_COFFEA_JSON_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Limits on what a command leaves for collect (README: "limits and what collect does with bad
// data"). Either file larger than kMaxCoffeaJsonBytes is refused whole; records after the
// first kMaxChunkRecords are dropped with a warning; a file gives at most kMaxWarningsPerFile
// warnings, then one that counts the rest.
inline constexpr int64_t kMaxCoffeaJsonBytes = int64_t{1} << 30;
inline constexpr int kMaxChunkRecords = 1'000'000;
inline constexpr int kMaxWarningsPerFile = 20;
// Sections (the `timing`, `memory` and `bytes` entries together) one chunk record keeps; the
// entries beyond are merged, per kind, into one section named kOverflowSectionRecordName (its
// entries count them, its value is their sum) with a warning naming the record, as the
// in-process recorder merges keys beyond its 64 (instrumentation/internal/chunk_context.h).
inline constexpr int kMaxSectionsPerChunkRecord = 1'000;
inline constexpr char kOverflowSectionRecordName[] = "(overflow)";

// What could be used from one file, and one warning (naming the source, the record and the
// key) per value or record that could not: a wrong type, NaN or Infinity (Python's json.dump
// writes them), a time outside int64 nanoseconds. Such a value is left out, never the file.
struct CoffeaReportRead {
  v1::WorkflowReport report;
  std::vector<std::string> warnings;
};
struct ChunkRecordsRead {
  std::vector<v1::ChunkRecord> records;
  std::vector<std::string> warnings;
  // ChunkRecordsOptions::cancelled stopped the read: `records` are those before (a warning says).
  bool cancelled = false;
};

// The same read into a ChunkTable (schema/chunk_table.h): the compact form, ~190 B per
// typical record instead of ~980 B as messages. table.Record(i) equals records[i] of the
// ChunkRecordsRead of the same input, and the warnings are the same.
struct ChunkTableRead {
  ChunkTable table;
  std::vector<std::string> warnings;
  bool cancelled = false;
};

// How often ChunkRecordsOptions::cancelled is asked: every this many records (well under a
// tenth of a second of reading).
inline constexpr int kRecordsPerCancellationCheck = 4096;

struct ChunkRecordsOptions {
  // Asked every kRecordsPerCancellationCheck records and between reads of the file: true stops
  // the read, which returns the records read so far (ChunkRecordsRead::cancelled). Empty: never.
  std::function<bool()> cancelled;
  // ReadChunkRecords reads the file in pieces of this many bytes (more while one record is
  // larger); memory holds one piece and the records. Tests make records straddle pieces.
  size_t piece_bytes = size_t{1} << 20;
};

// Parses the JSON of a Coffea report (`runner(..., savemetrics=True)`): an object with
// `bytesread`, `entries`, `processtime`, `chunks` and `columns`, all optional. A key that is
// absent (or a bad value, see above) stays absent in the report, so aggregation applies the
// original's fall-backs. `source` names the input in messages. InvalidArgument when the text
// is not JSON, nests too deep (io/untrusted_json.h) or is not an object.
absl::StatusOr<CoffeaReportRead> ParseCoffeaReport(absl::string_view json,
                                                   absl::string_view source);

// Parses chunk records in the original's format (docs/reference.md §1.3): a JSON list of objects,
// or an output object holding that list under "__roastcoffea_metrics__". Keys: t_start/t_end (epoch
// seconds), duration (s), mem_before_mb/mem_after_mb (MiB), bytes_read, num_events, dataset,
// file, uuid, entry_start, entry_stop, accessed_branches, accessed_bytes,
// accessed_uncompressed_bytes, branches_read_percent, bytes_read_percent, timing/memory/bytes
// section dicts, file_metadata, error. Unknown keys are ignored; a record with an `error` key is
// FAILED with that text. Records are parsed one at a time by a strict reader (ingest/json_tree.h)
// that accepts what io/untrusted_json.h accepts: memory is the records, never a tree of the
// whole file. A record that is not a valid JSON object is skipped with a warning. A list cut
// short (the input ends inside it: the command killed while writing) keeps the complete
// records before the cut, with one warning naming the source, the byte offset and the count
// kept. A UTF-8 byte order mark at the start is skipped with a warning.
// InvalidArgument when the file is not a list (or such an object) or nests too deep.
absl::StatusOr<ChunkRecordsRead> ParseChunkRecords(absl::string_view json, absl::string_view source,
                                                   const ChunkRecordsOptions& options = {});
// ParseChunkRecords into a ChunkTable, no v1::ChunkRecord on the way: the same records,
// warnings and errors.
absl::StatusOr<ChunkTableRead> ParseChunkRecordsAsTable(absl::string_view json,
                                                        absl::string_view source,
                                                        const ChunkRecordsOptions& options = {});

// Reads `path` (io/bounded_read.h, at most kMaxCoffeaJsonBytes) and parses it with the functions
// above. NotFound when the file does not exist; other read errors name the path and reason.
// Chunk records in a list are parsed as the file is read (in pieces of 1 MiB, more for a larger
// record; ChunkRecordsOptions::piece_bytes): the file is never whole in memory. The processor
// output object is read whole.
absl::StatusOr<CoffeaReportRead> ReadCoffeaReport(const std::string& path);
absl::StatusOr<ChunkRecordsRead> ReadChunkRecords(const std::string& path,
                                                  const ChunkRecordsOptions& options = {});
absl::StatusOr<ChunkTableRead> ReadChunkRecordsAsTable(const std::string& path,
                                                       const ChunkRecordsOptions& options = {});

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_COFFEA_JSON_H_
