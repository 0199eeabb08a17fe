// The chunk records of a run as columns (issue #25): the compact in-memory form of a
// std::vector<v1::ChunkRecord>, lossless. One v1::ChunkRecord costs 384 B plus a heap string per
// string field plus its sections; here a record costs only the fields it sets:
// - one column per numeric field, allocated only once a record sets it to non-zero (a field no
//   record sets costs nothing), with presence bits for the `optional` ones;
// - interned ids for the strings many records share (dataset, file, uuid, worker, section
//   names), one pool for all; the uuid column is adaptive: once kAdaptiveCheckRecords records
//   show mostly distinct uuids (a TaskVine task's "taskvine-task-<id>"), it moves once into a
//   per-record arena, where a unique string costs its characters and an offset, not a pool
//   entry (~100 B);
// - per-record strings (task_id, error_text) in one character arena with end offsets;
// - sections flattened into section columns, each record's end offset into them;
// - the rarely-set fields (accessed_branches, file_metadata, slices, retried_task_ids, unknown
//   fields, sections with fields beyond the columns) kept as a serialized remainder, shared by
//   the records whose remainders are equal while most are (RestColumn).
// Record(i) gives back a message equal to the one appended, and byte-equal once serialized.
//
// Integer columns hold each value in the fewest bytes (1, 2, 4 or 8) that hold all of the
// column's values so far; a remainder whose bytes repeat (a file's branches and metadata) is
// kept once and shared by id.
//
// Measured (schema/chunk_table_test.cc, MemoryPerRecord): a record as the original's
// instrumentation writes it (task id, dataset, file, uuid, times, memory, bytes, two timing
// sections; 1 % failed) costs 121 B here (10^5 records, reserved), against ~980 B as
// v1::ChunkRecord objects (bench/stage_benchmark's ingest line); the same with a uuid unique
// per record (MemoryPerRecordWithUniqueUuids) costs 138 B; a rich record (branches, file
// metadata, four sections: MemoryPerRichRecord) 223 B as read unreserved, 167 B shrunk.
#ifndef ROASTCOFFEA_SCHEMA_CHUNK_TABLE_H_
#define ROASTCOFFEA_SCHEMA_CHUNK_TABLE_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The fields of v1::ChunkRecord the columns hold, by kind: chunk_field::kStartUnixNs.
namespace chunk_field {

// The integer fields of v1::ChunkRecord held in columns; the last four are `optional`.
enum Int {
  kEntryStart,
  kEntryStop,
  kEvents,
  kStartUnixNs,
  kEndUnixNs,
  kMemoryBeforeBytes,
  kMemoryAfterBytes,
  kMemoryPeakBytes,
  kCompressedBytesRead,
  kUncompressedBytesRead,
  kThreadIndex,
  kAccessedBytes,
  kAccessedUncompressedBytes,
  kDroppedSlices,
  kAllocatedBytes,
  kPeakLiveBytes,
  kFileBytes,
  kReadyUnixNs,
  kIntCount
};
inline constexpr int kFirstOptionalInt = kAllocatedBytes;

// The double fields; the last three are `optional`.
enum Double {
  kDurationSeconds,
  kCpuSeconds,
  kBranchesReadPercent,
  kBytesReadPercent,
  kRunQueueWaitSeconds,
  kMachineLoad,
  kMachineCpus,
  kDoubleCount
};
inline constexpr int kFirstOptionalDouble = kRunQueueWaitSeconds;

// The string fields; the first four are interned (shared by many records), the rest per record.
// kUuid is interned only while its values repeat (ChunkTable's adaptive column).
enum String { kDataset, kFile, kUuid, kWorker, kTaskId, kErrorText, kStringCount };
inline constexpr int kFirstPerRecordString = kTaskId;

}  // namespace chunk_field

// One section in column form (v1::SectionRecord without its optional fields).
struct SectionRow {
  absl::string_view name;
  int32_t kind = 0;  // v1::SectionRecord::Kind, unknown values kept
  uint32_t entries = 0;
  double duration_seconds = 0;
  double cpu_seconds = 0;
  int64_t memory_delta_bytes = 0;
  int64_t bytes_read = 0;
};

