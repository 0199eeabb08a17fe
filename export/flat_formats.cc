#include "export/flat_formats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "aggregation/flat_metrics.h"
#include "aggregation/metric_catalogue.h"
#include "export/display_width.h"
#include "export/span_tables.h"
#include "export/spill_file.h"
#include "export/tables.h"
#include "export/worker_tables.h"
#include "io/json_escape.h"

namespace roastcoffea {
namespace {

// Text for `out` written in pieces of about 64 KiB: the flat metrics of a million chunks are
// hundreds of MB, never held whole.
class FlatOutput {
 public:
  explicit FlatOutput(std::ostream& out) : out_(out) {}
  ~FlatOutput() { out_ << buffer_; }
  void Append(absl::string_view text) {
    buffer_.append(text.data(), text.size());
    MaybeFlush();
  }
  std::string* buffer() { return &buffer_; }
  void MaybeFlush() {
    if (buffer_.size() < (size_t{64} << 10)) return;
    out_ << buffer_;
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  std::string buffer_;
};

absl::string_view KindName(v1::SectionRecord::Kind kind) {
  switch (kind) {
    case v1::SectionRecord::KIND_MEMORY:
      return "memory";
    case v1::SectionRecord::KIND_BYTES:
      return "bytes";
    default:
      return "time";
  }
}

// 15 significant digits: exact for every integer count below 10^15, and round-trips what
// people read. Absent and non-finite values append `unknown`. to_chars with a precision is
// printf's "%.15g", byte for byte, at a fifth of its cost (3 x 10^6 values for 10^6 chunks).
void AppendNumber(const std::optional<double>& value, absl::string_view unknown, std::string* out) {
  if (!value.has_value() || !std::isfinite(*value)) {
    out->append(unknown.data(), unknown.size());
    return;
  }
  char text[64];
  const std::to_chars_result end =
      std::to_chars(text, text + sizeof(text), *value, std::chars_format::general, 15);
  out->append(text, end.ptr);
}

std::optional<std::string> NumberText(const std::optional<double>& value) {
  if (!value.has_value() || !std::isfinite(*value)) return std::nullopt;
  std::string text;
  AppendNumber(value, "", &text);
  return text;
}

// Both formats usually go to a terminal: control characters (ESC, BEL, CR, ...) from a dataset
// name or a host must not act on it, so they become '?' as in the tables.
std::string CsvField(absl::string_view raw) {
  const std::string text = export_internal::ReplaceControlCharacters(raw);
  if (text.find_first_of(",\"") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// Printable ASCII without ',' or '"' (every key of a chunk record): a CSV field as it is.
bool IsPlainCsvField(absl::string_view raw) {
  return std::all_of(raw.begin(), raw.end(),
                     [](char c) { return c >= 0x20 && c < 0x7F && c != ',' && c != '"'; });
}

// CsvField appended to `out`: a plain field as it is, without the copies.
void AppendCsvField(absl::string_view raw, std::string* out) {
  if (IsPlainCsvField(raw)) {
    out->append(raw.data(), raw.size());
  } else {
    out->append(CsvField(raw));
  }
}

std::string MarkdownCell(absl::string_view raw) {
  const std::string text = export_internal::ReplaceControlCharacters(
      absl::StrReplaceAll(raw, {{"\n", " "}, {"\r", " "}}));
  return absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"|", "\\|"}});
}

// Per-name keys of our chunk statistics: per-dataset duration percentiles, section statistics.
void AppendChunkStatFamilies(const v1::ChunkMetrics& chunks, std::vector<FlatMetric>* out) {
  const auto add = [&](std::string key, std::optional<double> value, std::string unit) {
    out->push_back({std::move(key), value, std::move(unit)});
  };
  for (const v1::DatasetChunkMetrics& dataset : chunks.per_dataset()) {
    const v1::DistributionStats& durations = dataset.duration_distribution_seconds();
    if (!durations.has_percentiles()) continue;
    const std::string prefix = absl::StrCat("per_dataset.", dataset.dataset(), ".");
    add(absl::StrCat(prefix, "duration_p50"), durations.percentiles().p50(), "s");
    add(absl::StrCat(prefix, "duration_p95"), durations.percentiles().p95(), "s");
  }
  for (const v1::SectionStats& section : chunks.section_stats()) {
    const absl::string_view kind = KindName(section.kind());
    const std::string unit = kind == "time" ? "s" : "bytes";
    const std::string prefix = absl::StrCat("section_stats.", section.name(), ".", kind, ".");
    add(absl::StrCat(prefix, "total"), section.total(), unit);
    add(absl::StrCat(prefix, "mean"), section.values().mean(), unit);
    if (section.values().has_percentiles()) {
      add(absl::StrCat(prefix, "p50"), section.values().percentiles().p50(), unit);
      add(absl::StrCat(prefix, "p95"), section.values().percentiles().p95(), unit);
    }
    if (kind == "time") {
      add(absl::StrCat(prefix, "share_of_chunk_time"), section.share_of_chunk_time_fraction(),
          "fraction");
    }
  }
}

}  // namespace

absl::StatusOr<FlatFormat> ParseFlatFormat(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "csv") return FlatFormat::kCsv;
  if (lower == "json") return FlatFormat::kJson;
  if (lower == "markdown" || lower == "md") return FlatFormat::kMarkdown;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be table, csv, json or markdown, got '", name, "'"));
}

