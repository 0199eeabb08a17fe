#include "ingest/chunk_record_reader.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "io/untrusted_json.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace ingest_internal {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Year 2255: far beyond any real record, well inside int64 nanoseconds (about 9.2e9 s).
constexpr double kMaxEpochSeconds = 9e9;

constexpr absl::string_view kRecordKeys[kRecordKeyCount] = {"task_id",
                                                            "dataset",
                                                            "file",
                                                            "uuid",
                                                            "entry_start",
                                                            "entry_stop",
                                                            "num_events",
                                                            "t_start",
                                                            "t_end",
                                                            "duration",
                                                            "mem_before_mb",
                                                            "mem_after_mb",
                                                            "bytes_read",
                                                            "accessed_bytes",
                                                            "accessed_uncompressed_bytes",
                                                            "branches_read_percent",
                                                            "bytes_read_percent",
                                                            "timing",
                                                            "memory",
                                                            "bytes",
                                                            "accessed_branches",
                                                            "file_metadata",
                                                            "error"};

// std::llround (half away from zero) of `x`, which InInt64 holds, inline (llround is a call
// per field). x - trunc(x) is exact in a double, so the comparison with 0.5 is too.
int64_t RoundToInt64(double x) {
  const int64_t whole = static_cast<int64_t>(x);
  const double fraction = x - static_cast<double>(whole);
  if (fraction >= 0.5) return whole + 1;
  if (fraction <= -0.5) return whole - 1;
  return whole;
}

// A ChunkRow (schema/chunk_table.h) written through the setters of v1::ChunkRecord that
// RecordReader uses: one set of reading rules for both. Strings are viewed where the reader
// finds them (the record's text, literals); those made on the fly are copied.
class RowSink {
 public:
  class SectionSink {
   public:
    void set_name(const char* name, size_t size) { row_->name = absl::string_view(name, size); }
    void set_name(const char* name) { row_->name = name; }
    void set_kind(v1::SectionRecord::Kind kind) { row_->kind = kind; }
    void set_entries(uint32_t entries) { row_->entries = entries; }
    void set_duration_seconds(double seconds) { row_->duration_seconds = seconds; }
    void set_memory_delta_bytes(int64_t bytes) { row_->memory_delta_bytes = bytes; }
    void set_bytes_read(int64_t bytes) { row_->bytes_read = bytes; }

   private:
    friend class RowSink;
    SectionRow* row_ = nullptr;
  };

  // `spare` (may be null): a file metadata message to reuse for the rest's.
  RowSink(ChunkRow* row, std::unique_ptr<v1::FileMetadata>* spare) : row_(*row), spare_(spare) {}

  void set_status(v1::ChunkStatus status) { row_.status = status; }
  void set_task_id(const char* id, size_t size) {
    row_.owned_task_id.assign(id, size);  // may be a number formatted on the stack
    row_.strings[chunk_field::kTaskId] = row_.owned_task_id;
  }
  void set_dataset(const char* text, size_t size) { View(chunk_field::kDataset, text, size); }
  void set_file(const char* text, size_t size) { View(chunk_field::kFile, text, size); }
  void set_uuid(const char* text, size_t size) { View(chunk_field::kUuid, text, size); }
  void set_error_text(std::string text) {
    row_.owned_error_text = std::move(text);
    row_.strings[chunk_field::kErrorText] = row_.owned_error_text;
  }
  absl::string_view file() const { return row_.strings[chunk_field::kFile]; }

