#include "schema/chunk_info_rows.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

// The rows every column has.
size_t CommonLength(const v1::ChunkInfoColumns& c) {
  return static_cast<size_t>(
      std::min({c.file_index_size(), c.entry_start_size(), c.entry_stop_size(), c.attempt_size(),
                c.start_unix_ns_size(), c.end_unix_ns_size(), c.bytes_read_size()}));
}

// The rows before the first whose file index is past the files (at most `length`).
size_t SoundLength(const v1::ChunkInfoColumns& c, size_t length) {
  const uint32_t num_files = static_cast<uint32_t>(c.files_size());
  const uint32_t* index = c.file_index().data();
  for (size_t row = 0; row < length; ++row) {
    if (index[row] >= num_files) return row;
  }
  return length;
}

}  // namespace

ChunkInfoRows::ChunkInfoRows(const v1::ChunkMetrics& chunks)
    : chunks_(chunks), num_messages_(static_cast<size_t>(chunks.chunk_info_size())) {
  const v1::ChunkInfoColumns& c = chunks.chunk_info_columns();
  num_column_rows_ = SoundLength(c, CommonLength(c));
  if (num_messages_ == 0) {  // the columns' files as they are: no lookup per row
    files_.assign(c.files().begin(), c.files().end());
    return;
  }
  absl::flat_hash_map<absl::string_view, uint32_t> places;
  const auto place = [&](absl::string_view file) {
    const auto [it, added] = places.try_emplace(file, static_cast<uint32_t>(files_.size()));
    if (added) files_.push_back(file);
    return it->second;
  };
  message_file_.reserve(num_messages_);
  for (const v1::ChunkInfo& info : chunks.chunk_info()) message_file_.push_back(place(info.file()));
  for (const std::string& file : c.files()) column_file_.push_back(place(file));
}

ChunkInfoRow ChunkInfoRows::operator[](size_t row) const {
  if (row < num_messages_) {
    const v1::ChunkInfo& info = chunks_.chunk_info(static_cast<int>(row));
    return {info.file(),    message_file_[row],   info.entry_start(), info.entry_stop(),
            info.attempt(), info.start_unix_ns(), info.end_unix_ns(), info.bytes_read()};
  }
  const int i = static_cast<int>(row - num_messages_);
  const v1::ChunkInfoColumns& c = chunks_.chunk_info_columns();
  const uint32_t file = c.file_index(i);
  const uint32_t place = column_file_.empty() ? file : column_file_[file];
  return {files_[place],    place,          c.entry_start(i),
          c.entry_stop(i),  c.attempt(i),   c.start_unix_ns(i),
          c.end_unix_ns(i), c.bytes_read(i)};
}

void ForEachChunkInfo(const v1::ChunkMetrics& chunks,
                      absl::FunctionRef<void(const ChunkInfoRow&)> visit) {
  const ChunkInfoRows rows(chunks);
  for (size_t row = 0; row < rows.size(); ++row) visit(rows[row]);
}

size_t ChunkInfoSize(const v1::ChunkMetrics& chunks) {
  const v1::ChunkInfoColumns& c = chunks.chunk_info_columns();
  return static_cast<size_t>(chunks.chunk_info_size()) + SoundLength(c, CommonLength(c));
}

void ClearChunkInfo(v1::ChunkMetrics* chunks) {
  chunks->clear_chunk_info();
  chunks->clear_chunk_info_columns();
}

v1::ChunkInfoColumns ChunkInfoColumnsOf(
    const google::protobuf::RepeatedPtrField<v1::ChunkInfo>& entries) {
  v1::ChunkInfoColumns c;
  absl::flat_hash_map<absl::string_view, uint32_t> places;
  for (const v1::ChunkInfo& info : entries) {
    const auto [it, added] = places.try_emplace(info.file(), static_cast<uint32_t>(c.files_size()));
    if (added) c.add_files(info.file());
    c.add_file_index(it->second);
    c.add_entry_start(info.entry_start());
    c.add_entry_stop(info.entry_stop());
    c.add_attempt(info.attempt());
    c.add_start_unix_ns(info.start_unix_ns());
    c.add_end_unix_ns(info.end_unix_ns());
    c.add_bytes_read(info.bytes_read());
  }
  return c;
}

std::optional<std::string> RepairChunkInfoColumns(v1::ChunkInfoColumns* c) {
  const size_t common = CommonLength(*c);
  const size_t sound = SoundLength(*c, common);
  const size_t longest = static_cast<size_t>(std::max(
      {c->file_index_size(), c->entry_start_size(), c->entry_stop_size(), c->attempt_size(),
       c->start_unix_ns_size(), c->end_unix_ns_size(), c->bytes_read_size()}));
  if (sound == longest) return std::nullopt;
  std::string problem = absl::StrCat(
      "chunk_info_columns: columns of different lengths (file_index ", c->file_index_size(),
      ", entry_start ", c->entry_start_size(), ", entry_stop ", c->entry_stop_size(), ", attempt ",
      c->attempt_size(), ", start_unix_ns ", c->start_unix_ns_size(), ", end_unix_ns ",
      c->end_unix_ns_size(), ", bytes_read ", c->bytes_read_size(), ")");
  if (common == longest) {
    problem = absl::StrCat("chunk_info_columns: row ", sound, " names file ",
                           c->file_index(static_cast<int>(sound)), " of ", c->files_size());
  }
  absl::StrAppend(&problem, "; kept the first ", sound, " of ", longest, " rows");
  const int keep = static_cast<int>(sound);
  c->mutable_file_index()->Truncate(std::min(keep, c->file_index_size()));
  c->mutable_entry_start()->Truncate(std::min(keep, c->entry_start_size()));
  c->mutable_entry_stop()->Truncate(std::min(keep, c->entry_stop_size()));
  c->mutable_attempt()->Truncate(std::min(keep, c->attempt_size()));
  c->mutable_start_unix_ns()->Truncate(std::min(keep, c->start_unix_ns_size()));
  c->mutable_end_unix_ns()->Truncate(std::min(keep, c->end_unix_ns_size()));
  c->mutable_bytes_read()->Truncate(std::min(keep, c->bytes_read_size()));
  return problem;
}

}  // namespace roastcoffea
