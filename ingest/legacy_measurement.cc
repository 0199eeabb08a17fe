#include "ingest/legacy_measurement.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "aggregation/aggregate.h"
#include "ingest/coffea_json.h"
#include "ingest/legacy_flat_keys.h"
#include "io/bounded_read.h"
#include "io/untrusted_json.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// The original writes NaN and Infinity as bare tokens (json.dump's default): they become null
// (an absent value). Deep nesting is refused before protobuf parses it (io/untrusted_json.h).
absl::StatusOr<Value> ParseJsonFile(absl::string_view text, absl::string_view what) {
  return ParseUntrustedJson(text, what);
}

const Value* Find(const Struct& object, absl::string_view key) {
  const auto it = object.fields().find(std::string(key));
  if (it == object.fields().end() || it->second.has_null_value()) return nullptr;
  return &it->second;
}

std::optional<double> NumberOf(const Value* value) {
  if (value == nullptr) return std::nullopt;
  if (value->has_number_value()) return value->number_value();
  if (value->has_bool_value()) return value->bool_value() ? 1.0 : 0.0;
  return std::nullopt;
}

// Epoch seconds that fit in int64 nanoseconds with room to spare (years 1685-2255).
bool PlausibleEpochSeconds(double seconds) {
  return std::isfinite(seconds) && std::fabs(seconds) < 9e9;
}

// Only for PlausibleEpochSeconds values.
int64_t SecondsToUnixNs(double seconds) {
  const double whole = std::floor(seconds);
  return static_cast<int64_t>(whole) * 1000000000 + std::llround((seconds - whole) * 1e9);
}

// A count the original wrote as a JSON number, when `type` holds it: finite, not negative and
// below `limit` (2^63 for int64 fields, 2^31 for int32 ones). Otherwise a warning naming `what`
// (the file and key) and nothing: llround and static_cast would wrap such a value.
constexpr double kInt64Limit = 9223372036854775808.0;  // 2^63
constexpr double kInt32Limit = 2147483648.0;           // 2^31

std::optional<int64_t> CountOf(double value, double limit, absl::string_view what,
                               std::vector<std::string>* warnings) {
  if (std::isfinite(value) && value >= 0 && std::nearbyint(value) < limit) {
    return static_cast<int64_t>(std::nearbyint(value));
  }
  warnings->push_back(absl::StrCat(what, " is ", value, ", not a count from 0 to ",
                                   limit == kInt32Limit ? "2^31-1" : "2^63-1",
                                   "; the value is left out"));
  return std::nullopt;
}

// Python's datetime.isoformat() without a time zone: "2025-01-01T12:00:00[.ffffff]".
absl::StatusOr<int64_t> NaiveIsoToUnixNs(absl::string_view text, const absl::TimeZone& zone,
                                         absl::string_view what) {
  absl::CivilSecond civil;
  const std::string whole(text.substr(0, text.find('.')));
  if (!absl::ParseCivilTime(whole, &civil) || civil.year() < 1700 || civil.year() > 2200) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", text, "' is not a naive ISO timestamp"));
  }
  int64_t nanos = 0;
  if (const size_t dot = text.find('.'); dot != absl::string_view::npos) {
    std::string fraction(text.substr(dot + 1));
    if (fraction.empty() || fraction.size() > 9 ||
        !std::all_of(fraction.begin(), fraction.end(), absl::ascii_isdigit)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": '", text, "' has a bad fractional second"));
    }
    fraction.resize(9, '0');
    nanos = std::stoll(fraction);
  }
  return absl::ToUnixNanos(absl::FromCivil(civil, zone)) + nanos;
}

// The flat keys (canonical names) whose fields are integers, and the limit of their type.
double CountLimit(absl::string_view canonical) {
  static const auto* const limits = new absl::flat_hash_map<std::string, double>{
      {"total_events", kInt64Limit},        {"total_bytes_read", kInt64Limit},
      {"num_chunks", kInt64Limit},          {"num_successful_chunks", kInt64Limit},
      {"num_failed_chunks", kInt64Limit},   {"total_events_from_chunks", kInt64Limit},
      {"total_branches_read", kInt64Limit}, {"peak_workers", kInt32Limit},
  };
  const auto it = limits->find(std::string(canonical));
  return it == limits->end() ? 0 : it->second;
}