  void set_entry_start(int64_t n) { row_.ints[chunk_field::kEntryStart] = n; }
  void set_entry_stop(int64_t n) { row_.ints[chunk_field::kEntryStop] = n; }
  void set_events(int64_t n) { row_.ints[chunk_field::kEvents] = n; }
  void set_start_unix_ns(int64_t n) { row_.ints[chunk_field::kStartUnixNs] = n; }
  void set_end_unix_ns(int64_t n) { row_.ints[chunk_field::kEndUnixNs] = n; }
  void set_memory_before_bytes(int64_t n) { row_.ints[chunk_field::kMemoryBeforeBytes] = n; }
  void set_memory_after_bytes(int64_t n) { row_.ints[chunk_field::kMemoryAfterBytes] = n; }
  void set_compressed_bytes_read(int64_t n) { row_.ints[chunk_field::kCompressedBytesRead] = n; }
  void set_accessed_bytes(int64_t n) { row_.ints[chunk_field::kAccessedBytes] = n; }
  void set_accessed_uncompressed_bytes(int64_t n) {
    row_.ints[chunk_field::kAccessedUncompressedBytes] = n;
  }
  int64_t entry_start() const { return row_.ints[chunk_field::kEntryStart]; }
  int64_t entry_stop() const { return row_.ints[chunk_field::kEntryStop]; }
  int64_t start_unix_ns() const { return row_.ints[chunk_field::kStartUnixNs]; }
  int64_t end_unix_ns() const { return row_.ints[chunk_field::kEndUnixNs]; }

  void set_duration_seconds(double x) { row_.doubles[chunk_field::kDurationSeconds] = x; }
  void set_branches_read_percent(double x) { row_.doubles[chunk_field::kBranchesReadPercent] = x; }
  void set_bytes_read_percent(double x) { row_.doubles[chunk_field::kBytesReadPercent] = x; }

  int sections_size() const { return static_cast<int>(row_.sections.size()); }
  SectionSink* add_sections() {
    section_.row_ = &row_.sections.emplace_back();
    return &section_;
  }
  // The rare fields go to the row's rest.
  void add_accessed_branches(const char* branch, size_t size) {
    row_.has_rest = true;
    row_.rest.add_accessed_branches(branch, size);
  }
  v1::FileMetadata* mutable_file_metadata() {
    row_.has_rest = true;
    if (!row_.rest.has_file_metadata() && spare_ != nullptr && *spare_ != nullptr) {
      (*spare_)->Clear();  // keeps its strings' capacity
      row_.rest.set_allocated_file_metadata(spare_->release());
    }
    return row_.rest.mutable_file_metadata();
  }

 private:
  void View(chunk_field::String field, const char* text, size_t size) {
    row_.strings[field] = absl::string_view(text, size);
  }

  ChunkRow& row_;
  std::unique_ptr<v1::FileMetadata>* const spare_;
  SectionSink section_;
};

// One record's members read into a ChunkRecord (or a RowSink). Messages are built only for a
// problem: a million good records cost no string formatting.
template <typename Chunk>
class RecordReader {
 public:
  RecordReader(const RecordMembers& members, absl::string_view source, size_t index,
               Warnings* warnings)
      : members_(members), source_(source), index_(index), warnings_(*warnings) {}

  // The branches and file metadata are not read (the caller has them already).
  void SkipRest() { read_rest_ = false; }

  void Read(Chunk* chunk) {
    chunk->set_status(v1::CHUNK_STATUS_OK);
    ReadTaskId(chunk);
    ReadScalars(chunk);
    AddSections(kTiming, v1::SectionRecord::KIND_TIME, chunk);
    AddSections(kMemory, v1::SectionRecord::KIND_MEMORY, chunk);
    AddSections(kBytes, v1::SectionRecord::KIND_BYTES, chunk);
    AddOverflowSections(chunk);
    // The original has no duration when it has start and end only (and vice versa).
    if (Field(kDuration) == nullptr && chunk->end_unix_ns() >= chunk->start_unix_ns()) {
      chunk->set_duration_seconds((chunk->end_unix_ns() - chunk->start_unix_ns()) * 1e-9);
    }
    if (read_rest_) {
      ReadBranches(chunk);
      ReadFileMetadata(chunk);
    }
    if (const JsonScalar* error = Field(kError); error != nullptr) {
      chunk->set_status(v1::CHUNK_STATUS_FAILED);
      chunk->set_error_text(error->kind == JsonNode::Kind::kString
                                ? std::string(error->text)
                                : "error (not described by the record)");
    }
  }

