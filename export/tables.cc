#include "export/tables.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "aggregation/metric_catalogue.h"
#include "export/display_width.h"
#include "export/span_tables.h"
#include "export/table_parts.h"
#include "export/time_text.h"
#include "export/worker_tables.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using export_internal::ElideMiddle;
using export_internal::ReplaceControlCharacters;
using tables_internal::AsciiBox;
using tables_internal::BoxStyle;
using tables_internal::Bullet;
using tables_internal::ChunkDurationsTable;
using tables_internal::FailedChunksTable;
using tables_internal::FlagIfImpossible;
using tables_internal::kNotReported;
using tables_internal::kNoWorkerTracking;
using tables_internal::NumChunks;
using tables_internal::PadRight;
using tables_internal::Percent;
using tables_internal::RenderColumns;
using tables_internal::SectionStatsTable;
using tables_internal::Table;
using tables_internal::ToTextTable;
using tables_internal::UnicodeBox;
using tables_internal::WithThousandsSeparators;

// The export formats a catalogue row formatter composes.
const CellFormats& ExportCellFormats() {
  static const CellFormats formats = {
      FormatDuration, FormatBytes, Percent,
      [](const v1::AggregatedMetrics& metrics, const std::string& figure, std::string text) {
        return FlagIfImpossible(metrics, figure, std::move(text));
      }};
  return formats;
}

// A catalogue row's value text: its row formatter's, or `format`'s.
std::string RowValueText(const v1::AggregatedMetrics& metrics, const MetricDef& metric,
                         double value) {
  if (metric.row_text != nullptr) return metric.row_text(metrics, value, ExportCellFormats());
  switch (metric.format) {
    case ValueFormat::kDuration:
      return FormatDuration(value);
    case ValueFormat::kThousands:
      return WithThousandsSeparators(static_cast<int64_t>(value));
    case ValueFormat::kRoundedCount:
      return WithThousandsSeparators(static_cast<int64_t>(std::llround(value)));
    case ValueFormat::kBytes:
      return FormatBytes(value);
    case ValueFormat::kPercent:
      return Percent(value);
    case ValueFormat::kOneDecimal:
      break;
  }
  return absl::StrFormat("%.1f %s", value, metric.unit);
}

// The rows the metric catalogue (aggregation/metric_catalogue.h) puts in table `id`, each with
// the line its note adds under it.
void AddCatalogueRows(const v1::AggregatedMetrics& metrics, SummaryTableId id, const BoxStyle& box,
                      Table* table) {
  for (const MetricDef* metric : TableRows(id)) {
    const std::optional<double> value = TableValue(*metric, metrics);
    std::string text;
    if (value.has_value()) {
      text = RowValueText(metrics, *metric, *value);
      if (metric->flag_impossible) text = FlagIfImpossible(metrics, metric->key, std::move(text));
    } else if (const char* unknown =
                   metric->unknown_text != nullptr ? metric->unknown_text(metrics) : nullptr;
               unknown != nullptr) {
      text = unknown;
    } else {
      continue;
    }
    const std::string label = metric->label_from != nullptr ? metric->label_from(metrics)
                              : metric->table_label.empty() ? metric->label
                                                            : metric->table_label;
    table->rows.push_back({metric->bullet ? Bullet(box, label) : label, std::move(text)});
    if (metric->note == nullptr) continue;
    const RowNote note = metric->note(metrics);
    if (!note.label.empty()) {
      table->rows.push_back(
          {absl::StrCat("    ", note.label), ReplaceControlCharacters(note.text)});
    }
  }
}

Table ThroughputTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Throughput Metrics", {}, {}, {}, {}};
  AddCatalogueRows(metrics, SummaryTableId::kThroughput, box, &table);
  return table;
}

// Counts, time per event and memory of the chunks.
Table ChunkTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Chunk Metrics", {}, {}, {}, {}};
  AddCatalogueRows(metrics, SummaryTableId::kChunks, box, &table);
  return table;
}

Table EventTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Event Processing Metrics", {}, {}, {}, {}};
  AddCatalogueRows(metrics, SummaryTableId::kEvents, box, &table);
  return table;
}

// The first table: measured CPU against the cores the workers had (aggregation/cpu_metrics.h).
Table CpuTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"CPU Efficiency", {}, {}, {}, {}};
  if (!metrics.has_cpu()) {
    // Written by a build before measured CPU was aggregated: say so rather than "not measured".
    table.rows.push_back({"CPU Efficiency", "N/A (not in measurements of this tool version)"});
    return table;
  }
  AddCatalogueRows(metrics, SummaryTableId::kCpu, box, &table);
  return table;
}