absl::Status ReadFlatKeys(const Struct& metrics, absl::string_view source,
                          v1::AggregatedMetrics* out, std::vector<std::string>* warnings) {
  for (const auto& [key, value] : metrics.fields()) {
    const std::optional<double> number = NumberOf(&value);
    if (!number.has_value() || !std::isfinite(*number)) continue;
    if (key == "overall_rate_mbps" || key == "overall_rate_mbs") {  // bytes / 1e6 / E
      out->mutable_workflow()->set_data_rate_mbytes_per_second(*number);
      continue;
    }
    const std::optional<std::string> canonical = CanonicalKeyName(key);
    if (!canonical.has_value()) continue;
    auto it = LegacyFlatKeySetters().find(*canonical);
    if (it == LegacyFlatKeySetters().end()) continue;
    if (const double limit = CountLimit(*canonical);
        limit > 0 &&
        !CountOf(*number, limit, absl::StrCat(source, ": '", key, "'"), warnings).has_value()) {
      continue;
    }
    // Only the name drifted; event_rate_core_hz was in Hz per core.
    it->second(key == "event_rate_core_hz" ? *number / 1000.0 : *number, out);
  }
  return absl::OkStatus();
}

// The count at `key` of `fields`, 0 when absent; a bad one is 0 with a warning naming
// `where` and the key.
int64_t CountField(const Struct& fields, absl::string_view key, absl::string_view where,
                   std::vector<std::string>* warnings) {
  const std::optional<double> number = NumberOf(Find(fields, key));
  if (!number.has_value()) return 0;
  return CountOf(*number, kInt64Limit, absl::StrCat(where, ".", key), warnings).value_or(0);
}

void ReadPerDataset(const Struct& metrics, absl::string_view source, v1::ChunkMetrics* chunks,
                    std::vector<std::string>* warnings) {
  const Value* per_dataset = Find(metrics, "per_dataset");
  if (per_dataset == nullptr || !per_dataset->has_struct_value()) return;
  // Sorted by name, so the result does not depend on the JSON object's order.
  std::map<std::string, const Struct*> sorted;
  for (const auto& [name, value] : per_dataset->struct_value().fields()) {
    if (value.has_struct_value()) sorted[name] = &value.struct_value();
  }
  for (const auto& [name, fields] : sorted) {
    v1::DatasetChunkMetrics* dataset = chunks->add_per_dataset();
    dataset->set_dataset(name);
    const std::string where = absl::StrCat(source, ": per_dataset['", name, "']");
    dataset->set_num_chunks(CountField(*fields, "num_chunks", where, warnings));
    dataset->set_total_duration_seconds(NumberOf(Find(*fields, "total_duration")).value_or(0));
    dataset->set_total_events(CountField(*fields, "total_events", where, warnings));
    dataset->set_mean_duration_seconds(NumberOf(Find(*fields, "mean_duration")).value_or(0));
    if (auto mean = NumberOf(Find(*fields, "mean_events_per_chunk"))) {
      dataset->set_mean_events_per_chunk(*mean);
    }
  }
}

void ReadSections(const Struct& metrics, absl::string_view source, v1::ChunkMetrics* chunks,
                  std::vector<std::string>* warnings) {
  const Value* sections = Find(metrics, "sections");
  if (sections == nullptr || !sections->has_struct_value()) return;
  std::map<std::string, const Struct*> sorted;
  for (const auto& [name, value] : sections->struct_value().fields()) {
    if (value.has_struct_value()) sorted[name] = &value.struct_value();
  }
  for (const auto& [name, fields] : sorted) {
    v1::SectionSummary* section = chunks->add_sections();
    section->set_name(name);
    const Value* type = Find(*fields, "type");
    section->set_type(type != nullptr && type->has_string_value() ? type->string_value()
                                                                  : "section");
    section->set_count(
        CountField(*fields, "count", absl::StrCat(source, ": sections['", name, "']"), warnings));
    section->set_total_duration_seconds(NumberOf(Find(*fields, "total_duration")).value_or(0));
    section->set_mean_duration_seconds(NumberOf(Find(*fields, "mean_duration")).value_or(0));
    if (auto v = NumberOf(Find(*fields, "mean_mem_delta_mb"))) {
      section->set_mean_memory_delta_bytes(*v * kBytesPerMiB);
    }
    if (auto v = NumberOf(Find(*fields, "min_mem_delta_mb"))) {
      section->set_min_memory_delta_bytes(*v * kBytesPerMiB);
    }
    if (auto v = NumberOf(Find(*fields, "max_mem_delta_mb"))) {
      section->set_max_memory_delta_bytes(*v * kBytesPerMiB);
    }
  }
}