 private:
  // The engine's task id: a TaskVine / Work Queue id (an integer) or a Dask key (a string).
  void ReadTaskId(Chunk* chunk) {
    const JsonScalar* field = Field(kTaskId);
    if (field == nullptr) return;
    if (field->kind == JsonNode::Kind::kString) {
      const absl::string_view id = field->text;
      chunk->set_task_id(id.data(), id.size());
    } else if (field->kind != JsonNode::Kind::kNumber || !InInt64(field->number)) {
      warnings_.Add(absl::StrCat(
          Where(), ": 'task_id' (an integer or a string) ",
          field->kind != JsonNode::Kind::kNumber ? "must be a finite number" : "is out of range",
          "; the value is left out"));
    } else if (field->number != std::floor(field->number)) {
      // Rounded, 12.5 would join the record to task 13, which it may not be.
      warnings_.Add(absl::StrCat(Where(), ": 'task_id' ", absl::SixDigits(field->number),
                                 " is not an integer (a task id is an integer or a string); the "
                                 "value is left out"));
    } else {
      // Formatted on the stack (AlphaNum): no temporary string.
      const absl::AlphaNum id(static_cast<int64_t>(RoundToInt64(field->number)));
      chunk->set_task_id(id.data(), id.size());
    }
  }

  void ReadScalars(Chunk* chunk) {
    absl::string_view text;
    if (Text(kDataset, &text)) chunk->set_dataset(text.data(), text.size());
    if (Text(kFile, &text)) chunk->set_file(text.data(), text.size());
    if (Text(kUuid, &text)) chunk->set_uuid(text.data(), text.size());
    double number;
    int64_t count;
    int64_t entry_start = 0;
    int64_t entry_stop = 0;
    const bool has_start = Count(kEntryStart, 1, &entry_start);
    const bool has_stop = Count(kEntryStop, 1, &entry_stop);
    if (has_start && has_stop && entry_stop < entry_start) {
      // No chunk ends before it starts: which of the two is wrong cannot be told.
      warnings_.Add(absl::StrCat(Where(), ": 'entry_stop' ", entry_stop,
                                 " is before 'entry_start' ", entry_start,
                                 "; both values are left out"));
    } else {
      if (has_start) chunk->set_entry_start(entry_start);
      if (has_stop) chunk->set_entry_stop(entry_stop);
    }
    if (Count(kNumEvents, 1, &count)) chunk->set_events(count);
    if (EpochSeconds(kTStart, &number)) chunk->set_start_unix_ns(SecondsToNs(number));
    if (EpochSeconds(kTEnd, &number)) chunk->set_end_unix_ns(SecondsToNs(number));
    if (Number(kDuration, &number)) chunk->set_duration_seconds(number);
    if (Count(kMemBefore, kMiB, &count)) chunk->set_memory_before_bytes(count);
    if (Count(kMemAfter, kMiB, &count)) chunk->set_memory_after_bytes(count);
    if (Count(kBytesRead, 1, &count)) chunk->set_compressed_bytes_read(count);
    if (Count(kAccessedBytes, 1, &count)) chunk->set_accessed_bytes(count);
    if (Count(kAccessedUncompressedBytes, 1, &count)) {
      chunk->set_accessed_uncompressed_bytes(count);
    }
    if (Number(kBranchesReadPercent, &number)) chunk->set_branches_read_percent(number);
    if (Number(kBytesReadPercent, &number)) chunk->set_bytes_read_percent(number);
  }

  void ReadBranches(Chunk* chunk) {
    const JsonScalar* branches = Field(kAccessedBranches);
    if (branches == nullptr) return;
    if (branches->kind != JsonNode::Kind::kList) {
      warnings_.Add(
          absl::StrCat(Where(), ": 'accessed_branches' must be a list; the value is left out"));
      return;
    }
    for (const JsonScalar& branch : members_.branches) {
      if (branch.kind != JsonNode::Kind::kString) {
        warnings_.Add(
            absl::StrCat(Where(), ": a branch name must be a string; the value is left out"));
        continue;
      }
      chunk->add_accessed_branches(branch.text.data(), branch.text.size());
    }
  }