// One record in column form, viewing its strings: what ChunkTable appends and reads back, and
// what a reader that never builds a v1::ChunkRecord (ingest/chunk_record_reader.h) fills.
// Reused as scratch: Clear() keeps the vectors' capacity.
struct ChunkRow {
  int64_t ints[chunk_field::kIntCount] = {};
  double doubles[chunk_field::kDoubleCount] = {};
  // Presence of the optional fields, one bit each: use SetOptional / HasOptional.
  uint32_t present = 0;
  int32_t status = 0;  // v1::ChunkStatus, unknown values kept
  uint32_t attempt = 0;
  absl::string_view strings[chunk_field::kStringCount];
  std::vector<SectionRow> sections;
  // The fields not above (see the file comment), when has_rest.
  bool has_rest = false;
  v1::ChunkRecord rest;
  // When not empty (and has_rest): the rest already serialized, which Append takes instead of
  // serializing `rest` (a reader that met the same rest before; `rest` may then be empty).
  absl::string_view rest_bytes;
  // Text the row owns for a string it views (e.g. a task id formatted from a number).
  std::string owned_task_id;
  std::string owned_error_text;

  void SetOptional(chunk_field::Int field, int64_t value) {
    ints[field] = value;
    present |= uint32_t{1} << (field - chunk_field::kFirstOptionalInt);
  }
  void SetOptional(chunk_field::Double field, double value) {
    doubles[field] = value;
    present |= uint32_t{1} << OptionalBit(field);
  }
  bool HasOptional(chunk_field::Int field) const {
    return (present >> (field - chunk_field::kFirstOptionalInt)) & 1;
  }
  bool HasOptional(chunk_field::Double field) const { return (present >> OptionalBit(field)) & 1; }
  static int OptionalBit(chunk_field::Double field) {
    return chunk_field::kIntCount - chunk_field::kFirstOptionalInt +
           (field - chunk_field::kFirstOptionalDouble);
  }

  void Clear();
  // The record this row stands for, into `record` (cleared first).
  void ToRecord(v1::ChunkRecord* record) const;
  // The row of `record`, viewing its strings (which must outlive the row's use).
  void FromRecord(const v1::ChunkRecord& record);
};

class ChunkTable {
 public:
  ChunkTable() = default;
  // Moves keep the interned strings where they are (a deque's blocks move whole). A moved-from
  // table is to be assigned to or destroyed.
  ChunkTable(ChunkTable&&) = default;
  ChunkTable& operator=(ChunkTable&&) = default;
  ChunkTable(const ChunkTable&) = delete;
  ChunkTable& operator=(const ChunkTable&) = delete;

  // Room for `records` records without growing the columns they set.
  void Reserve(size_t records);
  // Gives back the room the columns' growth left unused (up to half of each, as they double):
  // for a table kept long or counted by MemoryBytes. Copies every column once; a large column's
  // unused room was never touched, so this lowers MemoryBytes more than resident memory.
  void ShrinkToFit();

  void Append(const v1::ChunkRecord& record);
  void Append(v1::ChunkRecord&& record) { Append(static_cast<const v1::ChunkRecord&>(record)); }
  void Append(const ChunkRow& row);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Record `i` (< size()), materialized.
  v1::ChunkRecord Record(size_t i) const;
  // Record `i` into `record` (cleared first): reuse one message across records.
  void ReadRecord(size_t i, v1::ChunkRecord* record) const;
  // Every record in order, appended to `records` (fresh messages: nothing cleared first).
  void AppendRecordsTo(google::protobuf::RepeatedPtrField<v1::ChunkRecord>* records) const;
  // Record `i` as a row viewing this table's memory (valid until the next Append).
  void ReadRow(size_t i, ChunkRow* row) const;
  // Each record in order, materialized into one reused message.
  void ForEachRecord(absl::FunctionRef<void(const v1::ChunkRecord&)> fn) const;

  // The records `i` for which keep(i), in order, as a new table; this one is unchanged. Rebuilt
  // record by record (ReadRow, Append): for taking out a few records, not for a hot path.
  ChunkTable Filtered(absl::FunctionRef<bool(size_t)> keep) const;