absl::Status ReadChunkInfo(const Struct& metrics, absl::string_view source,
                           v1::ChunkMetrics* chunks, std::vector<std::string>* warnings) {
  const Value* info = Find(metrics, "chunk_info");
  if (info == nullptr || !info->has_struct_value()) return absl::OkStatus();
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> entries;  // sorted, then made columns
  for (const auto& [key, value] : info->struct_value().fields()) {
    absl::StatusOr<std::vector<std::string>> tuple = ParsePythonTupleRepr(key);
    int64_t start = 0;
    int64_t stop = 0;
    if (!tuple.ok() || tuple->size() != 3 || !absl::SimpleAtoi((*tuple)[1], &start) ||
        !absl::SimpleAtoi((*tuple)[2], &stop)) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics.json: chunk_info key '", key,
                       "' is not a (file, entry_start, entry_stop) tuple"));
    }
    if (!value.has_list_value() || value.list_value().values_size() != 3) {
      return absl::InvalidArgumentError(absl::StrCat("metrics.json: chunk_info['", key,
                                                     "'] is not a [t_start, t_end, bytes] list"));
    }
    const auto& values = value.list_value().values();
    const double t_start = NumberOf(&values[0]).value_or(0);
    const double t_end = NumberOf(&values[1]).value_or(0);
    if (!PlausibleEpochSeconds(t_start) || !PlausibleEpochSeconds(t_end)) {
      return absl::InvalidArgumentError(absl::StrCat("metrics.json: chunk_info['", key,
                                                     "'] has times that are not epoch seconds"));
    }
    v1::ChunkInfo* entry = entries.Add();
    entry->set_file((*tuple)[0]);
    entry->set_entry_start(start);
    entry->set_entry_stop(stop);
    entry->set_start_unix_ns(SecondsToUnixNs(t_start));
    entry->set_end_unix_ns(SecondsToUnixNs(t_end));
    if (const std::optional<double> bytes = NumberOf(&values[2])) {
      entry->set_bytes_read(CountOf(*bytes, kInt64Limit,
                                    absl::StrCat(source, ": chunk_info['", key, "'] bytes"),
                                    warnings)
                                .value_or(0));
    }
  }
  std::sort(entries.begin(), entries.end(), [](const v1::ChunkInfo& a, const v1::ChunkInfo& b) {
    return std::make_tuple(a.end_unix_ns(), a.file(), a.entry_start()) <
           std::make_tuple(b.end_unix_ns(), b.file(), b.entry_start());
  });
  *chunks->mutable_chunk_info_columns() = ChunkInfoColumnsOf(entries);
  return absl::OkStatus();
}

void ReadNumberList(const Struct& metrics, absl::string_view key,
                    google::protobuf::RepeatedField<double>* out) {
  const Value* list = Find(metrics, key);
  if (list == nullptr || !list->has_list_value()) return;
  for (const Value& value : list->list_value().values()) {
    if (auto number = NumberOf(&value)) out->Add(*number);
  }
}

// One per-worker series of the original: {address: [[iso, value], ...]}.
struct SeriesColumn {
  absl::string_view key;
  google::protobuf::RepeatedField<double>* (*column)(v1::WorkerSeries*);
};