  void ReadFileMetadata(Chunk* chunk) {
    const JsonScalar* metadata = Field(kFileMetadata);
    if (metadata == nullptr || metadata->kind != JsonNode::Kind::kObject) return;
    v1::FileMetadata* file = chunk->mutable_file_metadata();
    for (const auto& [key, v] : members_.file_metadata) {
      const bool is_number = v.kind == JsonNode::Kind::kNumber;
      if (key == "filename" && v.kind == JsonNode::Kind::kString) {
        file->mutable_file()->assign(v.text.data(), v.text.size());  // reuses its capacity
      } else if (key == "compression_ratio" && is_number) {
        file->set_compression_ratio(v.number);
      } else if (key == "total_branches" && is_number && InInt64(v.number)) {
        file->set_total_branches(RoundToInt64(v.number));
      } else if (key == "total_tree_bytes" && is_number && InInt64(v.number)) {
        file->set_total_tree_bytes(RoundToInt64(v.number));
      }
    }
  }

  // The field `key`, or nullptr when absent (null is absent).
  const JsonScalar* Field(RecordKey key) const {
    const JsonScalar& field = members_.fields[key];
    return field.kind == JsonNode::Kind::kNull ? nullptr : &field;
  }

  std::string Where() const { return absl::StrCat(source_, ": record ", index_); }

  // A value left out with a warning naming the record and key, `why` after the key. Out of
  // line, as the message's making: a good record, the common case, has none.
  ABSL_ATTRIBUTE_NOINLINE void LeftOut(RecordKey key, absl::string_view why) {
    warnings_.Add(
        absl::StrCat(Where(), ": '", kRecordKeys[key], "' ", why, "; the value is left out"));
  }
  ABSL_ATTRIBUTE_NOINLINE void LeftOutOfRange(RecordKey key, double number) {
    LeftOut(key, absl::StrCat("is out of range (", absl::SixDigits(number), ")"));
  }

  // An integer field (a count or bytes, after `scale`): a number int64 can hold, else a
  // warning naming it; 1e308 events must not become INT64_MIN.
  bool Count(RecordKey key, double scale, int64_t* out) {
    double number;
    if (!Number(key, &number)) return false;
    if (!InInt64(number * scale)) {
      LeftOutOfRange(key, number);
      return false;
    }
    *out = RoundToInt64(number * scale);
    return true;
  }

  // Whole and fractional seconds apart: s * 1e9 in one double loses the last digits at epoch
  // scale. Callers keep |s| within kMaxEpochSeconds, so the product cannot overflow.
  static int64_t SecondsToNs(double s) {
    const double whole = std::floor(s);
    return static_cast<int64_t>(whole) * 1000000000 + RoundToInt64((s - whole) * 1e9);
  }

  // Each field: absent is fine (false), a bad value is left out with a warning naming it.
  bool Number(RecordKey key, double* out) {
    const JsonScalar* field = Field(key);
    if (field == nullptr) return false;
    if (field->kind != JsonNode::Kind::kNumber) {
      LeftOut(key, "must be a finite number");
      return false;
    }
    *out = field->number;
    return true;
  }

  bool Text(RecordKey key, absl::string_view* out) {
    const JsonScalar* field = Field(key);
    if (field == nullptr) return false;
    if (field->kind != JsonNode::Kind::kString) {
      LeftOut(key, "must be a string");
      return false;
    }
    *out = field->text;
    return true;
  }

  // An epoch time: a finite number of seconds that nanoseconds since 1970 in int64 can hold.
  bool EpochSeconds(RecordKey key, double* out) {
    if (!Number(key, out)) return false;
    // Before 1970 is no time a chunk ran at (a relative time, or garbage).
    if (*out < 0 || *out > kMaxEpochSeconds) {
      LeftOut(key, absl::StrCat("= ", *out, " is not a time in seconds since 1970"));
      return false;
    }
    return true;
  }

