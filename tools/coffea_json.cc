#include "tools/coffea_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr double kMiB = 1024.0 * 1024.0;
// Year 2255: far beyond any real record, well inside int64 nanoseconds (about 9.2e9 s).
constexpr double kMaxEpochSeconds = 9e9;

absl::StatusOr<Value> ParseJson(absl::string_view json, absl::string_view source) {
  Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(
      std::string(json.data(), json.size()), &value);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid JSON: ", std::string(status.message())));
  }
  return value;
}

const Value* Find(const Struct& object, const char* key) {
  const auto it = object.fields().find(key);
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

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    if (error == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(error)));
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Adds one section per entry of a {name: number} dict of the record.
absl::Status AddSections(const Struct& record, const char* key, v1::SectionRecord::Kind kind,
                         absl::string_view where, v1::ChunkRecord* chunk) {
  const Value* dict = Find(record, key);
  if (dict == nullptr) return absl::OkStatus();
  if (dict->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": '", key, "' must be an object"));
  }
  for (const auto& [name, value] : dict->struct_value().fields()) {
    absl::StatusOr<double> number =
        Number(value, absl::StrCat(where, ": ", key, "['", name, "']"));
    if (!number.ok()) return number.status();
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
  return absl::OkStatus();
}

absl::StatusOr<v1::ChunkRecord> ParseOneRecord(const Value& value, absl::string_view where) {
  if (value.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(where, " must be an object"));
  }
  const Struct& record = value.struct_value();
  v1::ChunkRecord chunk;
  chunk.set_status(v1::CHUNK_STATUS_OK);
  // Each field: absent is fine, a wrong type is an error naming it.
  auto number = [&](const char* key, auto setter) -> absl::Status {
    const Value* field = Find(record, key);
    if (field == nullptr) return absl::OkStatus();
    absl::StatusOr<double> parsed = Number(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return parsed.status();
    setter(*parsed);
    return absl::OkStatus();
  };
  auto text = [&](const char* key, auto setter) -> absl::Status {
    const Value* field = Find(record, key);
    if (field == nullptr) return absl::OkStatus();
    absl::StatusOr<std::string> parsed = String(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return parsed.status();
    setter(*parsed);
    return absl::OkStatus();
  };
  // Whole and fractional seconds apart: s * 1e9 in one double loses the last digits at epoch scale.
  // Callers keep |s| within kMaxEpochSeconds, so the product cannot overflow.
  const auto seconds_to_ns = [](double s) {
    const double whole = std::floor(s);
    return static_cast<int64_t>(whole) * 1000000000 + std::llround((s - whole) * 1e9);
  };
  // An epoch time: a finite number of seconds that nanoseconds since 1970 in int64 can hold.
  auto epoch_seconds = [&](const char* key, auto setter) -> absl::Status {
    const Value* field = Find(record, key);
    if (field == nullptr) return absl::OkStatus();
    absl::StatusOr<double> parsed = Number(*field, absl::StrCat(where, ": '", key, "'"));
    if (!parsed.ok()) return parsed.status();
    if (std::abs(*parsed) > kMaxEpochSeconds) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": '", key, "' = ", *parsed, " is not a time in seconds since 1970"));
    }
    setter(seconds_to_ns(*parsed));
    return absl::OkStatus();
  };
  // The engine's task id: a TaskVine / Work Queue id (an integer) or a Dask key (a string).
  auto task_id = [&]() -> absl::Status {
    const Value* field = Find(record, "task_id");
    if (field == nullptr) return absl::OkStatus();
    if (field->kind_case() == Value::kStringValue) {
      chunk.set_task_id(field->string_value());
      return absl::OkStatus();
    }
    absl::StatusOr<int64_t> id =
        Integer(*field, absl::StrCat(where, ": 'task_id' (an integer or a string)"));
    if (!id.ok()) return id.status();
    chunk.set_task_id(absl::StrCat(*id));
    return absl::OkStatus();
  };
  for (absl::Status status : {
           text("dataset", [&](const std::string& v) { chunk.set_dataset(v); }),
           text("file", [&](const std::string& v) { chunk.set_file(v); }),
           text("uuid", [&](const std::string& v) { chunk.set_uuid(v); }),
           task_id(),
           number("entry_start", [&](double v) { chunk.set_entry_start(std::llround(v)); }),
           number("entry_stop", [&](double v) { chunk.set_entry_stop(std::llround(v)); }),
           number("num_events", [&](double v) { chunk.set_events(std::llround(v)); }),
           epoch_seconds("t_start", [&](int64_t ns) { chunk.set_start_unix_ns(ns); }),
           epoch_seconds("t_end", [&](int64_t ns) { chunk.set_end_unix_ns(ns); }),
           number("duration", [&](double v) { chunk.set_duration_seconds(v); }),
           number("mem_before_mb",
                  [&](double v) { chunk.set_memory_before_bytes(std::llround(v * kMiB)); }),
           number("mem_after_mb",
                  [&](double v) { chunk.set_memory_after_bytes(std::llround(v * kMiB)); }),
           number("bytes_read", [&](double v) { chunk.set_compressed_bytes_read(std::llround(v)); }),
           number("accessed_bytes", [&](double v) { chunk.set_accessed_bytes(std::llround(v)); }),
           number("accessed_uncompressed_bytes",
                  [&](double v) { chunk.set_accessed_uncompressed_bytes(std::llround(v)); }),
           number("branches_read_percent", [&](double v) { chunk.set_branches_read_percent(v); }),
           number("bytes_read_percent", [&](double v) { chunk.set_bytes_read_percent(v); }),
           AddSections(record, "timing", v1::SectionRecord::KIND_TIME, where, &chunk),
           AddSections(record, "memory", v1::SectionRecord::KIND_MEMORY, where, &chunk),
           AddSections(record, "bytes", v1::SectionRecord::KIND_BYTES, where, &chunk),
       }) {
    if (!status.ok()) return status;
  }
  // The original has no duration when it has start and end only (and vice versa).
  if (Find(record, "duration") == nullptr && chunk.end_unix_ns() >= chunk.start_unix_ns()) {
    chunk.set_duration_seconds((chunk.end_unix_ns() - chunk.start_unix_ns()) * 1e-9);
  }
  if (const Value* branches = Find(record, "accessed_branches"); branches != nullptr) {
    if (branches->kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": 'accessed_branches' must be a list"));
    }
    for (const Value& branch : branches->list_value().values()) {
      absl::StatusOr<std::string> name = String(branch, absl::StrCat(where, ": a branch name"));
      if (!name.ok()) return name.status();
      chunk.add_accessed_branches(*name);
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

absl::StatusOr<v1::WorkflowReport> ParseCoffeaReport(absl::string_view json,
                                                     absl::string_view source) {
  absl::StatusOr<Value> value = ParseJson(json, source);
  if (!value.ok()) return value.status();
  if (value->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": a Coffea report is a JSON object"));
  }
  const Struct& report = value->struct_value();
  v1::WorkflowReport result;
  if (const Value* v = Find(report, "bytesread")) {
    absl::StatusOr<int64_t> n = Integer(*v, absl::StrCat(source, ": 'bytesread'"));
    if (!n.ok()) return n.status();
    result.set_compressed_bytes_read(*n);
  }
  if (const Value* v = Find(report, "entries")) {
    absl::StatusOr<int64_t> n = Integer(*v, absl::StrCat(source, ": 'entries'"));
    if (!n.ok()) return n.status();
    result.set_events(*n);
  }
  if (const Value* v = Find(report, "processtime")) {
    absl::StatusOr<double> n = Number(*v, absl::StrCat(source, ": 'processtime'"));
    if (!n.ok()) return n.status();
    result.set_process_time_seconds(*n);
  }
  if (const Value* v = Find(report, "chunks")) {
    absl::StatusOr<int64_t> n = Integer(*v, absl::StrCat(source, ": 'chunks'"));
    if (!n.ok()) return n.status();
    result.set_chunks(*n);
  }
  if (const Value* v = Find(report, "columns")) {
    if (v->kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": 'columns' must be a list"));
    }
    for (const Value& column : v->list_value().values()) {
      absl::StatusOr<std::string> name = String(column, absl::StrCat(source, ": a column"));
      if (!name.ok()) return name.status();
      result.add_columns(*name);
    }
  }
  return result;
}