  // Bytes this table holds on the heap (capacities, not sizes).
  size_t MemoryBytes() const;

  // Record `i`'s remainder (HasRest) as the wire bytes of a v1::ChunkRecord holding only the
  // fields outside the columns, "" when it has none (valid until the next Append): a reader of
  // a few of those fields (accessed_branches, file_metadata) parses them without the record.
  absl::string_view RestBytes(size_t i) const { return rest_.Get(i); }

  // Typed column accessors for the hot fields.
  int64_t Int(chunk_field::Int field, size_t i) const { return ints_[field][i]; }
  double Double(chunk_field::Double field, size_t i) const { return doubles_[field][i]; }
  bool HasOptional(chunk_field::Int field, size_t i) const {
    return (present_[i] >> (field - chunk_field::kFirstOptionalInt)) & 1;
  }
  bool HasOptional(chunk_field::Double field, size_t i) const {
    return (present_[i] >> ChunkRow::OptionalBit(field)) & 1;
  }
  absl::string_view String(chunk_field::String field, size_t i) const;
  // The interned id of dataset, file or worker (always interned): equal ids, equal strings. 0 is
  // "". Not for uuid, which may be held per record (UuidsInterned): read it with String().
  uint32_t StringId(chunk_field::String field, size_t i) const {
    assert(field != chunk_field::kUuid || uuids_interned_);
    return ids_[field][i];
  }
  // The string of an id from StringId. Ids stay valid until the next Append (the uuid column's
  // move renumbers the pool once).
  absl::string_view InternedString(uint32_t id) const { return pool_.Get(id); }
  int32_t status(size_t i) const { return status_[i]; }
  uint32_t attempt(size_t i) const { return attempt_[i]; }
  int64_t start_unix_ns(size_t i) const { return Int(chunk_field::kStartUnixNs, i); }
  int64_t end_unix_ns(size_t i) const { return Int(chunk_field::kEndUnixNs, i); }
  double duration_seconds(size_t i) const { return Double(chunk_field::kDurationSeconds, i); }
  // The sections of record `i` held in columns: [SectionsBegin(i), SectionsEnd(i)).
  size_t SectionsBegin(size_t i) const { return i == 0 ? 0 : section_ends_[i - 1]; }
  size_t SectionsEnd(size_t i) const { return section_ends_[i]; }
  // Section `s` of the section columns (its name a view of the pool).
  SectionRow Section(size_t s) const;
  // Whether record `i` has fields outside the columns (its remainder).
  bool HasRest(size_t i) const { return !rest_.Get(i).empty(); }
  // Whether record `i`'s sections are in its remainder (one has fields beyond the section
  // columns): then it has none in the columns. Cost: O(1), no parsing.
  bool SectionsInRest(size_t i) const { return sections_in_rest_[i] != 0; }

  // Record `i`'s protobuf wire bytes, written straight from the columns
  // (schema/chunk_record_wire.cc): exactly Record(i).SerializeAsString(), without building the
  // message (the save of 10^6 records). WriteRecordWireBytes writes at most RecordWireBytesBound(i)
  // bytes at `target` and returns the end of what it wrote.
  size_t RecordWireBytesBound(size_t i) const;
  uint8_t* WriteRecordWireBytes(size_t i, uint8_t* target) const;
  // The same appended to `out` (tests, and callers without a buffer of their own).
  void AppendRecordWireBytes(size_t i, std::string* out) const;
  // Whether `valid` holds for every string of record `i`'s remainder (accessed_branches,
  // retried_task_ids, file_metadata.file, the names of slices and of sections held there), read
  // from its bytes. False also when the remainder holds a field it cannot walk: the caller then
  // checks the materialized record.
  bool RestStringsAll(size_t i, absl::FunctionRef<bool(absl::string_view)> valid) const;

