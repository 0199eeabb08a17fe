#include "ingest/coffea_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ingest/json_tree.h"
#include "io/bounded_read.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr double kMiB = 1024.0 * 1024.0;
// Year 2255: far beyond any real record, well inside int64 nanoseconds (about 9.2e9 s).
constexpr double kMaxEpochSeconds = 9e9;

// Collects a file's warnings, at most kMaxWarningsPerFile of them, then counts the rest.
class Warnings {
 public:
  explicit Warnings(std::vector<std::string>* out) : out_(out) {}
  Warnings(const Warnings&) = delete;
  Warnings& operator=(const Warnings&) = delete;
  ~Warnings() = default;

  void Add(std::string warning) {
    if (out_->size() < static_cast<size_t>(kMaxWarningsPerFile)) {
      out_->push_back(std::move(warning));
    } else {
      ++left_out_;
    }
  }
  // A value left out for `status` (whose message names the source and key).
  void LeftOut(const absl::Status& status) {
    Add(absl::StrCat(status.message(), "; the value is left out"));
  }
  void NonFinite(absl::string_view where, const std::vector<NonFiniteToken>& tokens) {
    for (const NonFiniteToken& token : tokens) {
      Add(absl::StrCat(where, ": '", token.key, "' is ", token.token, "; the value is left out"));
    }
  }
  void Finish(absl::string_view source) {
    if (left_out_ > 0) {
      out_->push_back(absl::StrCat(source, ": ", left_out_, " more problems like these"));
    }
  }

 private:
  std::vector<std::string>* out_;
  int64_t left_out_ = 0;
};

const Value* Find(const Struct& object, const char* key) {
  // A std::string key: protobuf's Map would take a `const char*` as a pointer to hash.
  const auto it = object.fields().find(std::string(key));
  if (it == object.fields().end() || it->second.has_null_value()) return nullptr;
  return &it->second;
}

// Reads a number field; `what` names it in errors.
absl::StatusOr<double> Number(const Value& value, absl::string_view what) {
  if (value.kind_case() != Value::kNumberValue || !std::isfinite(value.number_value())) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a finite number"));
  }
  return value.number_value();
}

// Whether llround(number) is defined: 2^63 itself (the double nearest INT64_MAX) is not.
bool InInt64(double number) {
  return number >= -9223372036854775808.0 && number < 9223372036854775808.0;
}

absl::StatusOr<int64_t> Integer(const Value& value, absl::string_view what) {
  absl::StatusOr<double> number = Number(value, what);
  if (!number.ok()) return number.status();
  if (!InInt64(*number)) return absl::InvalidArgumentError(absl::StrCat(what, " is out of range"));
  return static_cast<int64_t>(std::llround(*number));
}

absl::StatusOr<std::string> String(const Value& value, absl::string_view what) {
  if (value.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a string"));
  }
  return value.string_value();
}

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

// One parsed record (a JsonTree) read into a ChunkRecord. Messages are built only for a
// problem: a million good records cost no string formatting.
class RecordReader {
 public:
  RecordReader(const JsonTree& tree, absl::string_view source, size_t index, Warnings* warnings)
      : tree_(tree), source_(source), index_(index), warnings_(*warnings) {}