absl::StatusOr<std::vector<v1::ChunkRecord>> ParseChunkRecords(absl::string_view json,
                                                               absl::string_view source) {
  absl::StatusOr<Value> value = ParseJson(json, source);
  if (!value.ok()) return value.status();
  const ListValue* list = nullptr;
  if (value->kind_case() == Value::kListValue) {
    list = &value->list_value();
  } else if (value->kind_case() == Value::kStructValue) {
    const Value* inner = Find(value->struct_value(), "__roastcoffea_metrics__");
    if (inner != nullptr && inner->kind_case() == Value::kListValue) list = &inner->list_value();
  }
  if (list == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": chunk records are a JSON list (or an object with \"__roastcoffea_metrics__\")"));
  }
  std::vector<v1::ChunkRecord> records;
  records.reserve(static_cast<size_t>(list->values_size()));
  for (int i = 0; i < list->values_size(); ++i) {
    absl::StatusOr<v1::ChunkRecord> record =
        ParseOneRecord(list->values(i), absl::StrCat(source, ": record ", i));
    if (!record.ok()) return record.status();
    records.push_back(*std::move(record));
  }
  return records;
}

absl::StatusOr<v1::WorkflowReport> ReadCoffeaReport(const std::string& path) {
  absl::StatusOr<std::string> json = ReadWholeFile(path);
  if (!json.ok()) return json.status();
  return ParseCoffeaReport(*json, path);
}

absl::StatusOr<std::vector<v1::ChunkRecord>> ReadChunkRecords(const std::string& path) {
  absl::StatusOr<std::string> json = ReadWholeFile(path);
  if (!json.ok()) return json.status();
  return ParseChunkRecords(*json, path);
}

}  // namespace roastcoffea