  // One section per entry of a {name: number} dict of the record; a bad entry is left out.
  void AddSections(RecordKey key, v1::SectionRecord::Kind kind, Chunk* chunk) {
    const JsonScalar* dict = Field(key);
    if (dict == nullptr) return;
    if (dict->kind != JsonNode::Kind::kObject) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key],
                                 "' must be an object; the value is left out"));
      return;
    }
    for (const auto& [name, value] : members_.sections[key - kTiming]) {
      if (value.kind == JsonNode::Kind::kNull) continue;  // NaN, reported with its key already
      if (value.kind != JsonNode::Kind::kNumber) {
        warnings_.Add(absl::StrCat(Where(), ": ", kRecordKeys[key], "['", EchoedText(name),
                                   "'] must be a finite number; the value is left out"));
        continue;
      }
      if (kind != v1::SectionRecord::KIND_TIME &&
          !InInt64(value.number * (kind == v1::SectionRecord::KIND_MEMORY ? kMiB : 1))) {
        warnings_.Add(absl::StrCat(Where(), ": ", kRecordKeys[key], "['", EchoedText(name),
                                   "'] is out of range (", absl::SixDigits(value.number),
                                   "); the value is left out"));
        continue;
      }
      if (chunk->sections_size() >= kMaxSectionsPerChunkRecord) {
        // Beyond the budget: counted and summed into the kind's "(overflow)" section.
        Overflow& overflow = overflow_[kind];
        ++overflow.entries;
        overflow.sum += kind == v1::SectionRecord::KIND_MEMORY ? RoundToInt64(value.number * kMiB)
                        : kind == v1::SectionRecord::KIND_BYTES
                            ? RoundToInt64(value.number)
                            : static_cast<long double>(value.number);
        continue;
      }
      auto* section = chunk->add_sections();
      section->set_name(name.data(), name.size());
      section->set_kind(kind);
      section->set_entries(1);
      switch (kind) {
        case v1::SectionRecord::KIND_MEMORY:
          section->set_memory_delta_bytes(RoundToInt64(value.number * kMiB));
          break;
        case v1::SectionRecord::KIND_BYTES:
          section->set_bytes_read(RoundToInt64(value.number));
          break;
        default:
          section->set_duration_seconds(value.number);
      }
    }
  }

  // The sections beyond kMaxSectionsPerChunkRecord: one "(overflow)" section per kind, and one
  // warning naming the record.
  void AddOverflowSections(Chunk* chunk) {
    int64_t merged = 0;
    for (const auto& [kind, overflow] : overflow_) {
      merged += overflow.entries;
      auto* section = chunk->add_sections();
      section->set_name(kOverflowSectionRecordName);
      section->set_kind(kind);
      section->set_entries(overflow.entries);
      switch (kind) {
        case v1::SectionRecord::KIND_MEMORY:
          section->set_memory_delta_bytes(SaturatedInt64(overflow.sum));
          break;
        case v1::SectionRecord::KIND_BYTES:
          section->set_bytes_read(SaturatedInt64(overflow.sum));
          break;
        default:
          section->set_duration_seconds(static_cast<double>(overflow.sum));
      }
    }
    if (merged == 0) return;
    warnings_.Add(absl::StrCat(Where(), " (file '", EchoedText(chunk->file()), "', entries ",
                               chunk->entry_start(), "-", chunk->entry_stop(), "): ", merged,
                               " sections beyond the ", kMaxSectionsPerChunkRecord,
                               " a record keeps were merged into '", kOverflowSectionRecordName,
                               "' (one per kind: their count and the sum of their values)"));
  }

  static int64_t SaturatedInt64(long double value) {
    if (value >= static_cast<long double>(INT64_MAX)) return INT64_MAX;
    if (value <= static_cast<long double>(INT64_MIN)) return INT64_MIN;
    return static_cast<int64_t>(value);
  }

  struct Overflow {
    int64_t entries = 0;
    long double sum = 0;  // exact for the integer kinds, 64-bit mantissa for durations
  };

  const RecordMembers& members_;
  const absl::string_view source_;
  const size_t index_;
  Warnings& warnings_;
  std::map<v1::SectionRecord::Kind, Overflow> overflow_;  // by kind, in kind order
  bool read_rest_ = true;
};