// Where the chunks' wall time went (aggregation/cpu_metrics.h), as columns: time and share.
Table ChunkTimeSplitTable(const v1::CpuMetrics& cpu) {
  Table table;
  if (!cpu.has_chunk_wall_seconds() || cpu.chunk_wall_seconds() <= 0 ||
      !cpu.has_chunk_cpu_seconds()) {
    return table;
  }
  const double wall = cpu.chunk_wall_seconds();
  table.title = "Chunk Time Split";
  table.header = {"Chunk wall time", "Time", "Share"};
  table.right_aligned = {false, true, true};
  const auto add = [&](absl::string_view label, double seconds) {
    table.cells.push_back({std::string(label), FormatDuration(seconds), Percent(seconds / wall)});
  };
  add("On CPU", cpu.chunk_cpu_seconds());
  if (cpu.has_chunk_run_queue_wait_seconds()) {
    add("Waiting for a CPU (run queue)", cpu.chunk_run_queue_wait_seconds());
    add("Blocked (I/O, locks, sleep)", cpu.chunk_blocked_seconds());
  } else {
    add("Off CPU (waiting or blocked)", std::max(0.0, wall - cpu.chunk_cpu_seconds()));
  }
  add("Total", wall);
  return table;
}

Table ResourceTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Resource Utilization", {}, {}, {}, {}};
  // The original's speedup_factor and core_efficiency: how busy the workers were, not how much
  // CPU they got. CPU Efficiency above is the CPU figure.
  AddCatalogueRows(metrics, SummaryTableId::kResources, box, &table);
  return table;
}

Table TimingTable(const v1::AggregatedMetrics& metrics, const BoxStyle& box) {
  Table table{"Timing Breakdown", {}, {}, {}, {}};
  // Summed Chunk Wall Time is Coffea's processtime: never shown under a CPU label.
  AddCatalogueRows(metrics, SummaryTableId::kTiming, box, &table);
  return table;
}

// "Fine Metrics (from Dask Spans)": the original's rows, in its order and with its conditions.
// Engines that do not split thread time into CPU and the rest (Dask's task stream before
// spans, TaskVine) report other activities: their largest time totals, per task prefix.
Table ActivityTable(const v1::FineMetricsSummary& fine) {
  Table table{"Fine Metrics (activities)", {}, {}, {}, {}};
  std::vector<const v1::ActivityTotal*> totals;
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.unit() == "seconds" && total.value() > 0.0) totals.push_back(&total);
  }
  std::sort(totals.begin(), totals.end(), [](const auto* a, const auto* b) {
    return a->value() != b->value() ? a->value() > b->value()
                                    : std::tie(a->task_prefix(), a->activity()) <
                                          std::tie(b->task_prefix(), b->activity());
  });
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < totals.size() && i < kShown; ++i) {
    table.rows.push_back({absl::StrCat(totals[i]->task_prefix(), ": ", totals[i]->activity()),
                          FormatDuration(totals[i]->value())});
  }
  if (totals.size() > kShown) {
    table.rows.push_back({absl::StrCat("(", totals.size() - kShown, " more)"), ""});
  }
  return table;
}

// Where the thread-time split comes from, for the fine-metrics table's title.
std::string FineTitle(absl::string_view backend) {
  if (backend == "threadpool") return "Thread Time Split (worker threads' CPU clocks)";
  // The collect window's span; the workload's own spans are a breakdown of it.
  if (backend == "dask") return "Fine Metrics (Dask: collect window)";
  if (backend.empty()) return "Fine Metrics";
  return absl::StrCat("Fine Metrics (", backend, ")");
}

Table FineTable(const v1::AggregatedMetrics& metrics, absl::string_view backend,
                const BoxStyle& box) {
  Table table{FineTitle(backend), {}, {}, {}, {}};
  // Off-CPU time is I/O only where it was split: the thread pool splits off the run-queue wait
  // (schedstat); Dask's thread-noncpu also holds run-queue, GIL and lock waits.
  AddCatalogueRows(metrics, SummaryTableId::kThreadTimeSplit, box, &table);
  return table;
}