std::vector<FlatMetric> AdditionalFlatMetrics(const v1::AggregatedMetrics& metrics) {
  std::vector<FlatMetric> out;
  AppendFlatPart(metrics, FlatPart::kAddition, &out);
  // Figures the invariant check found impossible (aggregation/invariants.h), by their key.
  for (const v1::ImpossibleFigure& figure : metrics.impossible_figures()) {
    out.push_back({absl::StrCat("impossible.", figure.figure()), figure.value(),
                   figure.code() == "invalid_duration" ? "s" : "fraction"});
  }
  if (!metrics.has_chunks()) return out;
  AppendFlatPart(metrics, FlatPart::kChunkAddition, &out);
  AppendChunkStatFamilies(metrics.chunks(), &out);
  return out;
}

std::vector<FlatMetric> HeadlineFlatMetrics(const v1::AggregatedMetrics& metrics) {
  std::vector<FlatMetric> out;
  AppendFlatPart(metrics, FlatPart::kHeadline, &out);
  return out;
}

std::vector<FlatMetric> AllFlatMetrics(const v1::AggregatedMetrics& metrics) {
  std::vector<FlatMetric> all = HeadlineFlatMetrics(metrics);
  for (FlatMetric& metric : ToFlatMetrics(metrics)) all.push_back(std::move(metric));
  for (FlatMetric& metric : AdditionalFlatMetrics(metrics)) all.push_back(std::move(metric));
  return all;
}