  // Changes to record `i` in place, for a step that updates some fields of many records (the
  // join): no record is rebuilt. Setting an optional field marks it present.
  void SetInt(chunk_field::Int field, size_t i, int64_t value);
  void SetDouble(chunk_field::Double field, size_t i, double value);
  void SetStatus(size_t i, int32_t status) { status_.Set(i, status); }
  void SetAttempt(size_t i, uint32_t attempt) { attempt_.Set(i, attempt); }
  // Dataset, file or worker of record `i` (not uuid: see StringId).
  void SetInternedString(chunk_field::String field, size_t i, absl::string_view text) {
    assert(field != chunk_field::kUuid || uuids_interned_);
    ids_[field].Set(i, pool_.Intern(text));
  }
  // The same with an id of this table's pool (StringId of another record): no hashing.
  void SetStringId(chunk_field::String field, size_t i, uint32_t id) {
    assert(field != chunk_field::kUuid || uuids_interned_);
    ids_[field].Set(i, id);
  }
  // Whether the uuids are still interned: false once the first kAdaptiveCheckRecords records had
  // mostly distinct uuids and the column moved to a per-record arena (for tests and benchmarks).
  bool UuidsInterned() const { return uuids_interned_; }
  // The records after which the uuid column's form is decided, once: enough to tell uuids shared
  // by a file's chunks (instrumentation: ~10 chunks per file) from one per record (TaskVine tasks),
  // few enough that the pool entries dropped at the move cost little.
  static constexpr size_t kAdaptiveCheckRecords = 4096;
  // Whether the records' remainders are still shared by their bytes: false once the first
  // kAdaptiveCheckRecords remainders were mostly distinct and moved to a per-record arena (for
  // tests and benchmarks).
  bool RestsShared() const { return rest_.shared(); }
  // A per-record field (task_id, error_text): the records named in `texts` take its text (the
  // field's column is rewritten once).
  void ReplaceStrings(chunk_field::String field,
                      const absl::flat_hash_map<uint32_t, std::string>& texts);

 private:
  // Record `i` into a message with nothing set.
  void ReadIntoEmpty(size_t i, v1::ChunkRecord* record) const;
  // After kAdaptiveCheckRecords records: moves the uuids to uuids_per_record_ when most are
  // distinct (and rebuilds the pool without them), once.
  void DecideUuidForm();
  // A pool of only the strings the other interned columns and the section names use, those
  // columns' ids mapped into it: what is left when the uuids leave the pool.
  void RebuildPoolWithoutUuids();

  // A column of T that allocates only when a value other than T{} (bitwise) is appended: a
  // field no record sets costs nothing.
  template <typename T, typename Enable = void>
  class Column {
   public:
    void Reserve(size_t n) {
      reserved_ = n;
      if (!values_.empty()) values_.reserve(n);
    }
    void Push(T value) {
      if (values_.empty() && IsZero(value)) {
        ++size_;
        return;
      }
      if (values_.empty()) {
        values_.reserve(std::max(reserved_, size_ + 1));
        values_.resize(size_);
      }
      values_.push_back(value);
      ++size_;
    }
    T operator[](size_t i) const { return i < values_.size() ? values_[i] : T{}; }
    // Value `i` (< the values pushed) becomes `value`.
    void Set(size_t i, T value) {
      if (values_.empty()) {
        if (IsZero(value)) return;
        values_.reserve(std::max(reserved_, size_));
        values_.resize(size_);
      }
      values_[i] = value;
    }
    size_t MemoryBytes() const { return values_.capacity() * sizeof(T); }
    void ShrinkToFit() { values_.shrink_to_fit(); }
    size_t size() const { return size_; }

   private:
    static bool IsZero(const T& value) {
      static const T kZero{};
      return std::memcmp(&value, &kZero, sizeof(T)) == 0;
    }
    std::vector<T> values_;
    size_t size_ = 0;
    size_t reserved_ = 0;
  };