const std::vector<SeriesColumn>& PerWorkerColumns() {
  static const auto* const columns = new std::vector<SeriesColumn>{
      {"worker_memory", [](v1::WorkerSeries* s) { return s->mutable_memory_bytes(); }},
      {"worker_memory_limit", [](v1::WorkerSeries* s) { return s->mutable_memory_limit_bytes(); }},
      {"worker_cores", [](v1::WorkerSeries* s) { return s->mutable_cores(); }},
      {"worker_active_tasks", [](v1::WorkerSeries* s) { return s->mutable_active_tasks(); }},
      {"worker_executing", [](v1::WorkerSeries* s) { return s->mutable_executing_tasks(); }},
      {"worker_nbytes", [](v1::WorkerSeries* s) { return s->mutable_managed_bytes(); }},
      {"worker_occupancy", [](v1::WorkerSeries* s) { return s->mutable_occupancy_seconds(); }},
      {"worker_cpu", [](v1::WorkerSeries* s) { return s->mutable_cpu_percent(); }},
      {"worker_last_seen", [](v1::WorkerSeries* s) { return s->mutable_last_seen_unix_seconds(); }},
  };
  return *columns;
}

using Samples = std::vector<std::pair<int64_t, double>>;

absl::StatusOr<Samples> ReadSamples(const Value& list, const absl::TimeZone& zone,
                                    absl::string_view what) {
  if (!list.has_list_value()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a list of [time, value]"));
  }
  Samples samples;
  for (const Value& pair : list.list_value().values()) {
    if (!pair.has_list_value() || pair.list_value().values_size() != 2 ||
        !pair.list_value().values(0).has_string_value()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": a sample is not [iso time, value]"));
    }
    absl::StatusOr<int64_t> time =
        NaiveIsoToUnixNs(pair.list_value().values(0).string_value(), zone, what);
    if (!time.ok()) return time.status();
    const std::optional<double> value = NumberOf(&pair.list_value().values(1));
    if (!value.has_value()) continue;  // None (or NaN) samples carry nothing.
    samples.emplace_back(*time, *value);
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return samples;
}

absl::StatusOr<v1::TrackingData> ReadTracking(const Struct& tracking, const absl::TimeZone& zone,
                                              absl::string_view source,
                                              std::vector<std::string>* warnings) {
  v1::TrackingData out;
  out.set_backend("dask");
  if (const Value* counts = Find(tracking, "worker_counts"); counts && counts->has_struct_value()) {
    std::vector<std::pair<int64_t, int32_t>> sorted;
    for (const auto& [iso, value] : counts->struct_value().fields()) {
      absl::StatusOr<int64_t> time =
          NaiveIsoToUnixNs(iso, zone, "metrics.json: tracking_data.worker_counts");
      if (!time.ok()) return time.status();
      const std::optional<int64_t> count =
          CountOf(NumberOf(&value).value_or(0), kInt32Limit,
                  absl::StrCat(source, ": tracking_data.worker_counts['", iso, "']"), warnings);
      if (count.has_value()) sorted.emplace_back(*time, static_cast<int32_t>(*count));
    }
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [time, count] : sorted) {
      out.add_worker_count_time_unix_ns(time);
      out.add_worker_count(count);
    }
  }
  // Per worker: every series read, then laid out on the worker's time column (the union of
  // its sample instants; the original samples every series at the same tick).
  std::map<std::string, std::map<absl::string_view, Samples>> by_worker;
  for (const SeriesColumn& column : PerWorkerColumns()) {
    const Value* series = Find(tracking, column.key);
    if (series == nullptr || !series->has_struct_value()) continue;
    for (const auto& [worker, list] : series->struct_value().fields()) {
      absl::StatusOr<Samples> samples = ReadSamples(
          list, zone, absl::StrCat("metrics.json: tracking_data.", column.key, "['", worker, "']"));
      if (!samples.ok()) return samples.status();
      by_worker[worker][column.key] = *std::move(samples);
    }
  }
  for (const auto& [worker, series] : by_worker) {
    v1::WorkerSeries* out_series = out.add_workers();
    out_series->set_worker(worker);
    std::vector<int64_t> times;
    for (const auto& [key, samples] : series) {
      for (const auto& sample : samples) times.push_back(sample.first);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    out_series->mutable_time_unix_ns()->Add(times.begin(), times.end());
    for (const SeriesColumn& column : PerWorkerColumns()) {
      auto it = series.find(column.key);
      if (it == series.end() || it->second.empty()) continue;
      const Samples& samples = it->second;
      google::protobuf::RepeatedField<double>* values = column.column(out_series);
      size_t next = 0;
      double held = samples.front().second;  // Before the first sample: its value.
      for (int64_t time : times) {
        while (next < samples.size() && samples[next].first <= time) held = samples[next++].second;
        values->Add(held);
      }
    }
  }
  return out;
}