namespace {

std::string SeverityName(v1::Finding::Severity severity) {
  return absl::AsciiStrToLower(SeverityLabel(severity));
}

// "fired", "clear" (checked, did not fire) or "not_evaluated".
absl::string_view RuleState(const v1::RuleEvaluation& rule) {
  if (!rule.evaluated()) return "not_evaluated";
  return rule.fired() ? "fired" : "clear";
}

// The CSV's header, findings and rules: everything before the flat metrics' rows.
std::string CsvHead(const v1::Measurement& measurement) {
  std::string out = "key,value,unit\n";
  // Findings first, as everywhere: the severity, then the numbers that support it.
  for (const v1::Finding& finding : measurement.metrics().findings()) {
    const std::string key = absl::StrCat("finding.", finding.code());
    absl::StrAppend(&out, CsvField(key), ",", SeverityName(finding.severity()), ",severity\n");
    for (const v1::FindingNumber& number : finding.numbers()) {
      absl::StrAppend(&out, CsvField(absl::StrCat(key, ".", number.key())), ",",
                      NumberText(number.value()).value_or(""), ",", CsvField(number.unit()), "\n");
    }
  }
  // Then each rule's state (fired, clear, not_evaluated), and why a rule was not evaluated.
  for (const v1::RuleEvaluation& rule : measurement.metrics().rule_evaluations()) {
    const std::string key = absl::StrCat("rule.", rule.code());
    absl::StrAppend(&out, CsvField(key), ",", RuleState(rule), ",state\n");
    if (!rule.evaluated()) {
      absl::StrAppend(&out, CsvField(absl::StrCat(key, ".reason")), ",", CsvField(rule.reason()),
                      ",text\n");
    }
  }
  return out;
}

void AppendCsvRow(const FlatMetric& metric, std::string* out) {
  AppendCsvField(metric.key, out);
  out->push_back(',');
  AppendNumber(metric.value, "", out);
  out->push_back(',');
  AppendCsvField(metric.unit, out);
  out->push_back('\n');
}

std::string JsonNumber(const std::optional<double>& value) {
  return NumberText(value).value_or("null");
}

// The JSON up to the metrics' opening brace: name, findings, rules, warnings.
std::string JsonHead(const v1::Measurement& measurement) {
  const v1::AggregatedMetrics& aggregated = measurement.metrics();
  std::string out = absl::StrCat(
      "{\n  \"measurement\": ", JsonQuote(measurement.metadata().name()),
      ",\n  \"findings_evaluated\": ", aggregated.findings_evaluated() ? "true" : "false",
      ",\n  \"findings\": [");
  for (int i = 0; i < aggregated.findings_size(); ++i) {
    const v1::Finding& f = aggregated.findings(i);
    absl::StrAppend(
        &out, i == 0 ? "\n" : ",\n", "    {\"severity\": ", JsonQuote(SeverityName(f.severity())),
        ", \"code\": ", JsonQuote(f.code()), ", \"title\": ", JsonQuote(f.title()),
        ",\n     \"evidence\": ", JsonQuote(f.evidence()),
        ",\n     \"suggestion\": ", JsonQuote(f.suggestion()), ",\n     \"numbers\": {");
    for (int n = 0; n < f.numbers_size(); ++n) {
      absl::StrAppend(&out, n == 0 ? "" : ", ", JsonQuote(f.numbers(n).key()),
                      ": {\"value\": ", JsonNumber(f.numbers(n).value()),
                      ", \"unit\": ", JsonQuote(f.numbers(n).unit()), "}");
    }
    out += "}}";
  }
  // Each rule's state; an empty list: a measurement written before rule states were saved.
  absl::StrAppend(&out, aggregated.findings_size() == 0 ? "]" : "\n  ]", ",\n  \"rules\": [");
  for (int i = 0; i < aggregated.rule_evaluations_size(); ++i) {
    const v1::RuleEvaluation& rule = aggregated.rule_evaluations(i);
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"code\": ", JsonQuote(rule.code()),
                    ", \"state\": ", JsonQuote(RuleState(rule)),
                    ", \"reason\": ", JsonQuote(rule.reason()), "}");
  }
  absl::StrAppend(&out, aggregated.rule_evaluations_size() == 0 ? "]" : "\n  ]",
                  ",\n  \"warnings\": [");
  for (int i = 0; i < measurement.warnings_size(); ++i) {
    const v1::Warning& warning = measurement.warnings(i);
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"code\": ", JsonQuote(warning.code()),
                    ", \"message\": ", JsonQuote(warning.message()), "}");
  }
  absl::StrAppend(&out, measurement.warnings_size() == 0 ? "]" : "\n  ]", ",\n  \"metrics\": {");
  return out;
}