  // An integer column holds each value in the fewest bytes (1, 2, 4 or 8) that hold every value
  // pushed or set so far, widened in place when one needs more: counts, ids, kinds and byte
  // sizes mostly fit in 1-4 of their 8 (a section's kind, entries and name id in one byte each).
  // Allocates only when a value other than 0 is appended, as above.
  template <typename T>
  class Column<T, std::enable_if_t<std::is_integral_v<T>>> {
   public:
    void Reserve(size_t n) {
      reserved_ = n;
      Visit([n](auto& values) { values.reserve(n); });
    }
    void Push(T value) {
      if (value < low_ || value > high_) {  // always while width_ is 0
        if (width_ == 0 && value == 0) {
          ++size_;
          return;
        }
        Widen(value);
      }
      Visit([value](auto& values) {
        values.push_back(static_cast<typename std::decay_t<decltype(values)>::value_type>(value));
      });
      ++size_;
    }
    // Inlined where read: a call per value cost the columns' readers (aggregation, the save)
    // ~3 % of a run's time.
    ABSL_ATTRIBUTE_ALWAYS_INLINE T operator[](size_t i) const {
      switch (width_) {
        case 0:
          return 0;
        case 1:
          return i < bytes1_.size() ? static_cast<T>(bytes1_[i]) : 0;
        case 2:
          return i < bytes2_.size() ? static_cast<T>(bytes2_[i]) : 0;
        case 4:
          return i < bytes4_.size() ? static_cast<T>(bytes4_[i]) : 0;
        default:
          return i < bytes8_.size() ? static_cast<T>(bytes8_[i]) : 0;
      }
    }
    // Value `i` (< the values pushed) becomes `value`.
    void Set(size_t i, T value) {
      if (value < low_ || value > high_) {
        if (width_ == 0 && value == 0) return;
        Widen(value);
      }
      Visit([i, value](auto& values) {
        values[i] = static_cast<typename std::decay_t<decltype(values)>::value_type>(value);
      });
    }
    size_t MemoryBytes() const {
      return bytes1_.capacity() + bytes2_.capacity() * 2 + bytes4_.capacity() * 4 +
             bytes8_.capacity() * 8;
    }
    void ShrinkToFit() {
      Visit([](auto& values) { values.shrink_to_fit(); });
    }
    size_t size() const { return size_; }

   private:
    template <size_t kBytes>
    using Narrow = std::conditional_t<
        kBytes == 1, std::conditional_t<std::is_signed_v<T>, int8_t, uint8_t>,
        std::conditional_t<
            kBytes == 2, std::conditional_t<std::is_signed_v<T>, int16_t, uint16_t>,
            std::conditional_t<kBytes == 4,
                               std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                               std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>>;
    // fn(the values' vector), when there is one (width_ != 0).
    template <typename Fn>
    void Visit(Fn fn) {
      switch (width_) {
        case 0:
          return;
        case 1:
          return fn(bytes1_);
        case 2:
          return fn(bytes2_);
        case 4:
          return fn(bytes4_);
        default:
          return fn(bytes8_);
      }
    }
    // The values so far moved to `wider` (zeros for the records before the first value).
    template <typename N>
    void MoveTo(std::vector<N>* wider) {
      wider->reserve(std::max(reserved_, size_ + 1));
      for (size_t i = 0; i < size_; ++i) wider->push_back(static_cast<N>((*this)[i]));
      Visit([](auto& values) { std::decay_t<decltype(values)>().swap(values); });
    }
    // Rewrites the values in the fewest bytes that hold them and `value`.
    void Widen(T value);

    // The values, width_ bytes each, in the one vector of that width; none while every one is 0.
    std::vector<Narrow<1>> bytes1_;
    std::vector<Narrow<2>> bytes2_;
    std::vector<Narrow<4>> bytes4_;
    std::vector<Narrow<8>> bytes8_;
    size_t width_ = 0;  // 0 until a value other than 0
    T low_ = 1;         // the values width_ bytes hold: none while width_ is 0
    T high_ = 0;
    size_t size_ = 0;
    size_t reserved_ = 0;
  };

  // Strings of one record each, in one arena; none allocated while every one is "".
  class StringColumn {
   public:
    void Reserve(size_t n) { ends_.Reserve(n); }
    void Push(absl::string_view text) {
      chars_.append(text.data(), text.size());
      ends_.Push(chars_.size());
    }
    absl::string_view Get(size_t i) const {
      const uint64_t begin = i == 0 ? 0 : ends_[i - 1];
      return absl::string_view(chars_).substr(begin, ends_[i] - begin);
    }
    size_t MemoryBytes() const { return chars_.capacity() + ends_.MemoryBytes(); }
    void ShrinkToFit() {
      chars_.shrink_to_fit();
      ends_.ShrinkToFit();
    }
    size_t size() const { return ends_.size(); }

