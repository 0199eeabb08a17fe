#include "ingest/coffea_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

absl::StatusOr<int64_t> Integer(const Value& value, absl::string_view what) {
  absl::StatusOr<double> number = Number(value, what);
  if (!number.ok()) return number.status();
  if (*number < static_cast<double>(std::numeric_limits<int64_t>::min()) ||
      *number > static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is out of range"));
  }
  return static_cast<int64_t>(std::llround(*number));
}

absl::StatusOr<std::string> String(const Value& value, absl::string_view what) {
  if (value.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a string"));
  }
  return value.string_value();
}

// Adds one section per entry of a {name: number} dict of the record; a bad entry is left out.
void AddSections(const Struct& record, const char* key, v1::SectionRecord::Kind kind,
                 absl::string_view where, v1::ChunkRecord* chunk, Warnings* warnings) {
  const Value* dict = Find(record, key);
  if (dict == nullptr) return;
  if (dict->kind_case() != Value::kStructValue) {
    warnings->LeftOut(
        absl::InvalidArgumentError(absl::StrCat(where, ": '", key, "' must be an object")));
    return;
  }
  for (const auto& [name, value] : dict->struct_value().fields()) {
    if (value.has_null_value()) continue;  // NaN, reported with its key already
    absl::StatusOr<double> number =
        Number(value, absl::StrCat(where, ": ", key, "['", EchoedText(name), "']"));
    if (!number.ok()) {
      warnings->LeftOut(number.status());
      continue;
    }
    v1::SectionRecord* section = chunk->add_sections();
    section->set_name(name);
    section->set_kind(kind);
    section->set_entries(1);
    switch (kind) {
      case v1::SectionRecord::KIND_MEMORY:
        section->set_memory_delta_bytes(std::llround(*number * kMiB));
        break;
      case v1::SectionRecord::KIND_BYTES:
        section->set_bytes_read(std::llround(*number));
        break;
      default:
        section->set_duration_seconds(*number);
    }
  }
}

