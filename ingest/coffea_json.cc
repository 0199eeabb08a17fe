#include "ingest/coffea_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ingest/chunk_record_parser.h"
#include "ingest/chunk_record_reader.h"
#include "ingest/coffea_json_internal.h"
#include "ingest/ingest_warnings.h"
#include "ingest/json_array_elements.h"
#include "ingest/json_tree.h"
#include "io/bounded_read.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using ingest_internal::ArrayElements;
using ingest_internal::InInt64;
using ingest_internal::ReadChunkRecord;
using ingest_internal::Warnings;

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

// One record at a time: the direct parser for a record as the original writes it, JsonTree for
// any other (`direct` false: JsonTree for all, the reference in tests).
class RecordParsers {
 public:
  RecordParsers(absl::string_view source, bool direct, Warnings* warnings)
      : source_(source), direct_(direct), warnings_(*warnings) {}

  // Reads element `index` of `elements` (at its start) into a record of `out` (a vector of
  // records or a ChunkTable), or leaves it out with a warning. An error (or a cancellation) of
  // reading the input is returned.
  template <typename Out>
  absl::Status Read(size_t index, ArrayElements& elements, Out* out) {
    // In place, from the input in memory: the common case, one pass over the bytes.
    if (direct_) {
      if (const size_t length = direct_parser_.Parse(elements.Available(), &members_)) {
        elements.Consume(length);
        AddMembers(index, out);
        return absl::OkStatus();
      }
    }
    absl::StatusOr<absl::string_view> element = elements.SkimElement();
    if (!element.ok()) return element.status();
    // Cut at a piece of the file, or declined: the element whole, then the reference parser.
    if (direct_ && direct_parser_.Parse(*element, &members_) == element->size()) {
      AddMembers(index, out);
      return absl::OkStatus();
    }
    ReadThroughTree(*element, index, out);
    return absl::OkStatus();
  }

 private:
  void AddMembers(size_t index, std::vector<v1::ChunkRecord>* records) {
    ReadChunkRecord(members_, source_, index, &warnings_, &records->emplace_back());
  }
  void AddMembers(size_t index, ChunkTable* table) {
    row_reader_.Read(members_, source_, index, &warnings_, &row_);
    table->Append(row_);
  }
  void AddTree(size_t index, std::vector<v1::ChunkRecord>* records) {
    // Read in place: no temporary message to construct, move and destroy per record.
    v1::ChunkRecord& record = records->emplace_back();
    if (!ReadChunkRecord(tree_, source_, index, &warnings_, &members_, &record)) {
      records->pop_back();
    }
  }
  void AddTree(size_t index, ChunkTable* table) {
    if (row_reader_.Read(tree_, source_, index, &warnings_, &members_, &row_)) table->Append(row_);
  }

  template <typename Out>
  void ReadThroughTree(absl::string_view text, size_t index, Out* out) {
    non_finite_.clear();
    // Python's NaN and Infinity made null (and reported), as ParseUntrustedJson does; only a
    // record that has an 'N' or 'I' at all is copied for it.
    if (std::memchr(text.data(), 'N', text.size()) != nullptr ||
        std::memchr(text.data(), 'I', text.size()) != nullptr) {
      replaced_ = ReplaceNonFiniteTokens(text, &non_finite_);
      text = replaced_;
    }
    const absl::Status parsed = tree_.Parse(text);
    if (!parsed.ok()) {
      warnings_.Add(absl::StrCat(source_, ": record ", index, ": not valid JSON: ",
                                 EchoedText(parsed.message()), "; the record is left out"));
      return;
    }
    if (!non_finite_.empty()) {
      warnings_.NonFinite(absl::StrCat(source_, ": record ", index), non_finite_);
    }
    AddTree(index, out);
  }

  const absl::string_view source_;
  const bool direct_;
  Warnings& warnings_;
  ingest_internal::DirectRecordParser direct_parser_;
  ingest_internal::RecordMembers members_;
  ChunkRow row_;
  ingest_internal::ChunkRowReader row_reader_;
  JsonTree tree_;
  std::vector<NonFiniteToken> non_finite_;
  std::string replaced_;
};

// Where ReadRecords puts the records: ChunkRecordsRead's vector or ChunkTableRead's table.
std::vector<v1::ChunkRecord>* Output(ChunkRecordsRead& read) { return &read.records; }
ChunkTable* Output(ChunkTableRead& read) { return &read.table; }
void Reserve(size_t records, ChunkRecordsRead& read) { read.records.reserve(records); }
void Reserve(size_t records, ChunkTableRead& read) { read.table.Reserve(records); }
size_t Kept(const ChunkRecordsRead& read) { return read.records.size(); }
size_t Kept(const ChunkTableRead& read) { return read.table.size(); }

std::string CutShort(absl::string_view source, int64_t at, size_t kept) {
  return absl::StrCat(source, ": the file ends inside the list of records at byte ", at,
                      " (cut short: the command was killed while writing it?); the ", kept,
                      " complete records before are kept, the rest is lost");
}

std::string SkippedBom(absl::string_view source) {
  return absl::StrCat(source,
                      ": starts with a UTF-8 byte order mark, which JSON does not allow;"
                      " it is skipped");
}