  // std::nullopt (with a warning) when the record is not an object.
  std::optional<v1::ChunkRecord> Read() {
    const JsonNode& root = tree_.root();
    if (root.kind != JsonNode::Kind::kObject) {
      warnings_.Add(absl::StrCat(Where(), " is not an object; the record is left out"));
      return std::nullopt;
    }
    // The members read, by key (a key appears once: JsonTree refuses repeated keys); null is
    // absent.
    for (uint32_t child = root.first_child; child != JsonNode::kNone;
         child = tree_.node(child).next_sibling) {
      const JsonNode& member = tree_.node(child);
      const absl::string_view key = tree_.key(member);
      for (int k = 0; k < kRecordKeyCount; ++k) {
        if (kRecordKeys[k].size() == key.size() && kRecordKeys[k] == key) {
          if (member.kind != JsonNode::Kind::kNull) fields_[k] = &member;
          break;
        }
      }
    }
    v1::ChunkRecord chunk;
    chunk.set_status(v1::CHUNK_STATUS_OK);
    // The engine's task id: a TaskVine / Work Queue id (an integer) or a Dask key (a string).
    if (const JsonNode* field = fields_[kTaskId]; field != nullptr) {
      if (field->kind == JsonNode::Kind::kString) {
        chunk.set_task_id(std::string(tree_.text(*field)));
      } else if (field->kind != JsonNode::Kind::kNumber || !InInt64(field->number)) {
        warnings_.Add(absl::StrCat(
            Where(), ": 'task_id' (an integer or a string) ",
            field->kind != JsonNode::Kind::kNumber ? "must be a finite number" : "is out of range",
            "; the value is left out"));
      } else {
        chunk.set_task_id(absl::StrCat(static_cast<int64_t>(std::llround(field->number))));
      }
    }
    std::string value;
    if (Text(kDataset, &value)) chunk.set_dataset(std::move(value));
    if (Text(kFile, &value)) chunk.set_file(std::move(value));
    if (Text(kUuid, &value)) chunk.set_uuid(std::move(value));
    double number;
    int64_t count;
    if (Count(kEntryStart, 1, &count)) chunk.set_entry_start(count);
    if (Count(kEntryStop, 1, &count)) chunk.set_entry_stop(count);
    if (Count(kNumEvents, 1, &count)) chunk.set_events(count);
    if (EpochSeconds(kTStart, &number)) chunk.set_start_unix_ns(SecondsToNs(number));
    if (EpochSeconds(kTEnd, &number)) chunk.set_end_unix_ns(SecondsToNs(number));
    if (Number(kDuration, &number)) chunk.set_duration_seconds(number);
    if (Count(kMemBefore, kMiB, &count)) chunk.set_memory_before_bytes(count);
    if (Count(kMemAfter, kMiB, &count)) chunk.set_memory_after_bytes(count);
    if (Count(kBytesRead, 1, &count)) chunk.set_compressed_bytes_read(count);
    if (Count(kAccessedBytes, 1, &count)) chunk.set_accessed_bytes(count);
    if (Count(kAccessedUncompressedBytes, 1, &count)) {
      chunk.set_accessed_uncompressed_bytes(count);
    }
    if (Number(kBranchesReadPercent, &number)) chunk.set_branches_read_percent(number);
    if (Number(kBytesReadPercent, &number)) chunk.set_bytes_read_percent(number);
    AddSections(kTiming, v1::SectionRecord::KIND_TIME, &chunk);
    AddSections(kMemory, v1::SectionRecord::KIND_MEMORY, &chunk);
    AddSections(kBytes, v1::SectionRecord::KIND_BYTES, &chunk);
    AddOverflowSections(&chunk);
    // The original has no duration when it has start and end only (and vice versa).
    if (fields_[kDuration] == nullptr && chunk.end_unix_ns() >= chunk.start_unix_ns()) {
      chunk.set_duration_seconds((chunk.end_unix_ns() - chunk.start_unix_ns()) * 1e-9);
    }
    if (const JsonNode* branches = fields_[kAccessedBranches]; branches != nullptr) {
      if (branches->kind != JsonNode::Kind::kList) {
        warnings_.Add(
            absl::StrCat(Where(), ": 'accessed_branches' must be a list; the value is left out"));
      } else {
        for (uint32_t child = branches->first_child; child != JsonNode::kNone;
             child = tree_.node(child).next_sibling) {
          const JsonNode& branch = tree_.node(child);
          if (branch.kind != JsonNode::Kind::kString) {
            warnings_.Add(
                absl::StrCat(Where(), ": a branch name must be a string; the value is left out"));
            continue;
          }
          chunk.add_accessed_branches(std::string(tree_.text(branch)));
        }
      }
    }
    if (const JsonNode* metadata = fields_[kFileMetadata];
        metadata != nullptr && metadata->kind == JsonNode::Kind::kObject) {
      v1::FileMetadata* file = chunk.mutable_file_metadata();
      for (uint32_t child = metadata->first_child; child != JsonNode::kNone;
           child = tree_.node(child).next_sibling) {
        const JsonNode& v = tree_.node(child);
        const absl::string_view key = tree_.key(v);
        const bool is_number = v.kind == JsonNode::Kind::kNumber;
        if (key == "filename" && v.kind == JsonNode::Kind::kString) {
          file->set_file(std::string(tree_.text(v)));
        } else if (key == "compression_ratio" && is_number) {
          file->set_compression_ratio(v.number);
        } else if (key == "total_branches" && is_number && InInt64(v.number)) {
          file->set_total_branches(std::llround(v.number));
        } else if (key == "total_tree_bytes" && is_number && InInt64(v.number)) {
          file->set_total_tree_bytes(std::llround(v.number));
        }
      }
    }
    if (const JsonNode* error = fields_[kError]; error != nullptr) {
      chunk.set_status(v1::CHUNK_STATUS_FAILED);
      chunk.set_error_text(error->kind == JsonNode::Kind::kString
                               ? std::string(tree_.text(*error))
                               : "error (not described by the record)");
    }
    return chunk;
  }