   private:
    std::string chars_;
    Column<uint64_t> ends_;
  };

  // Interned strings: id 0 is "".
  class StringPool {
   public:
    StringPool() { strings_.emplace_back(); }
    uint32_t Intern(absl::string_view text);
    // Intern through a one-entry cache: consecutive records mostly share their file, dataset,
    // worker and section names, and a comparison is cheaper than hashing.
    struct Last {
      absl::string_view text;  // a view of the pool
      uint32_t id = 0;
    };
    uint32_t Intern(absl::string_view text, Last* last) {
      if (text.size() == last->text.size() &&
          (text.empty() || std::memcmp(text.data(), last->text.data(), text.size()) == 0)) {
        return last->id;
      }
      last->id = InternCached(text);
      last->text = Get(last->id);
      return last->id;
    }
    // Intern through a small direct-mapped cache indexed by the text's size, first 40 and last
    // 8 bytes: strings that recur out of order (a run's workers, files, uuids, section names) are
    // found without hashing the whole text, also when they differ only before their last 8 bytes
    // (".../dataset_1/file_0.root").
    uint32_t InternCached(absl::string_view text) {
      if (text.empty()) return 0;
      constexpr uint64_t kMix = 0x9E3779B97F4A7C15u;
      uint64_t key = text.size();
      uint64_t word;
      for (size_t i = 0; i + sizeof(word) < text.size() && i < 40; i += sizeof(word)) {
        std::memcpy(&word, text.data() + i, sizeof(word));
        key = (key ^ word) * kMix;
      }
      uint64_t tail = 0;
      const size_t tail_size = std::min<size_t>(text.size(), sizeof(tail));
      std::memcpy(&tail, text.data() + text.size() - tail_size, tail_size);
      const size_t slot = static_cast<size_t>(((key ^ tail) * kMix) >> (64 - kCacheBits));
      const absl::string_view cached = Get(cache_[slot]);
      if (cached.size() == text.size() &&
          std::memcmp(cached.data(), text.data(), text.size()) == 0) {
        return cache_[slot];
      }
      cache_[slot] = Intern(text);
      return cache_[slot];
    }
    absl::string_view Get(uint32_t id) const { return strings_[id]; }
    size_t size() const { return strings_.size(); }
    size_t MemoryBytes() const;

   private:
    static constexpr int kCacheBits = 10;
    std::deque<std::string> strings_;  // a deque: the map's views of them stay valid
    absl::flat_hash_map<absl::string_view, uint32_t> ids_;
    std::array<uint32_t, size_t{1} << kCacheBits> cache_ = {};  // ids; 0 ("") is no entry
  };

  // The records' remainders (a serialized v1::ChunkRecord each, "" for none). Shared while
  // their bytes repeat: rich records carry the same branches and file metadata in every chunk of
  // a file, so one copy per file and an id per record. Once kAdaptiveCheckRecords remainders
  // show mostly distinct bytes, moved once to a per-record arena, where a unique one costs its
  // bytes and an offset, not a pool entry.
  class RestColumn {
   public:
    void Reserve(size_t n) {
      ids_.Reserve(n);
      per_record_.Reserve(n);
    }
    void Push(absl::string_view bytes) {
      if (!shared_) return per_record_.Push(bytes);
      ids_.Push(bytes.empty() ? 0 : InternByAddress(bytes));
      if (!bytes.empty() && ++non_empty_ == kAdaptiveCheckRecords) DecideForm();
    }
    absl::string_view Get(size_t i) const {
      return shared_ ? pool_.Get(ids_[i]) : per_record_.Get(i);
    }
    bool shared() const { return shared_; }
    void ShrinkToFit() {
      ids_.ShrinkToFit();
      per_record_.ShrinkToFit();
    }
    size_t MemoryBytes() const {
      return pool_.MemoryBytes() + ids_.MemoryBytes() + per_record_.MemoryBytes();
    }