// The human outputs for a pull-request comment: the header, the findings and every summary
// table, as GitHub-flavoured Markdown tables (numbers right-aligned).
std::string Markdown(const v1::Measurement& measurement) {
  std::string out = absl::StrCat(
      "### roastcoffea: ",
      MarkdownCell(measurement.metadata().name().empty() ? "measurement"
                                                         : measurement.metadata().name()),
      "\n\n");
  for (absl::string_view line :
       absl::StrSplit(FormatRunHeader(measurement), '\n', absl::SkipEmpty())) {
    const size_t colon = line.find(": ");
    if (colon == absl::string_view::npos) continue;
    absl::StrAppend(&out, "- **", MarkdownCell(line.substr(0, colon)),
                    "**: ", MarkdownCell(line.substr(colon + 2)), "\n");
  }
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  out += "\n#### Findings\n\n";
  if (metrics.findings_size() == 0) {
    TableOptions options;
    options.width = -1;
    // One line: the block's continuation indent means nothing in Markdown.
    std::string text = FormatFindings(measurement, options);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    absl::StrAppend(&out, MarkdownCell(absl::StrReplaceAll(text, {{"\n          ", " "}})), "\n");
  }
  for (const v1::Finding& f : metrics.findings()) {
    absl::StrAppend(&out, "- **", SeverityLabel(f.severity()), "** ", MarkdownCell(f.title()),
                    "<br>", MarkdownCell(f.evidence()), "<br>*Try:* ", MarkdownCell(f.suggestion()),
                    "\n");
  }
  if (metrics.findings_size() > 0) {
    if (const std::string states = RuleStatesLine(metrics); !states.empty()) {
      absl::StrAppend(&out, "\n", MarkdownCell(states), "\n");
    }
  }
  TableOptions options;
  options.unicode = true;
  std::vector<SummaryTable> tables = BuildSummaryTables(measurement, options);
  for (SummaryTable& table : BuildSpanTables(measurement)) tables.push_back(std::move(table));
  for (SummaryTable& table : BuildWorkerTables(measurement)) tables.push_back(std::move(table));
  for (const SummaryTable& table : tables) {
    absl::StrAppend(&out, "\n#### ", MarkdownCell(table.title), "\n\n|");
    const bool key_value = table.header.size() == 2 && table.header[0] == "Metric";
    for (const std::string& column : table.header) absl::StrAppend(&out, " ", column, " |");
    out += "\n|";
    for (size_t c = 0; c < table.header.size(); ++c) {
      const bool right =
          key_value ? c == 1 : c < table.right_aligned.size() && table.right_aligned[c];
      out += right ? " ---: |" : " --- |";
    }
    out += "\n";
    for (const std::vector<std::string>& row : table.rows) {
      out += "|";
      for (size_t c = 0; c < table.header.size(); ++c) {
        // Leading spaces would be lost: indented rows keep their bullet only.
        absl::string_view cell = c < row.size() ? absl::string_view(row[c]) : "";
        while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
        absl::StrAppend(&out, " ", MarkdownCell(cell), " |");
      }
      out += "\n";
    }
  }
  return out;
}

// Every flat metric of the outputs in their order (AllFlatMetrics, then the spans' and the
// workers'), one at a time, but the original's chunk_info family (three per chunk record)
// handed to `chunk_info` as a whole.
void ForEachOutputFlatMetric(const v1::Measurement& measurement, const FlatFileNames& file_names,
                             absl::FunctionRef<void(FlatMetric&&)> sink,
                             absl::FunctionRef<void(const ChunkInfoKeys&)> chunk_info) {
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  for (FlatMetric& metric : HeadlineFlatMetrics(metrics)) sink(std::move(metric));
  ForEachFlatMetric(metrics, file_names, sink, chunk_info);
  for (FlatMetric& metric : AdditionalFlatMetrics(metrics)) sink(std::move(metric));
  for (FlatMetric& metric : SpanFlatMetrics(measurement)) sink(std::move(metric));
  for (FlatMetric& metric : WorkerFlatMetrics(measurement)) sink(std::move(metric));
}

// The CSV rows of the chunk_info family: each entry's prefix made once.
void AppendCsvChunkInfoRows(const ChunkInfoKeys& keys, FlatOutput& output) {
  std::string prefix;
  for (size_t entry = 0; entry < keys.size(); ++entry) {
    prefix.clear();
    keys.AppendPrefix(entry, &prefix);
    const bool plain = IsPlainCsvField(prefix);
    std::string* out = output.buffer();
    for (int figure = 0; figure < ChunkInfoKeys::kFigures; ++figure) {
      const absl::string_view name = ChunkInfoKeys::FigureName(figure);
      if (plain) {
        out->append(prefix).append(name.data(), name.size());
      } else {
        AppendCsvField(absl::StrCat(prefix, name), out);
      }
      out->push_back(',');
      AppendNumber(keys.Value(entry, figure), "", out);
      out->push_back(',');
      AppendCsvField(ChunkInfoKeys::FigureUnit(figure), out);
      out->push_back('\n');
    }
    output.MaybeFlush();
  }
}

// 32-bit values sorted in two counting passes of 16 bits (`scratch` is as large): ~20 ms for
// 3 x 10^6 fingerprints, a tenth of std::sort.
void RadixSort(std::vector<uint32_t>& values, std::vector<uint32_t>& scratch) {
  scratch.resize(values.size());
  for (int shift : {0, 16}) {
    std::vector<size_t> start(size_t{1} << 16, 0);
    for (uint32_t v : values) ++start[(v >> shift) & 0xFFFF];
    size_t sum = 0;
    for (size_t& s : start) sum += std::exchange(s, sum);
    for (uint32_t v : values) scratch[start[(v >> shift) & 0xFFFF]++] = v;
    values.swap(scratch);
  }
}