 private:
  std::string Where() const { return absl::StrCat(source_, ": record ", index_); }

  // An integer field (a count or bytes, after `scale`): a number llround can hold, else a
  // warning naming it; 1e308 events must not become INT64_MIN.
  bool Count(RecordKey key, double scale, int64_t* out) {
    double number;
    if (!Number(key, &number)) return false;
    if (!InInt64(number * scale)) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key], "' is out of range (",
                                 absl::SixDigits(number), "); the value is left out"));
      return false;
    }
    *out = std::llround(number * scale);
    return true;
  }

  // Whole and fractional seconds apart: s * 1e9 in one double loses the last digits at epoch
  // scale. Callers keep |s| within kMaxEpochSeconds, so the product cannot overflow.
  static int64_t SecondsToNs(double s) {
    const double whole = std::floor(s);
    return static_cast<int64_t>(whole) * 1000000000 + std::llround((s - whole) * 1e9);
  }

  // Each field: absent is fine (false), a bad value is left out with a warning naming it.
  bool Number(RecordKey key, double* out) {
    const JsonNode* field = fields_[key];
    if (field == nullptr) return false;
    if (field->kind != JsonNode::Kind::kNumber) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key],
                                 "' must be a finite number; the value is left out"));
      return false;
    }
    *out = field->number;
    return true;
  }

  bool Text(RecordKey key, std::string* out) {
    const JsonNode* field = fields_[key];
    if (field == nullptr) return false;
    if (field->kind != JsonNode::Kind::kString) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key],
                                 "' must be a string; the value is left out"));
      return false;
    }
    out->assign(tree_.text(*field).data(), tree_.text(*field).size());
    return true;
  }

  // An epoch time: a finite number of seconds that nanoseconds since 1970 in int64 can hold.
  bool EpochSeconds(RecordKey key, double* out) {
    if (!Number(key, out)) return false;
    if (std::abs(*out) > kMaxEpochSeconds) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key], "' = ", *out,
                                 " is not a time in seconds since 1970; the value is left out"));
      return false;
    }
    return true;
  }

  // One section per entry of a {name: number} dict of the record; a bad entry is left out.
  void AddSections(RecordKey key, v1::SectionRecord::Kind kind, v1::ChunkRecord* chunk) {
    const JsonNode* dict = fields_[key];
    if (dict == nullptr) return;
    if (dict->kind != JsonNode::Kind::kObject) {
      warnings_.Add(absl::StrCat(Where(), ": '", kRecordKeys[key],
                                 "' must be an object; the value is left out"));
      return;
    }
    for (uint32_t child = dict->first_child; child != JsonNode::kNone;
         child = tree_.node(child).next_sibling) {
      const JsonNode& value = tree_.node(child);
      if (value.kind == JsonNode::Kind::kNull) continue;  // NaN, reported with its key already
      const absl::string_view name = tree_.key(value);
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
        overflow.sum += kind == v1::SectionRecord::KIND_MEMORY ? std::llround(value.number * kMiB)
                        : kind == v1::SectionRecord::KIND_BYTES
                            ? std::llround(value.number)
                            : static_cast<long double>(value.number);
        continue;
      }
      v1::SectionRecord* section = chunk->add_sections();
      section->set_name(std::string(name));
      section->set_kind(kind);
      section->set_entries(1);
      switch (kind) {
        case v1::SectionRecord::KIND_MEMORY:
          section->set_memory_delta_bytes(std::llround(value.number * kMiB));
          break;
        case v1::SectionRecord::KIND_BYTES:
          section->set_bytes_read(std::llround(value.number));
          break;
        default:
          section->set_duration_seconds(value.number);
      }
    }
  }

  // The sections beyond kMaxSectionsPerChunkRecord: one "(overflow)" section per kind, and one
  // warning naming the record.
  void AddOverflowSections(v1::ChunkRecord* chunk) {
    int64_t merged = 0;
    for (const auto& [kind, overflow] : overflow_) {
      merged += overflow.entries;
      v1::SectionRecord* section = chunk->add_sections();
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

  const JsonTree& tree_;
  const absl::string_view source_;
  const size_t index_;
  Warnings& warnings_;
  const JsonNode* fields_[kRecordKeyCount] = {};
  std::map<v1::SectionRecord::Kind, Overflow> overflow_;  // by kind, in kind order
};

// The elements of a top-level JSON array, one at a time, from text in memory or from a file
// read as it goes (then memory is one piece of the file, or one record if it is larger). Only
// strings and brackets are followed to find an element (as io/untrusted_json.h's
// SplitJsonArray); its depth is checked on the way, and a structural error is reported after
// the rest of the input is checked for depth (as SplitJsonArray, which checks depth first).
class ArrayElements {
 public:
  // Appends at most `max_bytes` more input to `out`: how many (0 at the end).
  using Refill = std::function<absl::StatusOr<size_t>(size_t max_bytes, std::string* out)>;

  ArrayElements(absl::string_view source, absl::string_view text)
      : source_(source), data_(text), eof_(true) {}
  ArrayElements(absl::string_view source, Refill refill, size_t piece_bytes,
                const std::function<bool()>* cancelled)
      : source_(source),
        refill_(std::move(refill)),
        piece_bytes_(std::max<size_t>(1, piece_bytes)),
        cancelled_(cancelled) {}

  // Consumes the '['; false when the input does not start with one (after whitespace).
  absl::StatusOr<bool> Open() {
    if (!Peek()) {
      if (!read_status_.ok()) return read_status_;
      return false;
    }
    if (data_[pos_] != '[') return false;
    ++pos_;
    return true;
  }

  // The text of the next element (valid until the next call); std::nullopt after the last.
  // Cancelled when `cancelled` said so while reading.
  absl::StatusOr<std::optional<absl::string_view>> Next() {
    if (done_) return std::nullopt;
    bool have = Peek();
    if (!read_status_.ok()) return read_status_;
    if (after_element_) {
      if (have && data_[pos_] == ']') return Close();
      if (!have || data_[pos_] != ',') return StructureError("expected ',' or ']'", 1);
      ++pos_;
      // "[1,]": as SplitJsonArray, the ']' is where a value was expected.
      have = Peek();
      if (!read_status_.ok()) return read_status_;
    } else if (have && data_[pos_] == ']') {
      return Close();  // "[]"
    }
    if (!have) return StructureError("expected a value", 1);
    absl::StatusOr<size_t> end = SkimValue();
    if (!end.ok()) return end.status();
    const absl::string_view element = data_.substr(pos_, *end - pos_);
    pos_ = *end;
    after_element_ = true;
    return element;
  }

  // Bytes consumed so far.
  int64_t offset() const { return base_ + static_cast<int64_t>(pos_); }

 private:
  absl::Status Broken(absl::string_view what, int64_t at) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": not valid JSON: ", what, " at byte ", at));
  }
  absl::Status TooDeep(int64_t at) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": nested too deep: more than ", kMaxJsonDepth,
                     " levels of arrays and objects (at byte ", at, ")"));
  }

  // Keeps data_[pos_..] and appends more input; false at its end, or on an error or a
  // cancellation (then in read_status_).
  bool More() {
    if (eof_) return false;
    if (cancelled_ != nullptr && *cancelled_ && (*cancelled_)()) {
      read_status_ = absl::CancelledError("cancelled");
      eof_ = true;
      return false;
    }
    buffer_.erase(0, pos_);
    base_ += static_cast<int64_t>(pos_);
    pos_ = 0;
    // At least as much as is kept: a record larger than a piece is rescanned O(log) times.
    absl::StatusOr<size_t> count = refill_(std::max(piece_bytes_, buffer_.size()), &buffer_);
    data_ = buffer_;
    if (!count.ok()) {
      read_status_ = count.status();
      eof_ = true;
      return false;
    }
    if (*count == 0) eof_ = true;
    return *count > 0;
  }

  // Skips whitespace; false at the end of the input.
  bool Peek() {
    while (true) {
      while (pos_ < data_.size()) {
        const char c = data_[pos_];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return true;
        ++pos_;
      }
      if (!More()) return false;
    }
  }

  // The end of the value at data_[pos_]: a string, a bracketed block, or a scalar token.
  absl::StatusOr<size_t> SkimValue() {
    while (true) {
      const char first = data_[pos_];
      int64_t unterminated_at = -1;  // of the string the input ends in
      if (first == '"') {
        const size_t end = SkipString(pos_);
        if (end != absl::string_view::npos) return end;
        unterminated_at = offset();
      } else if (first == '[' || first == '{') {
        int depth = 0;
        for (size_t j = pos_; j < data_.size(); ++j) {
          const char c = data_[j];
          if (c == '"') {
            const size_t end = SkipString(j);
            if (end == absl::string_view::npos) {
              unterminated_at = base_ + static_cast<int64_t>(j);
              break;
            }
            j = end - 1;
          } else if (c == '[' || c == '{') {
            // The array itself is the first level.
            if (++depth + 1 > kMaxJsonDepth) return TooDeep(base_ + static_cast<int64_t>(j));
          } else if (c == ']' || c == '}') {
            if (--depth == 0) return j + 1;
          }
        }
      } else {
        size_t j = pos_;
        while (j < data_.size()) {
          const char c = data_[j];
          if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}') {
            break;
          }
          ++j;
        }
        if (j < data_.size() || eof_) {
          if (j == pos_) return StructureError("expected a value", 1);
          return j;
        }
      }
      const int64_t start = offset();
      if (More()) continue;  // rescans the element with more input
      if (!read_status_.ok()) return read_status_;
      // A scalar token ends with the input (eof_ is set now).
      if (first != '"' && first != '[' && first != '{') continue;
      if (unterminated_at >= 0) return Broken("unterminated string", unterminated_at);
      return Broken("unclosed bracket", start);
    }
  }

  // Index just past the string at data_[i] == '"'; npos when the data ends first.
  size_t SkipString(size_t i) const {
    for (++i; i < data_.size(); ++i) {
      const char c = data_[i];
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        return i + 1;
      }
    }
    return absl::string_view::npos;
  }

  // After the closing ']': only whitespace may follow.
  absl::StatusOr<std::optional<absl::string_view>> Close() {
    ++pos_;
    done_ = true;
    const bool more = Peek();
    if (!read_status_.ok()) return read_status_;
    if (more) return StructureError("unexpected text after the array", 0);
    return std::nullopt;
  }

  // `what` at pos_, unless the input from there on nests too deep (that error first, as
  // SplitJsonArray checks depth before structure); `depth` is the nesting at pos_.
  absl::Status StructureError(absl::string_view what, int depth) {
    const int64_t at = offset();
    do {
      for (; pos_ < data_.size(); ++pos_) {
        const char c = data_[pos_];
        if (c == '"') {
          const size_t end = SkipString(pos_);
          if (end == absl::string_view::npos) break;  // More() keeps it and reads on
          pos_ = end - 1;
        } else if (c == '[' || c == '{') {
          if (++depth > kMaxJsonDepth) return TooDeep(offset());
        } else if (c == ']' || c == '}') {
          depth = std::max(0, depth - 1);
        }
      }
    } while (More());
    if (!read_status_.ok()) return read_status_;
    return Broken(what, at);
  }

  const absl::string_view source_;
  const Refill refill_;
  const size_t piece_bytes_ = 0;
  const std::function<bool()>* const cancelled_ = nullptr;
  std::string buffer_;
  absl::string_view data_;
  size_t pos_ = 0;
  int64_t base_ = 0;  // the input's offset of data_[0]
  bool eof_ = false;
  bool after_element_ = false;
  bool done_ = false;
  absl::Status read_status_;
};

}  // namespace

