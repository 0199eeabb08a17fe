#include "aggregation/chunk_validation.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// A record read as a message, in the accessor names the rules use.
struct RecordFields {
  const v1::ChunkRecord& chunk;
  double duration_seconds() const { return chunk.duration_seconds(); }
  int64_t start_unix_ns() const { return chunk.start_unix_ns(); }
  int64_t end_unix_ns() const { return chunk.end_unix_ns(); }
  int64_t events() const { return chunk.events(); }
  int64_t entry_start() const { return chunk.entry_start(); }
  int64_t entry_stop() const { return chunk.entry_stop(); }
  absl::string_view uuid() const { return chunk.uuid(); }
  absl::string_view file() const { return chunk.file(); }
  int sections_size() const { return chunk.sections_size(); }
  SectionRow section(int s) const {
    const v1::SectionRecord& section = chunk.sections(s);
    SectionRow row;
    row.name = section.name();
    row.kind = static_cast<int32_t>(section.kind());
    row.duration_seconds = section.duration_seconds();
    row.cpu_seconds = section.cpu_seconds();
    return row;
  }
};

// A record read from a table's columns (its sections all in the section columns).
struct TableFields {
  const ChunkTable& table;
  size_t i;
  double duration_seconds() const { return table.duration_seconds(i); }
  int64_t start_unix_ns() const { return table.start_unix_ns(i); }
  int64_t end_unix_ns() const { return table.end_unix_ns(i); }
  int64_t events() const { return table.Int(chunk_field::kEvents, i); }
  int64_t entry_start() const { return table.Int(chunk_field::kEntryStart, i); }
  int64_t entry_stop() const { return table.Int(chunk_field::kEntryStop, i); }
  absl::string_view uuid() const { return table.String(chunk_field::kUuid, i); }
  absl::string_view file() const { return table.String(chunk_field::kFile, i); }
  int sections_size() const {
    return static_cast<int>(table.SectionsEnd(i) - table.SectionsBegin(i));
  }
  SectionRow section(int s) const { return table.Section(table.SectionsBegin(i) + s); }
};

template <typename Chunk>
std::string DescribeChunk(const Chunk& chunk, size_t i) {
  return absl::StrCat("chunks[", i, "] (uuid \"", chunk.uuid(), "\", file \"", chunk.file(),
                      "\", entries ", chunk.entry_start(), "-", chunk.entry_stop(), ")");
}

// The rules, once for both forms of a record.
template <typename Chunk>
absl::Status Validate(const Chunk& chunk, size_t i) {
  const double duration = chunk.duration_seconds();
  if (!std::isfinite(duration) || duration < 0) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeChunk(chunk, i),
                                                   ": duration_seconds is ", duration,
                                                   "; expected a finite value >= 0"));
  }
  if (chunk.start_unix_ns() != 0 && chunk.end_unix_ns() != 0 &&
      chunk.end_unix_ns() < chunk.start_unix_ns()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeChunk(chunk, i), ": end_unix_ns ",
                                                   chunk.end_unix_ns(), " is before start_unix_ns ",
                                                   chunk.start_unix_ns()));
  }
  if (chunk.events() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(DescribeChunk(chunk, i), ": events is ", chunk.events(), "; expected >= 0"));
  }
  for (int s = 0; s < chunk.sections_size(); ++s) {
    const SectionRow section = chunk.section(s);
    if (!v1::SectionRecord::Kind_IsValid(section.kind)) {
      return absl::InvalidArgumentError(absl::StrCat(
          DescribeChunk(chunk, i), ": sections[", s, "] (\"", section.name, "\") has unknown kind ",
          section.kind, "; expected KIND_TIME, KIND_MEMORY, KIND_BYTES or KIND_UNSPECIFIED"));
    }
    if (!std::isfinite(section.duration_seconds) || section.duration_seconds < 0 ||
        !std::isfinite(section.cpu_seconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeChunk(chunk, i), ": sections[", s, "] (\"", section.name,
                       "\") duration_seconds is ", section.duration_seconds, ", cpu_seconds is ",
                       section.cpu_seconds, "; expected finite values, duration >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateChunkRecord(const v1::ChunkRecord& chunk, size_t i) {
  return Validate(RecordFields{chunk}, i);
}

absl::Status ValidateTableRecord(const ChunkTable& table, size_t i) {
  // Only sections can be both in a record's rest and under these rules.
  if (table.SectionsInRest(i)) return ValidateChunkRecord(table.Record(i), i);
  return Validate(TableFields{table, i}, i);
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