// The fingerprints that occur more than once.
absl::flat_hash_set<uint32_t> RepeatedPrints(std::vector<uint32_t> prints) {
  std::vector<uint32_t> scratch;
  RadixSort(prints, scratch);
  absl::flat_hash_set<uint32_t> repeated;
  for (size_t i = 1; i < prints.size(); ++i) {
    if (prints[i] == prints[i - 1]) repeated.insert(prints[i]);
  }
  return repeated;
}

// The flat keys made unique as they come: a key seen before (two datasets whose names flatten
// alike, a chunk record twice) gets "#2", "#3", ... Only the keys whose 32-bit fingerprint
// repeats (the true repeats and the fingerprint collisions) are counted, exactly. The chunk_info
// family's keys are fingerprinted and counted by their entry's ChunkInfoKeys::Identity, never
// made as text: no other key starts like theirs (flat_metrics.h), so none is the same.
class UniqueKeys {
 public:
  // One pass over the keys: their fingerprints, sorted, give the repeated ones (4 bytes per
  // key in a vector, not a hash set of them).
  UniqueKeys(const v1::Measurement& measurement, const FlatFileNames& file_names) {
    std::vector<uint32_t> prints, chunk_prints;
    ForEachOutputFlatMetric(
        measurement, file_names,
        [&](FlatMetric&& metric) { prints.push_back(Fingerprint(metric.key)); },
        [&](const ChunkInfoKeys& keys) {
          chunk_prints.reserve(keys.size());
          for (size_t entry = 0; entry < keys.size(); ++entry) {
            chunk_prints.push_back(Fingerprint(keys.IdentityOf(entry)));
          }
        });
    repeated_ = RepeatedPrints(std::move(prints));
    repeated_entries_ = RepeatedPrints(std::move(chunk_prints));
  }

  // Starts the keys over (for the "order" list after "metrics").
  void Restart() {
    uses_.clear();
    entry_uses_.clear();
  }

  // `key`, or `key#n` for its n-th use.
  std::string Next(std::string key) {
    if (repeated_.empty() || !repeated_.contains(Fingerprint(key))) return key;
    const int use = ++uses_[key];
    return use == 1 ? key : absl::StrCat(key, "#", use);
  }

  // The use (1 for the first) of a chunk_info entry's keys.
  int NextEntryUse(const ChunkInfoKeys::Identity& identity) {
    if (repeated_entries_.empty() || !repeated_entries_.contains(Fingerprint(identity))) return 1;
    return ++entry_uses_[AsTuple(identity)];
  }

 private:
  using IdentityTuple = std::tuple<uint32_t, uint32_t, int64_t, int64_t>;
  static IdentityTuple AsTuple(const ChunkInfoKeys::Identity& identity) {
    return {identity.file, identity.attempt, identity.entry_start, identity.entry_stop};
  }
  static uint32_t Fingerprint(absl::string_view key) {
    return static_cast<uint32_t>(absl::Hash<absl::string_view>{}(key) >> 32);
  }
  static uint32_t Fingerprint(const ChunkInfoKeys::Identity& identity) {
    return static_cast<uint32_t>(absl::Hash<IdentityTuple>{}(AsTuple(identity)) >> 32);
  }

  absl::flat_hash_set<uint32_t> repeated_;
  absl::flat_hash_set<uint32_t> repeated_entries_;
  absl::flat_hash_map<std::string, int> uses_;
  absl::flat_hash_map<IdentityTuple, int> entry_uses_;
};