absl::StatusOr<CoffeaReportRead> ParseCoffeaReport(absl::string_view json,
                                                   absl::string_view source) {
  CoffeaReportRead read;
  Warnings warnings(&read.warnings);
  std::vector<NonFiniteToken> non_finite;
  absl::StatusOr<Value> value = ParseUntrustedJson(json, source, &non_finite);
  if (!value.ok()) return value.status();
  if (value->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": a Coffea report is a JSON object"));
  }
  warnings.NonFinite(source, non_finite);
  const Struct& report = value->struct_value();
  v1::WorkflowReport& result = read.report;
  const auto integer = [&](const char* key, auto setter) {
    const Value* v = Find(report, key);
    if (v == nullptr) return;
    absl::StatusOr<int64_t> n = Integer(*v, absl::StrCat(source, ": '", key, "'"));
    if (!n.ok()) return warnings.LeftOut(n.status());
    setter(*n);
  };
  integer("bytesread", [&](int64_t n) { result.set_compressed_bytes_read(n); });
  integer("entries", [&](int64_t n) { result.set_events(n); });
  integer("chunks", [&](int64_t n) { result.set_chunks(n); });
  if (const Value* v = Find(report, "processtime")) {
    absl::StatusOr<double> n = Number(*v, absl::StrCat(source, ": 'processtime'"));
    if (n.ok()) {
      result.set_process_time_seconds(*n);
    } else {
      warnings.LeftOut(n.status());
    }
  }
  if (const Value* v = Find(report, "columns")) {
    if (v->kind_case() != Value::kListValue) {
      warnings.LeftOut(
          absl::InvalidArgumentError(absl::StrCat(source, ": 'columns' must be a list")));
    } else {
      for (const Value& column : v->list_value().values()) {
        absl::StatusOr<std::string> name = String(column, absl::StrCat(source, ": a column"));
        if (!name.ok()) {
          warnings.LeftOut(name.status());
          continue;
        }
        result.add_columns(*name);
      }
    }
  }
  warnings.Finish(source);
  return read;
}