// A parsed record's members; false (with a warning) when it is not an object.
bool MembersFromTree(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, RecordMembers* members) {
  const JsonNode& root = tree.root();
  if (root.kind != JsonNode::Kind::kObject) {
    warnings->Add(
        absl::StrCat(source, ": record ", index, " is not an object; the record is left out"));
    return false;
  }
  members->Clear();
  const auto scalar = [&tree](const JsonNode& node) {
    JsonScalar value;
    value.kind = node.kind;
    value.number = node.number;
    if (node.kind == JsonNode::Kind::kString) value.text = tree.text(node);
    return value;
  };
  const auto entries = [&](const JsonNode& object, std::vector<NamedScalar>* out) {
    for (uint32_t child = object.first_child; child != JsonNode::kNone;
         child = tree.node(child).next_sibling) {
      const JsonNode& entry = tree.node(child);
      out->push_back({tree.key(entry), scalar(entry)});
    }
  };
  // A key appears once: JsonTree refuses repeated keys.
  for (uint32_t child = root.first_child; child != JsonNode::kNone;
       child = tree.node(child).next_sibling) {
    const JsonNode& member = tree.node(child);
    const RecordKey key = FindRecordKey(tree.key(member));
    if (key == kRecordKeyCount) continue;
    members->fields[key] = scalar(member);
    if (member.kind == JsonNode::Kind::kObject) {
      if (key == kTiming || key == kMemory || key == kBytes) {
        entries(member, &members->sections[key - kTiming]);
      } else if (key == kFileMetadata) {
        entries(member, &members->file_metadata);
      }
    } else if (member.kind == JsonNode::Kind::kList && key == kAccessedBranches) {
      for (uint32_t item = member.first_child; item != JsonNode::kNone;
           item = tree.node(item).next_sibling) {
        members->branches.push_back(scalar(tree.node(item)));
      }
    }
  }
  return true;
}

}  // namespace

namespace {

// `name` (of the length of `literal`) is `literal`: a comparison of constant length, which the
// compiler makes a few loads.
template <size_t N>
bool Is(absl::string_view name, const char (&literal)[N]) {
  return std::memcmp(name.data(), literal, N - 1) == 0;
}

}  // namespace

RecordKey FindRecordKey(absl::string_view name) {
  // By length first: most keys are ruled out without reading them (ingest reads millions).
  switch (name.size()) {
    case 4:
      if (Is(name, "file")) return kFile;
      if (Is(name, "uuid")) return kUuid;
      break;
    case 5:
      if (Is(name, "t_end")) return kTEnd;
      if (Is(name, "bytes")) return kBytes;
      if (Is(name, "error")) return kError;
      break;
    case 6:
      if (Is(name, "timing")) return kTiming;
      if (Is(name, "memory")) return kMemory;
      break;
    case 7:
      if (Is(name, "t_start")) return kTStart;
      if (Is(name, "dataset")) return kDataset;
      if (Is(name, "task_id")) return kTaskId;
      break;
    case 8:
      if (Is(name, "duration")) return kDuration;
      break;
    case 10:
      if (Is(name, "num_events")) return kNumEvents;
      if (Is(name, "entry_stop")) return kEntryStop;
      if (Is(name, "bytes_read")) return kBytesRead;
      break;
    case 11:
      if (Is(name, "entry_start")) return kEntryStart;
      break;
    case 12:
      if (Is(name, "mem_after_mb")) return kMemAfter;
      break;
    case 13:
      if (Is(name, "mem_before_mb")) return kMemBefore;
      if (Is(name, "file_metadata")) return kFileMetadata;
      break;
    case 14:
      if (Is(name, "accessed_bytes")) return kAccessedBytes;
      break;
    case 17:
      if (Is(name, "accessed_branches")) return kAccessedBranches;
      break;
    case 18:
      if (Is(name, "bytes_read_percent")) return kBytesReadPercent;
      break;
    case 21:
      if (Is(name, "branches_read_percent")) return kBranchesReadPercent;
      break;
    case 27:
      if (Is(name, "accessed_uncompressed_bytes")) return kAccessedUncompressedBytes;
      break;
    default:
      break;
  }
  return kRecordKeyCount;
}

absl::string_view RecordKeyName(RecordKey key) { return kRecordKeys[key]; }

void ReadChunkRecord(const RecordMembers& members, absl::string_view source, size_t index,
                     Warnings* warnings, v1::ChunkRecord* chunk) {
  RecordReader<v1::ChunkRecord>(members, source, index, warnings).Read(chunk);
}