// Every JSON key of the flat metrics in order, quoted and made unique, to `emit` with its value
// and unit; a chunk_info entry's quoted prefix is made once for its three keys.
void ForEachJsonKey(
    const v1::Measurement& measurement, const FlatFileNames& file_names, UniqueKeys& keys,
    absl::FunctionRef<void(absl::string_view, const std::optional<double>&, absl::string_view)>
        emit) {
  std::string quoted;
  const auto text_key = [&](FlatMetric&& metric) {
    quoted.clear();
    AppendJsonString(keys.Next(std::move(metric.key)), &quoted);
    emit(quoted, metric.value, metric.unit);
  };
  std::string prefix, quoted_prefix;  // reused: a million entries
  ForEachOutputFlatMetric(measurement, file_names, text_key, [&](const ChunkInfoKeys& family) {
    for (size_t entry = 0; entry < family.size(); ++entry) {
      prefix.clear();
      family.AppendPrefix(entry, &prefix);
      const int use = keys.NextEntryUse(family.IdentityOf(entry));
      // The escapes are per byte: the prefix's, then the plain figure name and use.
      quoted_prefix.clear();
      AppendJsonString(prefix, &quoted_prefix);
      quoted_prefix.pop_back();
      for (int figure = 0; figure < ChunkInfoKeys::kFigures; ++figure) {
        quoted.assign(quoted_prefix);
        const absl::string_view name = ChunkInfoKeys::FigureName(figure);
        quoted.append(name.data(), name.size());
        if (use > 1) absl::StrAppend(&quoted, "#", use);
        quoted.push_back('"');
        emit(quoted, family.Value(entry, figure), ChunkInfoKeys::FigureUnit(figure));
      }
    }
  });
}

// The "order" list's keys, made again (when no spill file could hold them), after the first
// `skip` bytes of its text (those a failed copy of the spill file already wrote).
void RemakeOrder(const v1::Measurement& measurement, const FlatFileNames& file_names,
                 UniqueKeys& keys, size_t skip, FlatOutput& output) {
  keys.Restart();
  bool first = true;
  std::string piece;
  ForEachJsonKey(measurement, file_names, keys,
                 [&](absl::string_view quoted, const std::optional<double>&, absl::string_view) {
                   piece.assign(first ? "" : ", ");
                   piece.append(quoted.data(), quoted.size());
                   first = false;
                   const size_t drop = std::min(skip, piece.size());
                   skip -= drop;
                   output.Append(absl::string_view(piece).substr(drop));
                 });
}

// The JSON's "metrics" object and its "order" list. The keys are made twice, not three times:
// once for their fingerprints (UniqueKeys), once to write "metrics" while "order" is set aside
// in a spill file; without one, "order" makes them a third time.
void WriteJsonMetrics(const v1::Measurement& measurement, FlatOutput& output) {
  const FlatFileNames file_names(measurement.metrics());  // once for every pass
  UniqueKeys keys(measurement, file_names);
  SpillFile order;
  std::string order_piece;
  bool first = true;
  ForEachJsonKey(
      measurement, file_names, keys,
      [&](absl::string_view quoted, const std::optional<double>& value, absl::string_view unit) {
        std::string* out = output.buffer();
        out->append(first ? "\n    " : ",\n    ");
        out->append(quoted.data(), quoted.size());
        out->append(": {\"value\": ");
        AppendNumber(value, "null", out);
        out->append(", \"unit\": ");
        AppendJsonString(unit, out);
        out->push_back('}');
        output.MaybeFlush();
        if (order.ok()) {
          order_piece.assign(first ? "" : ", ");
          order_piece.append(quoted.data(), quoted.size());
          order.Append(order_piece);
        }
        first = false;
      });
  output.Append(first ? "}" : "\n  }");
  output.Append(",\n  \"order\": [");
  size_t copied = 0;
  if (!order.CopyTo([&output](absl::string_view piece) { output.Append(piece); }, &copied)) {
    RemakeOrder(measurement, file_names, keys, copied, output);
  }
}

}  // namespace

void WriteFlatMetrics(const v1::Measurement& measurement, FlatFormat format, std::ostream& out) {
  FlatOutput output(out);
  switch (format) {
    case FlatFormat::kCsv:
      output.Append(CsvHead(measurement));
      ForEachOutputFlatMetric(
          measurement, FlatFileNames(measurement.metrics()),
          [&output](FlatMetric&& metric) {
            AppendCsvRow(metric, output.buffer());
            output.MaybeFlush();
          },
          [&output](const ChunkInfoKeys& keys) { AppendCsvChunkInfoRows(keys, output); });
      break;
    case FlatFormat::kJson:
      output.Append(JsonHead(measurement));
      WriteJsonMetrics(measurement, output);
      output.Append("]\n}\n");
      break;
    case FlatFormat::kMarkdown:
      output.Append(Markdown(measurement));
      break;
  }
}

std::string FormatFlatMetrics(const v1::Measurement& measurement, FlatFormat format) {
  std::ostringstream out;
  WriteFlatMetrics(measurement, format, out);
  return std::move(out).str();
}

}  // namespace roastcoffea