namespace {

std::string StoppedReading(absl::string_view source, size_t records) {
  return absl::StrCat(source, ": reading stopped by an interruption after ", records,
                      " records; the rest are left out");
}

// The records of `elements` (opened), read one at a time.
absl::StatusOr<ChunkRecordsRead> ReadRecords(ArrayElements& elements, int64_t input_bytes,
                                             absl::string_view source,
                                             const ChunkRecordsOptions& options) {
  ChunkRecordsRead read;
  Warnings warnings(&read.warnings);
  JsonTree tree;
  std::vector<NonFiniteToken> non_finite;
  std::string replaced;
  size_t index = 0;
  size_t left_out = 0;
  // The vector sized from the first records' length, so that it is not grown (twice its size
  // at the copy) for a long file.
  constexpr size_t kSizingSample = 256;
  int64_t sample_start = 0;
  for (;; ++index) {
    if (index % kRecordsPerCancellationCheck == 0 && index > 0 && options.cancelled &&
        options.cancelled()) {
      read.cancelled = true;
      break;
    }
    if (index == 0) sample_start = elements.offset();
    absl::StatusOr<std::optional<absl::string_view>> element = elements.Next();
    if (absl::IsCancelled(element.status())) {
      read.cancelled = true;
      break;
    }
    if (!element.ok()) return element.status();
    if (!element->has_value()) break;
    if (index == kSizingSample && input_bytes > 0) {
      const int64_t sample_bytes = std::max<int64_t>(1, elements.offset() - sample_start);
      const int64_t estimate = input_bytes / sample_bytes * static_cast<int64_t>(kSizingSample);
      read.records.reserve(static_cast<size_t>(std::min<int64_t>(
          kMaxChunkRecords, std::max<int64_t>(kSizingSample, estimate + estimate / 16 + 16))));
    }
    if (index >= static_cast<size_t>(kMaxChunkRecords)) {
      ++left_out;  // counted, not parsed
      continue;
    }
    non_finite.clear();
    // Python's NaN and Infinity made null (and reported), as ParseUntrustedJson does; only a
    // record that has an 'N' or 'I' at all is copied for it.
    absl::string_view text = **element;
    if (std::memchr(text.data(), 'N', text.size()) != nullptr ||
        std::memchr(text.data(), 'I', text.size()) != nullptr) {
      replaced = ReplaceNonFiniteTokens(text, &non_finite);
      text = replaced;
    }
    const absl::Status parsed = tree.Parse(text);
    if (!parsed.ok()) {
      warnings.Add(absl::StrCat(source, ": record ", index, ": not valid JSON: ",
                                EchoedText(parsed.message()), "; the record is left out"));
      continue;
    }
    if (!non_finite.empty()) {
      warnings.NonFinite(absl::StrCat(source, ": record ", index), non_finite);
    }
    std::optional<v1::ChunkRecord> record = RecordReader(tree, source, index, &warnings).Read();
    if (record.has_value()) read.records.push_back(*std::move(record));
  }
  if (read.cancelled) {
    read.warnings.push_back(StoppedReading(source, index));
  }
  if (left_out > 0) {
    read.warnings.push_back(absl::StrCat(source, ": ", left_out, " records after the first ",
                                         kMaxChunkRecords, " are left out"));
  }
  warnings.Finish(source);
  return read;
}

absl::Status NotAList(absl::string_view source) {
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": chunk records are a JSON list (or an object with \"__roastcoffea_metrics__\")"));
}

}  // namespace