// raw_span_metrics: {"(context, prefix, activity, unit)": value}.
absl::Status ReadSpans(const Struct& metrics, v1::Measurement* measurement) {
  const Value* raw = Find(metrics, "raw_span_metrics");
  if (raw == nullptr || !raw->has_struct_value() || raw->struct_value().fields().empty()) {
    return absl::OkStatus();
  }
  std::map<std::string, const Value*> sorted;
  for (const auto& [key, value] : raw->struct_value().fields()) sorted[key] = &value;
  v1::Span* span = measurement->add_spans();
  span->set_name("legacy");
  for (const auto& [key, value] : sorted) {
    absl::StatusOr<std::vector<std::string>> tuple = ParsePythonTupleRepr(key);
    if (!tuple.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("metrics.json: raw_span_metrics key '", key,
                                                     "': ", tuple.status().message()));
    }
    const std::optional<double> number = NumberOf(value);
    if (tuple->size() < 3 || !number.has_value() || !std::isfinite(*number)) continue;
    v1::FineMetric* metric = span->add_metrics();
    metric->set_context((*tuple)[0]);
    metric->set_task_prefix((*tuple)[1]);
    metric->set_activity((*tuple)[2]);
    if (tuple->size() > 3) metric->set_unit((*tuple)[3]);
    metric->set_value(*number);
  }
  return absl::OkStatus();
}

// Size limits of the original's files: metrics.json holds per-chunk records and samples
// (tens of MB for large runs); the others are a few lines.
constexpr int64_t kMaxMetricsJsonBytes = int64_t{256} << 20;
constexpr int64_t kMaxSmallFileBytes = int64_t{16} << 20;

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParsePythonTupleRepr(absl::string_view repr) {
  absl::string_view text = absl::StripAsciiWhitespace(repr);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return absl::InvalidArgumentError(absl::StrCat("'", repr, "' is not a tuple repr"));
  }
  text = text.substr(1, text.size() - 2);
  std::vector<std::string> elements;
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip_space();
  while (i < text.size()) {
    std::string element;
    if (text[i] == '\'' || text[i] == '"') {
      const char quote = text[i++];
      bool closed = false;
      while (i < text.size()) {
        const char c = text[i++];
        if (c == quote) {
          closed = true;
          break;
        }
        if (c == '\\' && i < text.size()) {
          const char escaped = text[i++];
          switch (escaped) {
            case 'n':
              element.push_back('\n');
              break;
            case 't':
              element.push_back('\t');
              break;
            case 'r':
              element.push_back('\r');
              break;
            default:
              element.push_back(escaped);
          }
          continue;
        }
        element.push_back(c);
      }
      if (!closed) {
        return absl::InvalidArgumentError(absl::StrCat("'", repr, "' has an unterminated string"));
      }
    } else {
      const size_t end = std::min(text.find(',', i), text.size());
      element = std::string(absl::StripAsciiWhitespace(text.substr(i, end - i)));
      double number;
      if (element != "None" && element != "True" && element != "False" &&
          !absl::SimpleAtod(element, &number)) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", repr, "' has an element that is not a string, number or None"));
      }
      i = end;
    }
    elements.push_back(std::move(element));
    skip_space();
    if (i < text.size()) {
      if (text[i] != ',') {
        return absl::InvalidArgumentError(absl::StrCat("'", repr, "' is missing a comma"));
      }
      ++i;
      skip_space();
    }
  }
  return elements;
}