// `text` broken at spaces into lines of at most `width` columns (a longer word stays whole).
std::vector<std::string> Wrap(absl::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && DisplayWidth(line) + 1 + DisplayWidth(word) > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// The header; WARNING lines wrapped to `max_width` columns (0: not wrapped).
std::string RunHeader(const v1::Measurement& measurement, size_t max_width) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  std::string out;
  const auto line = [&](absl::string_view label, absl::string_view value) {
    if (!value.empty()) absl::StrAppend(&out, label, ": ", ReplaceControlCharacters(value), "\n");
  };
  line("Measurement", metadata.name());
  line("Backend", metadata.engine_version().empty()
                      ? metadata.backend()
                      : absl::StrCat(metadata.backend(), " (", metadata.engine_version(), ")"));
  line("Host", metadata.host());
  if (metadata.has_start_time()) line("Started", FormatUtcTimestamp(metadata.start_time()));
  const double elapsed = metadata.elapsed_seconds() > 0.0
                             ? metadata.elapsed_seconds()
                             : measurement.metrics().workflow().elapsed_time_seconds();
  line("Elapsed", FormatDuration(elapsed));
  if (metadata.has_host_facts()) line("Machine", DescribeHost(metadata.host_facts()));
  if (metadata.has_analysis_build()) {
    line("Measured code", DescribeBuild(metadata.analysis_build()));
  } else if (metadata.has_tool_build()) {
    line("collect build", DescribeBuild(metadata.tool_build()));
  }
  // Wrapped under its label, so a long warning does not run past the width.
  const auto warn = [&](const std::string& message) {
    const std::string label = "WARNING: ";
    const size_t width = max_width > label.size() + 20 ? max_width - label.size() : 0;
    bool first = true;
    for (const std::string& text :
         width > 0 ? Wrap(ReplaceControlCharacters(message), width)
                   : std::vector<std::string>{ReplaceControlCharacters(message)}) {
      absl::StrAppend(&out, first ? label : std::string(label.size(), ' '), text, "\n");
      first = false;
    }
  };
  for (const v1::Warning& warning : measurement.warnings()) warn(warning.message());
  for (const v1::ImpossibleFigure& figure : measurement.metrics().impossible_figures()) {
    warn(figure.message());
  }
  return out;
}

}  // namespace

std::string DescribeHost(const v1::HostFacts& host) {
  std::string out = absl::StrFormat("%d online CPUs", host.online_cpus());
  if (host.usable_cpus() > 0 && host.usable_cpus() != host.online_cpus()) {
    absl::StrAppendFormat(&out, " (%g usable)", host.usable_cpus());
  }
  if (!host.cpu_model().empty()) absl::StrAppend(&out, ", ", host.cpu_model());
  if (host.has_load_average_1m_start() || host.has_load_average_1m_end()) {
    absl::StrAppend(
        &out, ", load ",
        host.has_load_average_1m_start() ? absl::StrFormat("%.2f", host.load_average_1m_start())
                                         : std::string("?"),
        " -> ",
        host.has_load_average_1m_end() ? absl::StrFormat("%.2f", host.load_average_1m_end())
                                       : std::string("?"));
  }
  if (host.has_steal_fraction()) {
    absl::StrAppend(&out, ", steal ", Percent(host.steal_fraction()));
  }
  return out;
}

std::string DescribeBuild(const v1::BuildInfo& build) {
  std::string out = build.build_mode().empty() ? std::string("unknown mode") : build.build_mode();
  if (!build.compiler().empty()) absl::StrAppend(&out, ", ", build.compiler());
  if (!build.optimized()) absl::StrAppend(&out, " (NOT optimised)");
  return out;
}

bool UseUnicodeTables() { return isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr; }

namespace {

std::vector<Table> AllTables(const v1::Measurement& measurement, const TableOptions& options) {
  const BoxStyle& box = options.unicode ? UnicodeBox() : AsciiBox();
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  std::vector<Table> tables = {CpuTable(metrics, box)};
  if (Table split = ChunkTimeSplitTable(metrics.cpu()); !split.title.empty()) {
    tables.push_back(std::move(split));
  }
  tables.push_back(ThroughputTable(metrics, box));
  tables.push_back(EventTable(metrics, box));
  tables.push_back(ResourceTable(metrics, box));
  tables.push_back(TimingTable(metrics, box));
  if (metrics.has_fine()) {
    if (HasThreadTimeSplit(metrics.fine())) {
      tables.push_back(FineTable(metrics, measurement.metadata().backend(), box));
    } else if (Table activities = ActivityTable(metrics.fine()); !activities.rows.empty()) {
      tables.push_back(std::move(activities));
    }
  }
  if (NumChunks(metrics) > 0) tables.push_back(ChunkTable(metrics, box));
  if (metrics.has_chunks()) {
    if (Table durations = ChunkDurationsTable(metrics.chunks()); !durations.title.empty()) {
      tables.push_back(std::move(durations));
    }
  }
  if (metrics.has_chunks() && metrics.chunks().section_stats_size() > 0 &&
      options.top_sections > 0) {
    tables.push_back(SectionStatsTable(metrics.chunks(), options.top_sections));
  }
  if (metrics.has_chunks() && metrics.chunks().failed_chunks_size() > 0) {
    tables.push_back(FailedChunksTable(metrics.chunks(), options.max_failed_chunks));
  }
  return tables;
}

size_t MaxWidth(const TableOptions& options) {
  if (options.width < 0) return 0;
  return static_cast<size_t>(options.width > 0 ? options.width : TerminalWidth());
}

}  // namespace