// One record; std::nullopt (with a warning) when it is not an object.
std::optional<v1::ChunkRecord> ParseOneRecord(const Value& value, absl::string_view where,
                                              Warnings* warnings) {
  if (value.kind_case() != Value::kStructValue) {
    warnings->Add(absl::StrCat(where, " is not an object; the record is left out"));
    return std::nullopt;
  }
  const Struct& record = value.struct_value();
  v1::ChunkRecord chunk;
  chunk.set_status(v1::CHUNK_STATUS_OK);
  // Each field: absent is fine, a bad value is left out with a warning naming it.
  auto number = [&](const char* key, auto setter) {
    const Value* field = Find(record, key);
    if (field == nullptr) return;
    absl::StatusOr<double> parsed = Number(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return warnings->LeftOut(parsed.status());
    setter(*parsed);
  };
  auto text = [&](const char* key, auto setter) {
    const Value* field = Find(record, key);
    if (field == nullptr) return;
    absl::StatusOr<std::string> parsed = String(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return warnings->LeftOut(parsed.status());
    setter(*parsed);
  };
  // Whole and fractional seconds apart: s * 1e9 in one double loses the last digits at epoch scale.
  // Callers keep |s| within kMaxEpochSeconds, so the product cannot overflow.
  const auto seconds_to_ns = [](double s) {
    const double whole = std::floor(s);
    return static_cast<int64_t>(whole) * 1000000000 + std::llround((s - whole) * 1e9);
  };
  // An epoch time: a finite number of seconds that nanoseconds since 1970 in int64 can hold.
  auto epoch_seconds = [&](const char* key, auto setter) {
    const Value* field = Find(record, key);
    if (field == nullptr) return;
    absl::StatusOr<double> parsed = Number(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return warnings->LeftOut(parsed.status());
    if (std::abs(*parsed) > kMaxEpochSeconds) {
      return warnings->LeftOut(absl::InvalidArgumentError(absl::StrCat(
          where, ": '", key, "' = ", *parsed, " is not a time in seconds since 1970")));
    }
    setter(seconds_to_ns(*parsed));
  };
  // The engine's task id: a TaskVine / Work Queue id (an integer) or a Dask key (a string).
  if (const Value* field = Find(record, "task_id"); field != nullptr) {
    if (field->kind_case() == Value::kStringValue) {
      chunk.set_task_id(field->string_value());
    } else if (absl::StatusOr<int64_t> id =
                   Integer(*field, absl::StrCat(where, ": 'task_id' (an integer or a string)"));
               id.ok()) {
      chunk.set_task_id(absl::StrCat(*id));
    } else {
      warnings->LeftOut(id.status());
    }
  }
  text("dataset", [&](const std::string& v) { chunk.set_dataset(v); });
  text("file", [&](const std::string& v) { chunk.set_file(v); });
  text("uuid", [&](const std::string& v) { chunk.set_uuid(v); });
  number("entry_start", [&](double v) { chunk.set_entry_start(std::llround(v)); });
  number("entry_stop", [&](double v) { chunk.set_entry_stop(std::llround(v)); });
  number("num_events", [&](double v) { chunk.set_events(std::llround(v)); });
  epoch_seconds("t_start", [&](int64_t ns) { chunk.set_start_unix_ns(ns); });
  epoch_seconds("t_end", [&](int64_t ns) { chunk.set_end_unix_ns(ns); });
  number("duration", [&](double v) { chunk.set_duration_seconds(v); });
  number("mem_before_mb", [&](double v) { chunk.set_memory_before_bytes(std::llround(v * kMiB)); });
  number("mem_after_mb", [&](double v) { chunk.set_memory_after_bytes(std::llround(v * kMiB)); });
  number("bytes_read", [&](double v) { chunk.set_compressed_bytes_read(std::llround(v)); });
  number("accessed_bytes", [&](double v) { chunk.set_accessed_bytes(std::llround(v)); });
  number("accessed_uncompressed_bytes",
         [&](double v) { chunk.set_accessed_uncompressed_bytes(std::llround(v)); });
  number("branches_read_percent", [&](double v) { chunk.set_branches_read_percent(v); });
  number("bytes_read_percent", [&](double v) { chunk.set_bytes_read_percent(v); });
  AddSections(record, "timing", v1::SectionRecord::KIND_TIME, where, &chunk, warnings);
  AddSections(record, "memory", v1::SectionRecord::KIND_MEMORY, where, &chunk, warnings);
  AddSections(record, "bytes", v1::SectionRecord::KIND_BYTES, where, &chunk, warnings);
  // The original has no duration when it has start and end only (and vice versa).
  if (Find(record, "duration") == nullptr && chunk.end_unix_ns() >= chunk.start_unix_ns()) {
    chunk.set_duration_seconds((chunk.end_unix_ns() - chunk.start_unix_ns()) * 1e-9);
  }
  if (const Value* branches = Find(record, "accessed_branches"); branches != nullptr) {
    if (branches->kind_case() != Value::kListValue) {
      warnings->LeftOut(
          absl::InvalidArgumentError(absl::StrCat(where, ": 'accessed_branches' must be a list")));
    } else {
      for (const Value& branch : branches->list_value().values()) {
        absl::StatusOr<std::string> name = String(branch, absl::StrCat(where, ": a branch name"));
        if (!name.ok()) {
          warnings->LeftOut(name.status());
          continue;
        }
        chunk.add_accessed_branches(*name);
      }
    }
  }
  if (const Value* metadata = Find(record, "file_metadata");
      metadata != nullptr && metadata->kind_case() == Value::kStructValue) {
    const Struct& fields = metadata->struct_value();
    v1::FileMetadata* file = chunk.mutable_file_metadata();
    if (const Value* v = Find(fields, "filename"); v && v->has_string_value()) {
      file->set_file(v->string_value());
    }
    if (const Value* v = Find(fields, "compression_ratio"); v && v->has_number_value()) {
      file->set_compression_ratio(v->number_value());
    }
    if (const Value* v = Find(fields, "total_branches"); v && v->has_number_value()) {
      file->set_total_branches(std::llround(v->number_value()));
    }
    if (const Value* v = Find(fields, "total_tree_bytes"); v && v->has_number_value()) {
      file->set_total_tree_bytes(std::llround(v->number_value()));
    }
  }
  if (const Value* error = Find(record, "error"); error != nullptr) {
    chunk.set_status(v1::CHUNK_STATUS_FAILED);
    chunk.set_error_text(error->kind_case() == Value::kStringValue
                             ? error->string_value()
                             : "error (not described by the record)");
  }
  return chunk;
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

absl::StatusOr<ChunkRecordsRead> ParseChunkRecords(absl::string_view json,
                                                   absl::string_view source) {
  // The list itself, or the output object's "__roastcoffea_metrics__" member.
  absl::string_view list = json;
  absl::StatusOr<std::optional<absl::string_view>> inner =
      FindJsonMember(json, "__roastcoffea_metrics__", source);
  if (!inner.ok()) return inner.status();
  if (inner->has_value()) list = **inner;
  absl::StatusOr<std::vector<absl::string_view>> elements = SplitJsonArray(list, source);
  if (!elements.ok()) {
    // Not a list at all: say what is expected rather than where the scan stopped.
    const size_t first = list.find_first_not_of(" \t\r\n");
    if (first == absl::string_view::npos || list[first] != '[') {
      return absl::InvalidArgumentError(
          absl::StrCat(source,
                       ": chunk records are a JSON list (or an object with "
                       "\"__roastcoffea_metrics__\")"));
    }
    return elements.status();
  }
  ChunkRecordsRead read;
  Warnings warnings(&read.warnings);
  const size_t keep = std::min(elements->size(), static_cast<size_t>(kMaxChunkRecords));
  read.records.reserve(keep);
  // Records one at a time: memory holds the records, never a tree of the whole file.
  const auto parse_one = [&](size_t i, const Value& value) {
    std::optional<v1::ChunkRecord> record =
        ParseOneRecord(value, absl::StrCat(source, ": record ", i), &warnings);
    if (record.has_value()) read.records.push_back(*std::move(record));
  };
  std::vector<NonFiniteToken> non_finite;
  // Batches amortise protobuf's per-call set-up; a batch with a problem is redone record by
  // record, so that every warning names its record.
  constexpr size_t kBatch = 256;
  std::string batch;
  for (size_t first = 0; first < keep; first += kBatch) {
    const size_t last = std::min(keep, first + kBatch);
    batch = "[";
    for (size_t i = first; i < last; ++i) {
      if (i > first) batch += ',';
      batch.append((*elements)[i].data(), (*elements)[i].size());
    }
    batch += ']';
    non_finite.clear();
    absl::StatusOr<Value> values = ParseUntrustedJson(batch, source, &non_finite);
    if (values.ok() && non_finite.empty()) {
      for (size_t i = first; i < last; ++i) {
        parse_one(i, values->list_value().values(static_cast<int>(i - first)));
      }
      continue;
    }
    for (size_t i = first; i < last; ++i) {
      const std::string where = absl::StrCat(source, ": record ", i);
      non_finite.clear();
      absl::StatusOr<Value> value = ParseUntrustedJson((*elements)[i], where, &non_finite);
      if (!value.ok()) {
        warnings.Add(absl::StrCat(value.status().message(), "; the record is left out"));
        continue;
      }
      warnings.NonFinite(where, non_finite);
      parse_one(i, *value);
    }
  }
  if (elements->size() > keep) {
    read.warnings.push_back(absl::StrCat(source, ": ", elements->size() - keep,
                                         " records after the first ", kMaxChunkRecords,
                                         " are left out"));
  }
  warnings.Finish(source);
  return read;
}

absl::StatusOr<CoffeaReportRead> ReadCoffeaReport(const std::string& path) {
  absl::StatusOr<std::string> json = ReadBoundedFile(path, kMaxCoffeaJsonBytes, "a Coffea report");
  if (!json.ok()) return json.status();
  return ParseCoffeaReport(*json, path);
}

absl::StatusOr<ChunkRecordsRead> ReadChunkRecords(const std::string& path) {
  absl::StatusOr<std::string> json = ReadBoundedFile(path, kMaxCoffeaJsonBytes, "chunk records");
  if (!json.ok()) return json.status();
  return ParseChunkRecords(*json, path);
}

}  // namespace roastcoffea