namespace {

// start_end_time.txt: exactly two floats, like the original's check. A non-finite difference
// is left out with a note in `left_out`.
absl::Status ReadElapsedTime(absl::string_view start_end_time, absl::string_view source,
                             v1::MeasurementMetadata& metadata,
                             std::vector<std::string>& left_out) {
  const std::string first_line(start_end_time.substr(0, start_end_time.find('\n')));
  const std::vector<std::string> times = absl::StrSplit(first_line, ',');
  double t0 = 0;
  double t1 = 0;
  if (times.size() != 2 || !absl::SimpleAtod(times[0], &t0) || !absl::SimpleAtod(times[1], &t1)) {
    // The line is not quoted: the file may be a link to anything the user can read.
    return absl::DataLossError(
        absl::StrCat("Invalid timing format in ", source,
                     "/start_end_time.txt: expected one line \"<start>,<end>\" (two numbers)"));
  }
  if (std::isfinite(t1 - t0)) {
    metadata.set_elapsed_seconds(t1 - t0);
  } else {
    left_out.push_back(absl::StrCat(source, "/start_end_time.txt: '", first_line,
                                    "' gives no finite elapsed time; the value is left out"));
  }
  return absl::OkStatus();
}

// metadata.json: its format must be the one read here; the time of the save is kept.
absl::Status ReadMetadataJson(absl::string_view metadata_json, absl::string_view source,
                              v1::MeasurementMetadata& metadata) {
  absl::StatusOr<Value> parsed =
      ParseJsonFile(metadata_json, absl::StrCat(source, "/metadata.json"));
  if (!parsed.ok()) return parsed.status();
  if (!parsed->has_struct_value()) return absl::OkStatus();
  const Struct& fields = parsed->struct_value();
  if (const Value* format = Find(fields, "format"); format != nullptr &&
                                                    format->has_string_value() &&
                                                    format->string_value() != kLegacyFormatName) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, "/metadata.json: unknown format '", format->string_value(), "'"));
  }
  if (const Value* timestamp = Find(fields, "timestamp");
      timestamp && timestamp->has_string_value()) {
    // Naive local time of the save, not the run's start: kept as text.
    (*metadata.mutable_configuration())["legacy_saved_at_local"] = timestamp->string_value();
  }
  return absl::OkStatus();
}

// config.json: each key becomes a configuration entry (strings as they are, others as JSON).
absl::Status ReadConfigJson(absl::string_view config_json, absl::string_view source,
                            v1::MeasurementMetadata& metadata) {
  absl::StatusOr<Value> parsed = ParseJsonFile(config_json, absl::StrCat(source, "/config.json"));
  if (!parsed.ok()) return parsed.status();
  if (!parsed->has_struct_value()) return absl::OkStatus();
  for (const auto& [key, value] : parsed->struct_value().fields()) {
    std::string text;
    if (value.has_string_value()) {
      text = value.string_value();
    } else {
      (void)google::protobuf::util::MessageToJsonString(value, &text);
    }
    (*metadata.mutable_configuration())[key] = text;
  }
  return absl::OkStatus();
}

// The chunk metrics, when metrics.json has any: counts of the statistics, per dataset,
// sections and chunk_info.
absl::Status ReadChunkMetrics(const Struct& metrics_json, const std::string& metrics_source,
                              absl::string_view source, v1::AggregatedMetrics& metrics,
                              std::vector<std::string>& left_out) {
  const bool has_chunk_keys =
      metrics.has_chunks() || Find(metrics_json, "per_dataset") != nullptr ||
      Find(metrics_json, "chunk_info") != nullptr || Find(metrics_json, "sections") != nullptr;
  if (!has_chunk_keys) return absl::OkStatus();
  v1::ChunkMetrics& chunks = *metrics.mutable_chunks();
  chunks.set_num_chunks(metrics.workflow().num_chunks());
  const int64_t successful = chunks.num_successful_chunks();
  chunks.mutable_duration_seconds()->set_count(successful);
  if (metrics_json.fields().count("chunk_mem_delta_mean_mb") > 0) {
    chunks.mutable_memory_delta_bytes()->set_count(successful);
  }
  if (metrics_json.fields().count("chunk_events_mean") > 0) {
    chunks.mutable_events()->set_count(successful);
  }
  ReadPerDataset(metrics_json, metrics_source, &chunks, &left_out);
  ReadSections(metrics_json, metrics_source, &chunks, &left_out);
  if (absl::Status status = ReadChunkInfo(metrics_json, metrics_source, &chunks, &left_out);
      !status.ok()) {
    return absl::Status(status.code(), absl::StrCat(source, "/", status.message()));
  }
  return absl::OkStatus();
}