   private:
    // Intern through a small cache indexed by the bytes' address: a reader that keeps the rests
    // it met (ChunkRow::rest_bytes) passes a repeated rest at the same place, then compared
    // with the pool's copy, not hashed.
    uint32_t InternByAddress(absl::string_view bytes);  // `bytes` not empty
    void DecideForm();
    static constexpr size_t kAddressSlots = 64;
    std::array<uint32_t, kAddressSlots> by_address_ = {};  // ids; 0 is no entry
    bool shared_ = true;
    size_t non_empty_ = 0;  // remainders pushed while shared
    StringPool pool_;
    Column<uint32_t> ids_;
    StringColumn per_record_;
  };

  // Calls `visit(column)` on every column with one entry per record, and on every column with
  // one entry per section: the one list of them that Reserve and ShrinkToFit share.
  template <typename Visit>
  void ForEachRecordColumn(Visit visit);
  template <typename Visit>
  void ForEachSectionColumn(Visit visit);

  size_t size_ = 0;
  Column<int64_t> ints_[chunk_field::kIntCount];
  Column<double> doubles_[chunk_field::kDoubleCount];
  Column<uint8_t> present_;
  Column<int32_t> status_;
  Column<uint32_t> attempt_;
  StringPool pool_;
  Column<uint32_t> ids_[chunk_field::kFirstPerRecordString];
  StringColumn per_record_[chunk_field::kStringCount - chunk_field::kFirstPerRecordString];
  // The uuids: in ids_[kUuid] while uuids_interned_, else here.
  bool uuids_interned_ = true;
  StringColumn uuids_per_record_;
  Column<uint64_t> section_ends_;
  Column<uint8_t> sections_in_rest_;  // 1 where a record's sections are in its rest
  size_t sections_ = 0;
  Column<uint32_t> section_names_;
  Column<int32_t> section_kinds_;
  Column<uint32_t> section_entries_;
  Column<double> section_durations_;
  Column<double> section_cpu_;
  Column<int64_t> section_memory_;
  Column<int64_t> section_bytes_;
  RestColumn rest_;
  // The last string interned per field, and per section position within a record.
  StringPool::Last last_ids_[chunk_field::kFirstPerRecordString];
  static constexpr size_t kCachedSectionNames = 16;
  StringPool::Last last_section_names_[kCachedSectionNames];
  // Scratch of Append(const v1::ChunkRecord&).
  ChunkRow scratch_;
  std::string serialized_;
};

template <typename T>
void ChunkTable::Column<T, std::enable_if_t<std::is_integral_v<T>>>::Widen(T value) {
  size_t width = std::max<size_t>(width_, 1);
  const auto fits = [value](size_t bytes) {
    switch (bytes) {
      case 1:
        return static_cast<T>(static_cast<Narrow<1>>(value)) == value;
      case 2:
        return static_cast<T>(static_cast<Narrow<2>>(value)) == value;
      case 4:
        return static_cast<T>(static_cast<Narrow<4>>(value)) == value;
      default:
        return true;
    }
  };
  while (width < sizeof(T) && !fits(width)) width *= 2;
  switch (width) {
    case 1:
      MoveTo(&bytes1_);
      break;
    case 2:
      MoveTo(&bytes2_);
      break;
    case 4:
      MoveTo(&bytes4_);
      break;
    default:
      MoveTo(&bytes8_);
  }
  width_ = width;
  switch (width) {
    case 1:
      low_ = static_cast<T>(std::numeric_limits<Narrow<1>>::min());
      high_ = static_cast<T>(std::numeric_limits<Narrow<1>>::max());
      break;
    case 2:
      low_ = static_cast<T>(std::numeric_limits<Narrow<2>>::min());
      high_ = static_cast<T>(std::numeric_limits<Narrow<2>>::max());
      break;
    case 4:
      low_ = static_cast<T>(std::numeric_limits<Narrow<4>>::min());
      high_ = static_cast<T>(std::numeric_limits<Narrow<4>>::max());
      break;
    default:
      low_ = std::numeric_limits<T>::min();
      high_ = std::numeric_limits<T>::max();
  }
}

// A table of `records`, in order (tests, and sources that still build records).
ChunkTable ChunkTableOf(absl::Span<const v1::ChunkRecord> records);
// The records of `table` from `from` on, materialized one at a time.
std::vector<v1::ChunkRecord> RecordsOf(const ChunkTable& table, size_t from = 0);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SCHEMA_CHUNK_TABLE_H_