// The records of `elements` (opened), read one at a time into a `Read` (ChunkRecordsRead or
// ChunkTableRead).
// A file cut short (the input ends inside the list) keeps the records before the cut, with a
// warning. `skipped_bom`: the input started with a byte order mark (a warning says so).
template <typename Read>
absl::StatusOr<Read> ReadRecords(ArrayElements& elements, int64_t input_bytes,
                                 absl::string_view source, const ChunkRecordsOptions& options,
                                 bool direct, bool skipped_bom) {
  Read read;
  Warnings warnings(&read.warnings);
  if (skipped_bom) warnings.Add(SkippedBom(source));
  RecordParsers parsers(source, direct, &warnings);
  size_t index = 0;
  size_t left_out = 0;
  // The vector sized from the first records' length, so that it is not grown (twice its size
  // at the copy) for a long file.
  constexpr size_t kSizingSample = 256;
  int64_t sample_start = 0;
  bool cut_short = false;
  for (;; ++index) {
    if (index % kRecordsPerCancellationCheck == 0 && index > 0 && options.cancelled &&
        options.cancelled()) {
      read.cancelled = true;
      break;
    }
    if (index == 0) sample_start = elements.offset();
    const absl::StatusOr<bool> more = elements.ToNextElement();
    absl::Status status = more.status();
    if (status.ok() && !*more) break;
    if (status.ok() && index >= static_cast<size_t>(kMaxChunkRecords)) {
      status = elements.SkimElement().status();
      if (status.ok()) ++left_out;  // counted, not parsed
    } else if (status.ok()) {
      status = parsers.Read(index, elements, Output(read));
    }
    if (absl::IsCancelled(status)) {
      read.cancelled = true;
      break;
    }
    if (!status.ok() && elements.cut_short_at() >= 0) {
      cut_short = true;
      break;
    }
    if (!status.ok()) return status;
    if (index + 1 == kSizingSample && input_bytes > 0) {
      const int64_t sample_bytes = std::max<int64_t>(1, elements.offset() - sample_start);
      const int64_t estimate = input_bytes / sample_bytes * static_cast<int64_t>(kSizingSample);
      Reserve(
          static_cast<size_t>(std::min<int64_t>(
              kMaxChunkRecords, std::max<int64_t>(kSizingSample, estimate + estimate / 16 + 16))),
          read);
    }
  }
  if (read.cancelled) {
    read.warnings.push_back(StoppedReading(source, index));
  }
  if (cut_short) {
    read.warnings.push_back(CutShort(source, elements.cut_short_at(), Kept(read)));
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

template <typename Read>
absl::StatusOr<Read> ParseRecordList(absl::string_view json, absl::string_view source,
                                     const ChunkRecordsOptions& options, bool direct) {
  // The list itself, or the output object's "__roastcoffea_metrics__" member. A byte order mark
  // before the list is skipped by ArrayElements (byte offsets count it, as from a file).
  absl::string_view unmarked = json;
  const bool skipped_bom = absl::ConsumePrefix(&unmarked, ArrayElements::kBom);
  absl::string_view list = json;
  absl::StatusOr<std::optional<absl::string_view>> inner =
      FindJsonMember(unmarked, "__roastcoffea_metrics__", source);
  if (!inner.ok()) return inner.status();
  if (inner->has_value()) list = **inner;
  ArrayElements elements(source, list);
  absl::StatusOr<bool> opened = elements.Open();
  if (!opened.ok()) return opened.status();
  if (!*opened) return NotAList(source);
  return ReadRecords<Read>(elements, static_cast<int64_t>(list.size()), source, options, direct,
                           skipped_bom);
}

}  // namespace

absl::StatusOr<ChunkRecordsRead> ParseChunkRecords(absl::string_view json, absl::string_view source,
                                                   const ChunkRecordsOptions& options) {
  return ParseRecordList<ChunkRecordsRead>(json, source, options, /*direct=*/true);
}

absl::StatusOr<ChunkTableRead> ParseChunkRecordsAsTable(absl::string_view json,
                                                        absl::string_view source,
                                                        const ChunkRecordsOptions& options) {
  return ParseRecordList<ChunkTableRead>(json, source, options, /*direct=*/true);
}

namespace ingest_internal {

absl::StatusOr<ChunkRecordsRead> ParseChunkRecordsThroughTree(absl::string_view json,
                                                              absl::string_view source) {
  return ParseRecordList<ChunkRecordsRead>(json, source, ChunkRecordsOptions(),
                                           /*direct=*/false);
}

}  // namespace ingest_internal

absl::StatusOr<CoffeaReportRead> ReadCoffeaReport(const std::string& path) {
  absl::StatusOr<std::string> json = ReadBoundedFile(path, kMaxCoffeaJsonBytes, "a Coffea report");
  if (!json.ok()) return json.status();
  return ParseCoffeaReport(*json, path);
}

namespace {

template <typename Read>
absl::StatusOr<Read> ReadRecordFile(const std::string& path, const ChunkRecordsOptions& options) {
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
    Read read;
    read.cancelled = true;
    read.warnings.push_back(StoppedReading(path, 0));
    return read;
  }
  if (!opened.ok()) return opened.status();
  if (*opened) {
    return ReadRecords<Read>(elements, size, path, options, /*direct=*/true,
                             elements.skipped_bom());
  }
  // Not a list: the processor output object (read whole: it is the command's output, not a
  // stream of records), or an error.
  absl::StatusOr<std::string> json = ReadBoundedFile(path, limits);
  if (!json.ok()) return json.status();
  return ParseRecordList<Read>(*json, path, options, /*direct=*/true);
}

}  // namespace

absl::StatusOr<ChunkRecordsRead> ReadChunkRecords(const std::string& path,
                                                  const ChunkRecordsOptions& options) {
  return ReadRecordFile<ChunkRecordsRead>(path, options);
}

absl::StatusOr<ChunkTableRead> ReadChunkRecordsAsTable(const std::string& path,
                                                       const ChunkRecordsOptions& options) {
  return ReadRecordFile<ChunkTableRead>(path, options);
}

}  // namespace roastcoffea