// The workflow report, from the totals the original aggregated.
void FillWorkflowReport(v1::AggregatedMetrics& metrics, v1::WorkflowReport& report) {
  // The original's total_cpu_time is Coffea's processtime, which ours calls the summed chunk
  // wall time: with it, the tables show its speedup_factor and event_rate_cpu_total_khz where
  // ours show theirs, under the same labels.
  if (metrics.workflow().has_total_cpu_time_seconds() &&
      !metrics.workflow().has_summed_chunk_wall_seconds()) {
    metrics.mutable_workflow()->set_summed_chunk_wall_seconds(
        metrics.workflow().total_cpu_time_seconds());
  }
  report.set_events(metrics.workflow().total_events());
  report.set_compressed_bytes_read(metrics.workflow().total_bytes_read());
  report.set_process_time_seconds(metrics.workflow().total_cpu_time_seconds());
  report.set_chunks(metrics.workflow().num_chunks());
}

// raw_chunk_metrics: the chunk records; a bad value loses that value (noted in `left_out`),
// not the directory.
absl::Status ReadRawChunks(const Value& raw_chunks, const std::string& metrics_source,
                           v1::Measurement& measurement, std::vector<std::string>& left_out) {
  // Times beyond int64 nanoseconds are rejected here, before the record parser converts them.
  for (int i = 0; i < raw_chunks.list_value().values_size(); ++i) {
    const Value& record = raw_chunks.list_value().values(i);
    if (!record.has_struct_value()) continue;
    for (const char* key : {"t_start", "t_end"}) {
      const std::optional<double> time = NumberOf(Find(record.struct_value(), key));
      if (time.has_value() && !PlausibleEpochSeconds(*time)) {
        return absl::InvalidArgumentError(absl::StrCat(metrics_source, ": raw_chunk_metrics[", i,
                                                       "]: '", key, "' is not epoch seconds"));
      }
    }
  }
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(raw_chunks, &json);
  absl::StatusOr<ChunkRecordsRead> records =
      ParseChunkRecords(json, absl::StrCat(metrics_source, ": raw_chunk_metrics"));
  if (!records.ok()) return records.status();
  for (v1::ChunkRecord& record : records->records) *measurement.add_chunks() = std::move(record);
  for (std::string& text : records->warnings) left_out.push_back(std::move(text));
  return absl::OkStatus();
}

// The run's wall-clock start, from the chunks when they have times (the original's t0/t1 are
// perf_counter readings).
void SetStartFromChunks(v1::Measurement& measurement) {
  int64_t first = 0;
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    if (chunk.start_unix_ns() == 0) continue;
    if (first == 0 || chunk.start_unix_ns() < first) first = chunk.start_unix_ns();
  }
  if (first != 0) {
    v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
    metadata.mutable_start_time()->set_seconds(first / 1000000000);
    metadata.mutable_start_time()->set_nanos(static_cast<int32_t>(first % 1000000000));
  }
}

}  // namespace

bool IsLegacyMeasurementDirectory(absl::string_view directory) {
  const std::string dir(directory);
  return !Exists(dir + "/FORMAT") && Exists(dir + "/metrics.json") &&
         Exists(dir + "/start_end_time.txt");
}