void ReadChunkRecord(const RecordMembers& members, absl::string_view source, size_t index,
                     Warnings* warnings, ChunkRow* row) {
  row->Clear();  // it may hold what a ChunkRowReader does not clear (see there)
  ChunkRowReader().Read(members, source, index, warnings, row);
}

void ChunkRowReader::Read(const RecordMembers& members, absl::string_view source, size_t index,
                          Warnings* warnings, ChunkRow* row) {
  // The rest holds what RowSink sets in it only: its file metadata, kept for the next record
  // (clearing the rest would delete it), and its branches. Cleared here, the whole message is
  // not cleared field by field.
  if (row->has_rest) {
    if (row->rest.has_file_metadata()) {
      spare_file_metadata_.reset(row->rest.release_file_metadata());
    }
    row->rest.clear_accessed_branches();
    row->has_rest = false;
  }
  row->Clear();
  RowSink sink(row, &spare_file_metadata_);
  if (members.branches_id == 0 && members.file_metadata_id == 0) {
    RecordReader<RowSink>(members, source, index, warnings).Read(&sink);  // nothing remembered
    return;
  }
  ReadWithRemembered(members, source, index, warnings, row);
}

void ChunkRowReader::ReadWithRemembered(const RecordMembers& members, absl::string_view source,
                                        size_t index, Warnings* warnings, ChunkRow* row) {
  RowSink sink(row, &spare_file_metadata_);
  RecordReader<RowSink> reader(members, source, index, warnings);
  bool hit = false;
  CachedRest* const cached = CacheEntry(members, &hit);
  if (hit) reader.SkipRest();
  reader.Read(&sink);
  if (cached == nullptr) return;
  if (!hit) {
    cached->branches_id = members.branches_id;
    cached->file_metadata_id = members.file_metadata_id;
    cached->bytes.clear();
    if (row->has_rest) row->rest.SerializeToString(&cached->bytes);
  }
  row->has_rest = !cached->bytes.empty();
  row->rest_bytes = cached->bytes;
}

ChunkRowReader::CachedRest* ChunkRowReader::CacheEntry(const RecordMembers& members, bool* hit) {
  constexpr size_t kEntries = 64;
  const uint64_t branches = members.branches_id;
  const uint64_t metadata = members.file_metadata_id;
  // Only a rest whose values both have ids (or are absent) is known by them.
  if ((branches == 0 && metadata == 0) ||
      (branches == 0 && members.fields[kAccessedBranches].kind != JsonNode::Kind::kNull) ||
      (metadata == 0 && members.fields[kFileMetadata].kind != JsonNode::Kind::kNull)) {
    return nullptr;
  }
  if (rest_cache_.empty()) rest_cache_.resize(kEntries);
  CachedRest& entry = rest_cache_[(branches * 0x9E3779B97F4A7C15u + metadata) % kEntries];
  *hit = entry.branches_id == branches && entry.file_metadata_id == metadata;
  if (*hit) return &entry;
  // Cached only when reading it gives no warning (a branch that is not a string), as the
  // warning names each record.
  for (const JsonScalar& branch : members.branches) {
    if (branch.kind != JsonNode::Kind::kString) return nullptr;
  }
  return &entry;
}

bool ChunkRowReader::Read(const JsonTree& tree, absl::string_view source, size_t index,
                          Warnings* warnings, RecordMembers* members, ChunkRow* row) {
  if (!MembersFromTree(tree, source, index, warnings, members)) return false;
  Read(*members, source, index, warnings, row);
  return true;
}

bool ReadChunkRecord(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, RecordMembers* members, v1::ChunkRecord* chunk) {
  if (!MembersFromTree(tree, source, index, warnings, members)) return false;
  ReadChunkRecord(*members, source, index, warnings, chunk);
  return true;
}

bool ReadChunkRecord(const JsonTree& tree, absl::string_view source, size_t index,
                     Warnings* warnings, RecordMembers* members, ChunkRow* row) {
  if (!MembersFromTree(tree, source, index, warnings, members)) return false;
  ReadChunkRecord(*members, source, index, warnings, row);
  return true;
}

}  // namespace ingest_internal
}  // namespace roastcoffea