absl::StatusOr<ChunkRecordsRead> ParseChunkRecords(absl::string_view json, absl::string_view source,
                                                   const ChunkRecordsOptions& options) {
  // The list itself, or the output object's "__roastcoffea_metrics__" member.
  absl::string_view list = json;
  absl::StatusOr<std::optional<absl::string_view>> inner =
      FindJsonMember(json, "__roastcoffea_metrics__", source);
  if (!inner.ok()) return inner.status();
  if (inner->has_value()) list = **inner;
  ArrayElements elements(source, list);
  absl::StatusOr<bool> opened = elements.Open();
  if (!opened.ok()) return opened.status();
  if (!*opened) return NotAList(source);
  return ReadRecords(elements, static_cast<int64_t>(list.size()), source, options);
}

absl::StatusOr<CoffeaReportRead> ReadCoffeaReport(const std::string& path) {
  absl::StatusOr<std::string> json = ReadBoundedFile(path, kMaxCoffeaJsonBytes, "a Coffea report");
  if (!json.ok()) return json.status();
  return ParseCoffeaReport(*json, path);
}

absl::StatusOr<ChunkRecordsRead> ReadChunkRecords(const std::string& path,
                                                  const ChunkRecordsOptions& options) {
  BoundedReadOptions limits;
  limits.max_bytes = kMaxCoffeaJsonBytes;
  limits.what = "chunk records";
  absl::StatusOr<BoundedFileReader> reader = BoundedFileReader::Open(path, limits);
  if (!reader.ok()) return reader.status();
  const int64_t size = reader->size();
  ArrayElements elements(
      path,
      [&reader](size_t max_bytes, std::string* out) { return reader->ReadSome(max_bytes, out); },
      options.piece_bytes, &options.cancelled);
  absl::StatusOr<bool> opened = elements.Open();
  if (absl::IsCancelled(opened.status())) {
    ChunkRecordsRead read;
    read.cancelled = true;
    read.warnings.push_back(StoppedReading(path, 0));
    return read;
  }
  if (!opened.ok()) return opened.status();
  if (*opened) return ReadRecords(elements, size, path, options);
  // Not a list: the processor output object (read whole: it is the command's output, not a
  // stream of records), or an error.
  absl::StatusOr<std::string> json = ReadBoundedFile(path, limits);
  if (!json.ok()) return json.status();
  return ParseChunkRecords(*json, path, options);
}

}  // namespace roastcoffea