absl::StatusOr<v1::Measurement> ParseLegacyMeasurement(const LegacyMeasurementFiles& files,
                                                       absl::string_view source,
                                                       const LegacyLoadOptions& options) {
  v1::Measurement measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
  metadata.set_schema_version(1);
  metadata.set_tool_version(absl::StrCat("roastcoffea (Python), ", kLegacyFormatName));
  // Values left out, each naming its file and key: shown with the measurement.
  std::vector<std::string> left_out;
  if (absl::Status status = ReadElapsedTime(files.start_end_time, source, metadata, left_out);
      !status.ok()) {
    return status;
  }
  if (files.metadata_json.has_value()) {
    if (absl::Status status = ReadMetadataJson(*files.metadata_json, source, metadata);
        !status.ok()) {
      return status;
    }
  }
  if (files.config_json.has_value()) {
    if (absl::Status status = ReadConfigJson(*files.config_json, source, metadata); !status.ok()) {
      return status;
    }
  }

  const std::string metrics_source = absl::StrCat(source, "/metrics.json");
  absl::StatusOr<Value> parsed = ParseJsonFile(files.metrics_json, metrics_source);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->has_struct_value()) {
    return absl::InvalidArgumentError(absl::StrCat(metrics_source, ": must be a JSON object"));
  }
  const Struct& metrics_json = parsed->struct_value();
  v1::AggregatedMetrics& metrics = *measurement.mutable_metrics();
  if (absl::Status status = ReadFlatKeys(metrics_json, metrics_source, &metrics, &left_out);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          ReadChunkMetrics(metrics_json, metrics_source, source, metrics, left_out);
      !status.ok()) {
    return status;
  }
  if (Find(metrics_json, "compression_ratios") ||
      Find(metrics_json, "bytes_read_percent_per_file")) {
    ReadNumberList(metrics_json, "compression_ratios",
                   metrics.mutable_branches()->mutable_compression_ratios());
    ReadNumberList(metrics_json, "bytes_read_percent_per_file",
                   metrics.mutable_branches()->mutable_bytes_read_percent_per_file());
  }
  FillWorkflowReport(metrics, *measurement.mutable_report());

  if (const Value* tracking = Find(metrics_json, "tracking_data");
      tracking != nullptr && tracking->has_struct_value()) {
    absl::StatusOr<v1::TrackingData> data =
        ReadTracking(tracking->struct_value(), options.naive_time_zone, metrics_source, &left_out);
    if (!data.ok())
      return absl::Status(data.status().code(), absl::StrCat(source, "/", data.status().message()));
    *measurement.mutable_tracking() = *std::move(data);
    metadata.set_backend("dask");
  }
  if (const Value* raw_chunks = Find(metrics_json, "raw_chunk_metrics");
      raw_chunks != nullptr && raw_chunks->has_list_value()) {
    if (absl::Status status = ReadRawChunks(*raw_chunks, metrics_source, measurement, left_out);
        !status.ok()) {
      return status;
    }
  }
  for (std::string& text : left_out) {
    v1::Warning* warning = measurement.add_warnings();
    warning->set_code("input_value_left_out");
    warning->set_message(std::move(text));
  }
  if (absl::Status status = ReadSpans(metrics_json, &measurement); !status.ok()) {
    return absl::Status(status.code(), absl::StrCat(source, "/", status.message()));
  }
  SetStartFromChunks(measurement);
  return measurement;
}

absl::StatusOr<v1::Measurement> LoadLegacyMeasurement(absl::string_view directory,
                                                      const LegacyLoadOptions& options) {
  std::string dir(directory);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!Exists(dir)) return absl::NotFoundError(absl::StrCat(dir, ": no such directory"));
  LegacyMeasurementFiles files;
  absl::StatusOr<std::string> metrics =
      ReadBoundedFile(dir + "/metrics.json", kMaxMetricsJsonBytes, "a legacy metrics.json");
  if (!metrics.ok()) return metrics.status();
  files.metrics_json = *std::move(metrics);
  absl::StatusOr<std::string> times = ReadBoundedFile(
      dir + "/start_end_time.txt", kMaxSmallFileBytes, "a legacy start_end_time.txt");
  if (!times.ok()) return times.status();
  files.start_end_time = *std::move(times);
  for (auto [name, slot] : {std::make_pair("/metadata.json", &files.metadata_json),
                            std::make_pair("/config.json", &files.config_json)}) {
    absl::StatusOr<std::string> text =
        ReadBoundedFile(dir + name, kMaxSmallFileBytes, absl::StrCat("a legacy ", name + 1));
    if (text.ok()) {
      *slot = *std::move(text);
    } else if (!absl::IsNotFound(text.status())) {
      return text.status();
    }
  }
  absl::StatusOr<v1::Measurement> measurement = ParseLegacyMeasurement(files, dir, options);
  if (!measurement.ok()) return measurement.status();
  const size_t slash = dir.rfind('/');
  measurement->mutable_metadata()->set_name(slash == std::string::npos ? dir
                                                                       : dir.substr(slash + 1));
  return measurement;
}

}  // namespace roastcoffea
