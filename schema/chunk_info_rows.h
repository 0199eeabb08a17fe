// The original tool's chunk_info (ChunkMetrics.chunk_info_columns, or the chunk_info messages of
// measurements saved before the columns) read as one list of rows, whichever form it is in.
// Every reader of chunk_info goes through this: the form on disk is this file's business only.
//
// Thread-safety: a ChunkInfoRows only reads the metrics it was made from (which must outlive it
// and not change). Cost: O(1) to make from columns; from messages, O(n) to intern their files.
#ifndef ROASTCOFFEA_SCHEMA_CHUNK_INFO_ROWS_H_
#define ROASTCOFFEA_SCHEMA_CHUNK_INFO_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// One chunk_info entry, with ChunkInfo's meaning; `file` views the metrics' string.
struct ChunkInfoRow {
  absl::string_view file;
  uint32_t file_index;  // the file's place in ChunkInfoRows::file_name
  int64_t entry_start;
  int64_t entry_stop;
  uint32_t attempt;
  int64_t start_unix_ns;
  int64_t end_unix_ns;
  int64_t bytes_read;
};

class ChunkInfoRows {
 public:
  // Rows of the messages (old measurements) first, then those of the columns: a measurement
  // holds one form or the other.
  explicit ChunkInfoRows(const v1::ChunkMetrics& chunks);

  size_t size() const { return num_messages_ + num_column_rows_; }
  bool empty() const { return size() == 0; }
  ChunkInfoRow operator[](size_t row) const;

  // The rows' distinct files, in the order of their first row.
  size_t num_files() const { return files_.size(); }
  absl::string_view file_name(uint32_t file) const { return files_[file]; }

 private:
  const v1::ChunkMetrics& chunks_;
  size_t num_messages_;
  size_t num_column_rows_;  // rows every column has (see RepairChunkInfoColumns)
  std::vector<absl::string_view> files_;
  std::vector<uint32_t> message_file_;  // per message: its place in files_
  std::vector<uint32_t> column_file_;   // per place in the columns' files: its place in files_
};

// Calls `visit` with every row, in order.
void ForEachChunkInfo(const v1::ChunkMetrics& chunks,
                      absl::FunctionRef<void(const ChunkInfoRow&)> visit);

// The number of rows, without reading them. O(1).
size_t ChunkInfoSize(const v1::ChunkMetrics& chunks);

// Drops both forms.
void ClearChunkInfo(v1::ChunkMetrics* chunks);

// The columns of `entries` (the old form), rows in the same order. O(n).
v1::ChunkInfoColumns ChunkInfoColumnsOf(
    const google::protobuf::RepeatedPtrField<v1::ChunkInfo>& entries);

// Makes bad columns readable (columns of different lengths, a file index past the files): keeps
// the rows every column has, up to the first with a bad file index. Returns what was wrong
// (naming the columns and counts), or nothing when the columns were sound.
std::optional<std::string> RepairChunkInfoColumns(v1::ChunkInfoColumns* columns);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SCHEMA_CHUNK_INFO_ROWS_H_