int TerminalWidth() {
  constexpr int kDefaultWidth = 100;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    int value = 0;
    if (absl::SimpleAtoi(columns, &value) && value >= 40) return value;
  }
  struct winsize size;
  if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col >= 40) {
    return size.ws_col;
  }
  return kDefaultWidth;
}

absl::string_view SeverityLabel(v1::Finding::Severity severity) {
  switch (severity) {
    case v1::Finding::SEVERITY_CRITICAL:
      return "CRITICAL";
    case v1::Finding::SEVERITY_WARNING:
      return "WARNING";
    case v1::Finding::SEVERITY_INFO:
      return "INFO";
    default:
      return "NOTE";
  }
}

// Rules that share a reason are listed together ("a, b (no task timeline)"), in rule order, so
// a reason common to eight rules is read once.
std::string NotEvaluatedRules(const v1::AggregatedMetrics& metrics) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (const v1::RuleEvaluation& e : metrics.rule_evaluations()) {
    if (e.evaluated()) continue;
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& group) { return group.first == e.reason(); });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {e.reason(), {}});
    it->second.push_back(e.code());
  }
  std::vector<std::string> parts;
  for (const auto& [reason, codes] : by_reason) {
    const std::string rules = absl::StrJoin(codes, ", ");
    parts.push_back(reason.empty() ? rules : absl::StrCat(rules, " (", reason, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

std::string RuleStatesLine(const v1::AggregatedMetrics& metrics) {
  if (metrics.rule_evaluations_size() == 0) {
    return metrics.findings_size() == 0
               ? "Findings: none (no rule fired; which rules could be checked is unknown: the "
                 "measurement was written before rule states were saved)"
               : "Rule states unknown: the measurement was written before they were saved.";
  }
  int checked = 0;
  for (const v1::RuleEvaluation& e : metrics.rule_evaluations()) checked += e.evaluated() ? 1 : 0;
  const std::string not_evaluated = NotEvaluatedRules(metrics);
  if (metrics.findings_size() == 0) {
    std::string line = checked == 0 ? std::string("Findings: none, but no rule could be checked")
                                    : absl::StrCat("Findings: none of the ", checked, " rule",
                                                   checked == 1 ? "" : "s", " checked fired");
    if (!not_evaluated.empty()) absl::StrAppend(&line, "; not evaluated: ", not_evaluated);
    return line;
  }
  return not_evaluated.empty() ? "" : absl::StrCat("Not evaluated: ", not_evaluated, ".");
}

std::string FormatFindings(const v1::Measurement& measurement, const TableOptions& options) {
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  if (!metrics.findings_evaluated()) {
    return "Findings: not evaluated (written by the original tool or a collect without "
           "findings)\n";
  }
  const size_t max_width = MaxWidth(options);
  if (metrics.findings_size() == 0) {
    // Wrapped with the continuation indent of "Findings: ".
    constexpr size_t kNoneIndent = 10;
    std::string out;
    bool first = true;
    for (const std::string& line :
         Wrap(ReplaceControlCharacters(RuleStatesLine(metrics)),
              max_width > kNoneIndent + 20 ? max_width - kNoneIndent : 70)) {
      absl::StrAppend(&out, first ? "" : std::string(kNoneIndent, ' '), line, "\n");
      first = false;
    }
    return out;
  }
  // "  CRITICAL  title", then evidence and "Try: ..." under the title, wrapped to the width.
  constexpr size_t kIndent = 12;
  const size_t text_width = max_width > kIndent + 20 ? max_width - kIndent : 60;
  std::string out = absl::StrCat("Findings (", metrics.findings_size(), ")\n");
  for (const v1::Finding& finding : metrics.findings()) {
    const std::string label = absl::StrCat("  ", SeverityLabel(finding.severity()));
    const auto block = [&](absl::string_view text, bool first) {
      bool first_line = first;
      for (const std::string& line : Wrap(ReplaceControlCharacters(text), text_width)) {
        absl::StrAppend(&out, first_line ? PadRight(label, kIndent) : std::string(kIndent, ' '),
                        line, "\n");
        first_line = false;
      }
    };
    block(finding.title(), true);
    if (!finding.evidence().empty()) block(finding.evidence(), false);
    if (!finding.suggestion().empty()) block(absl::StrCat("Try: ", finding.suggestion()), false);
  }
  if (const std::string states = RuleStatesLine(metrics); !states.empty()) {
    for (const std::string& line : Wrap(ReplaceControlCharacters(states), max_width - 2)) {
      absl::StrAppend(&out, "  ", line, "\n");
    }
  }
  return out;
}

std::string FormatRunHeader(const v1::Measurement& measurement) {
  return RunHeader(measurement, 0);
}

std::vector<SummaryTable> BuildSummaryTables(const v1::Measurement& measurement,
                                             const TableOptions& options) {
  std::vector<SummaryTable> out;
  for (Table& table : AllTables(measurement, options)) out.push_back(ToTextTable(std::move(table)));
  return out;
}

std::string FormatSummaryTables(const v1::Measurement& measurement, const TableOptions& options) {
  const BoxStyle& box = options.unicode ? UnicodeBox() : AsciiBox();
  std::string out = absl::StrCat(RunHeader(measurement, MaxWidth(options)), "\n",
                                 FormatFindings(measurement, options));
  for (const SummaryTable& table : BuildSummaryTables(measurement, options)) {
    absl::StrAppend(&out, "\n", RenderColumns(table, box, MaxWidth(options)));
  }
  for (const SummaryTable& table : BuildSpanTables(measurement)) {
    absl::StrAppend(&out, "\n", RenderColumns(table, box, MaxWidth(options)));
  }
  for (const SummaryTable& table : BuildWorkerTables(measurement)) {
    absl::StrAppend(&out, "\n", RenderColumns(table, box, MaxWidth(options)));
  }
  return out;
}

std::string FormatTextTable(const TextTable& table, const TableOptions& options) {
  return RenderColumns(table, options.unicode ? UnicodeBox() : AsciiBox(), MaxWidth(options));
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return "N/A";
  if (seconds == 0.0) return "0 s";
  // Three significant digits below a minute, in the unit that keeps the number in [1, 1000):
  // "142 ms", "1.23 s", "12.3 s" (one decimal of seconds was a 33 % error at 149 ms).
  const double magnitude = std::fabs(seconds);
  const auto three_digits = [](double value, absl::string_view unit) {
    const double m = std::fabs(value);
    // One constant format per branch: absl::StrFormat checks its format at compile time.
    if (m >= 99.95) return absl::StrFormat("%.0f %s", value, unit);
    if (m >= 9.995) return absl::StrFormat("%.1f %s", value, unit);
    return absl::StrFormat("%.2f %s", value, unit);
  };
  // Rounding to three digits may carry into the next unit (999.96 µs is "1.00 ms").
  if (magnitude < 0.9995e-6) return three_digits(seconds * 1e9, "ns");
  if (magnitude < 0.9995e-3) return three_digits(seconds * 1e6, "\u00B5s");
  if (magnitude < 0.9995) return three_digits(seconds * 1e3, "ms");
  if (seconds < 60.0) return three_digits(seconds, "s");
  // Whole units by truncation, as the original's int() does; computed in floating point so
  // that huge values cannot overflow an integer.
  const double whole_seconds = std::floor(seconds);
  if (seconds < 3600.0) {
    return absl::StrFormat("%.0fm %.0fs", std::floor(whole_seconds / 60.0),
                           std::fmod(whole_seconds, 60.0));
  }
  return absl::StrFormat("%.0fh %.0fm %.0fs", std::floor(whole_seconds / 3600.0),
                         std::floor(std::fmod(whole_seconds, 3600.0) / 60.0),
                         std::fmod(whole_seconds, 60.0));
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "N/A";
  static constexpr absl::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  constexpr size_t kLastUnit = sizeof(kUnits) / sizeof(kUnits[0]) - 1;
  size_t unit = 0;
  // 1023.995 would print as "1024.00": move to the next unit instead.
  while (unit < kLastUnit && std::fabs(bytes) >= 1023.995) {
    bytes /= 1024.0;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", bytes, kUnits[unit]);
}

}  // namespace roastcoffea
