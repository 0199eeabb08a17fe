// collect compare's text: the table, CSV, JSON and Markdown of a ComparisonResult, and the
// sentences (speedups, the Amdahl fit, run notes) shared by them.
#include "export/compare_text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "export/compare.h"
#include "export/display_width.h"
#include "io/json_escape.h"

namespace roastcoffea {
namespace compare_internal {

using export_internal::DisplayWidth;

std::string Number(double value) {
  if (!std::isfinite(value)) return "N/A";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.4g", value);
}

// `items` joined by spaces in lines of at most about 100 columns, the first starting with
// `first`, the others with `indent`; an item is never split.
std::string Wrap(const std::string& first, const std::string& indent,
                 const std::vector<std::string>& items) {
  std::string out;
  std::string line = first;
  bool empty_line = true;
  for (const std::string& item : items) {
    if (!empty_line && DisplayWidth(line) + 1 + DisplayWidth(item) > 100) {
      absl::StrAppend(&out, line, "\n");
      line = indent;
      empty_line = true;
    }
    absl::StrAppend(&line, empty_line && line.empty() ? "" : " ", item);
    empty_line = false;
  }
  absl::StrAppend(&out, line, "\n");
  return out;
}

std::vector<std::string> Words(const std::string& text) { return absl::StrSplit(text, ' '); }

// Machine-readable numbers: 15 significant digits, as the flat formats print them.
std::string Exact(double value) { return absl::StrFormat("%.15g", value); }

std::string NoiseRule(const ComparisonOptions& options) {
  return absl::StrCat(
      "worse than ", Number(options.regression_threshold_percent),
      "% of the baseline and beyond the noise: for run metrics |difference of means| > ",
      Number(kNoiseStandardErrors),
      " combined standard errors of the repeats (a configuration measured once borrows the "
      "other's spread); for per-chunk rows the Mann-Whitney rank test over the chunks, p < ",
      Number(kRankTestAlpha), ". With no repeats on either side ",
      options.threshold_given
          ? "the threshold alone decides (--regression_threshold given)"
          : "run metrics have no noise estimate and are never regressions (marked ?); give "
            "--regression_threshold to gate on the threshold alone");
}

}  // namespace compare_internal

namespace {

using compare_internal::Exact;
using compare_internal::NoiseRule;
using compare_internal::Number;
using compare_internal::Words;
using compare_internal::Wrap;
using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

// A spread or standard error: two significant digits are all it can claim.
std::string Spread(double value) {
  if (!std::isfinite(value)) return "N/A";
  if (std::fabs(value) >= 100) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.2g", value);
}

std::string JsonNumber(std::optional<double> value) {
  return value.has_value() && std::isfinite(*value) ? Exact(*value) : "null";
}

std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\n\r") == absl::string_view::npos) return std::string(text);
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

std::string MarkdownCell(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}, {"\r", " "}});
}

std::string PadRight(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return text + std::string(w < width ? width - w : 0, ' ');
}

std::string PadLeft(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return std::string(w < width ? width - w : 0, ' ') + text;
}

struct Markers {
  std::string regression;
  std::string noise = "~";
  std::string expected = "*";
  std::string no_estimate = "?";
  std::string rereading = "^";
};

std::string Marker(ChangeStatus status, const Markers& markers) {
  switch (status) {
    case ChangeStatus::kRegression:
      return markers.regression;
    case ChangeStatus::kWithinNoise:
      return markers.noise;
    case ChangeStatus::kExpectedWithMoreCores:
    case ChangeStatus::kExpectedWithFewerCores:
      return markers.expected;
    case ChangeStatus::kNoNoiseEstimate:
      return markers.no_estimate;
    case ChangeStatus::kFromRereading:
      return markers.rereading;
    default:
      return "";
  }
}

// "2.41 ± 0.05 (+3.0%) ▼": the mean, the spread when repeated, the change and the marker.
std::string Cell(const GroupValue& value, const Markers& markers, const std::string& plus_minus) {
  if (value.summary.n == 0) return "N/A";
  std::string cell = Number(value.summary.mean);
  const std::optional<double> spread =
      value.standard_error.has_value() ? value.standard_error : value.summary.stddev;
  if (spread.has_value()) absl::StrAppend(&cell, " ", plus_minus, " ", Spread(*spread));
  if (value.status != ChangeStatus::kBaseline && value.change_percent.has_value()) {
    absl::StrAppend(&cell, absl::StrFormat(" (%+.1f%%)", *value.change_percent));
  }
  const std::string marker = Marker(value.status, markers);
  if (!marker.empty()) absl::StrAppend(&cell, " ", marker);
  return cell;
}

std::string GroupCores(const RunGroup& group) {
  if (!group.cores.has_value()) return "cores unknown";
  return absl::StrCat(Number(*group.cores), *group.cores == 1 ? " core" : " cores");
}

int CountStatus(const ComparisonResult& result, ChangeStatus status) {
  int count = 0;
  for (const MetricComparison& metric : result.metrics) {
    for (const GroupValue& value : metric.groups) count += value.status == status ? 1 : 0;
  }
  return count;
}

// The comparison table's width budget, and the narrowest the metric names wrap to.
constexpr size_t kMaxTableColumns = 100;
constexpr size_t kMinLabelColumns = 22;
constexpr size_t kMaxColumnNameColumns = 24;

// `text` in lines of at most `width` columns, broken between words (a longer word stands alone).
std::vector<std::string> WrapWords(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& word : Words(text)) {
    if (!line.empty() && DisplayWidth(line) + 1 + DisplayWidth(word) > width) {
      lines.push_back(line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  lines.push_back(line);
  return lines;
}

constexpr char kNoEstimateAdvice[] =
    "one run per side: nothing tells this change from run-to-run noise (only the per-chunk row "
    "carries its own estimate); repeat the runs (collect compare A1,A2 B1,B2) or give "
    "--regression_threshold to gate on the threshold alone";
constexpr char kRereadingNote[] =
    "Data Rate rose because the chunks re-read bytes (read amplification, or bytes read per "
    "event when that is unknown, grew by more than 5%): the same events cost more reading";

std::string SpeedupSentence(const ComparisonResult& result, bool unicode) {
  const std::string plus_minus = unicode ? "\u00B1" : "+-";
  if (result.speedups.size() < 2) return "";
  std::vector<std::string> parts;
  for (const MeasuredSpeedup& s : result.speedups) {
    if (s.cores == result.speedup_reference_cores && !s.oversubscribed) continue;
    parts.push_back(absl::StrCat(
        Number(s.cores), s.cores == 1 ? " core" : " cores",
        s.oversubscribed ? " (oversubscribed)" : "", " ", absl::StrFormat("%.2f", s.speedup.value),
        s.speedup.standard_error.has_value()
            ? absl::StrFormat(" %s %.2f", plus_minus, *s.speedup.standard_error)
            : std::string(),
        "x"));
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) parts[i] += ";";
  return Wrap(absl::StrCat("Measured speedup against ", Number(result.speedup_reference_cores),
                           result.speedup_reference_cores == 1 ? " core" : " cores",
                           " (time per event, mean ", plus_minus, " standard error):"),
              "   ", parts);
}

std::string FitSentenceOf(const ComparisonResult& result, bool unicode = true) {
  const std::string speedups = SpeedupSentence(result, unicode);
  if (!result.fit.has_value()) {
    return absl::StrCat(
        speedups, result.no_fit_reason.empty() ? "" : Wrap("", "   ", Words(result.no_fit_reason)));
  }
  const AmdahlFit& fit = *result.fit;
  std::string out = speedups;
  absl::StrAppend(
      &out, absl::StrFormat(
                "Amdahl's law fit of the time per event vs cores (%d runs on %d core counts):\n"
                "  serial fraction %.3f (%.1f%%), %s %.4f, 1-core time per event %s us\n"
                "  predicted speedup at %s cores: %.2fx\n",
                fit.points_used, fit.core_counts, fit.serial_fraction, 100.0 * fit.serial_fraction,
                unicode ? "R\u00B2" : "R^2", fit.r_squared,
                Number(1e6 * fit.single_core_seconds_per_event), Number(2 * fit.max_cores),
                fit.predicted_speedup_at_double));
  if (!fit.excluded.empty()) {
    absl::StrAppend(&out, "  left out as oversubscribed (more threads than usable CPUs): ",
                    absl::StrJoin(fit.excluded, ", "), "\n");
  }
  // Measured speedup per core count against the fitted 1-core time.
  std::map<double, std::vector<double>> by_cores;
  for (const ScalingPoint& point : result.scaling_points) {
    if (!point.oversubscribed) by_cores[point.cores].push_back(point.seconds_per_event);
  }
  for (const auto& [cores, times] : by_cores) {
    const ReplicateSummary summary = SummarizeReplicates(times);
    absl::StrAppend(&out, absl::StrFormat("  %s %s: speedup against the fitted 1-core time: "
                                          "measured %.2fx, Amdahl %.2fx\n",
                                          Number(cores), cores == 1 ? "core" : "cores",
                                          fit.single_core_seconds_per_event / summary.mean,
                                          AmdahlSpeedup(fit.serial_fraction, cores)));
  }
  return out;
}

// The configuration block: what is the same in every run, what differs, the configurations.
std::string ConfigurationBlock(const ComparisonResult& result, const std::string& plus_minus) {
  std::string out = "Configuration\n";
  std::vector<std::string> same;
  std::vector<const ConfigurationFact*> differ;
  for (const ConfigurationFact& fact : result.configuration) {
    if (fact.differs) {
      differ.push_back(&fact);
    } else {
      same.push_back(absl::StrCat(fact.key, " ", fact.values.front()));
    }
  }
  // One fact is never split across lines.
  if (same.empty()) same.push_back("nothing");
  for (size_t i = 0; i + 1 < same.size(); ++i) same[i] += ";";
  absl::StrAppend(&out, Wrap("  same in every run:", "   ", same));
  if (differ.empty()) {
    absl::StrAppend(&out, "  differs: nothing\n");
  } else {
    for (const ConfigurationFact* fact : differ) {
      std::vector<std::string> values;
      for (size_t r = 0; r < fact->values.size(); ++r) {
        values.push_back(absl::StrCat(ReplaceControlCharacters(result.labels[r]), "=",
                                      fact->values[r].empty() ? "N/A" : fact->values[r]));
      }
      absl::StrAppend(&out, "  differs: ", fact->key, ": ", absl::StrJoin(values, ", "), "\n");
    }
  }
  absl::StrAppend(&out,
                  "Configurations (runs of one workload, backend and core count are "
                  "repeats: mean ",
                  plus_minus, " sample std dev):\n");
  for (size_t g = 0; g < result.groups.size(); ++g) {
    const RunGroup& group = result.groups[g];
    absl::StrAppend(&out, "  ", g == 0 ? "baseline" : absl::StrCat(g + 1).c_str(), ": ", group.name,
                    " - ", GroupCores(group),
                    group.backend.empty() ? "" : absl::StrCat(", ", group.backend), "\n");
  }
  if (result.groups.size() == 1) {
    absl::StrAppend(
        &out,
        Wrap("  note:", "   ",
             Words(result.repeats_of_known_code
                       ? absl::StrCat(
                             "every run measured the same code (same build-id and label) with "
                             "the same flags: they are repeats, shown with their spread",
                             result.fail_on_regression
                                 ? "; --fail_on_regression passes, as nothing can regress "
                                   "between repeats"
                                 : "",
                             ". To compare versions, run each with --label=VERSION.")
                       : "every run has the same configuration: they are shown as repeats and "
                         "nothing is compared. To compare versions of the code, give each "
                         "version's runs as one comma-separated argument: collect compare "
                         "A1,A2 B1,B2")));
  }
  absl::StrAppend(&out, "\n");

  return out;
}

// `rows` (the first the header) in columns of `widths`, a rule under the header; the first two
// columns (name, unit) left-aligned, the numbers right-aligned.
std::string DrawRows(const std::vector<std::vector<std::string>>& rows,
                     const std::vector<size_t>& widths, bool unicode) {
  const std::string vertical = unicode ? "\u2502" : "|";
  const std::string horizontal = unicode ? "\u2500" : "-";
  std::string out;
  std::string rule;
  for (size_t c = 0; c < widths.size(); ++c) {
    const size_t pad = c == 0 || c + 1 == widths.size() ? 1 : 2;  // as the lines below
    for (size_t i = 0; i < widths[c] + pad; ++i) rule += horizontal;
    if (c + 1 < widths.size()) rule += unicode ? "\u253C" : "+";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < rows[i].size(); ++c) {
      // Numbers right-aligned, names left-aligned.
      const std::string cell =
          c < 2 || i == 0 ? PadRight(rows[i][c], widths[c]) : PadLeft(rows[i][c], widths[c]);
      absl::StrAppend(&line, c == 0 ? "" : absl::StrCat(vertical, " "), cell, " ");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
    if (i == 0) absl::StrAppend(&out, rule, "\n");
  }
  return out;
}

// The metric rows, one column per configuration, in pages of at most kMaxTableColumns.
std::string MetricTable(const ComparisonResult& result, const ComparisonOptions& options,
                        const Markers& markers, const std::string& plus_minus) {
  std::string out;
  absl::StrAppend(&out, Wrap("Comparison against the baseline", "   ",
                             Words(absl::StrCat("(", result.groups.front().name, ")"))));
  // A long configuration name heads its column by its number in the list above.
  auto column_name = [&](size_t g) {
    const std::string& name = result.groups[g].name;
    if (DisplayWidth(name) <= kMaxColumnNameColumns) return name;
    return g == 0 ? std::string("baseline") : absl::StrCat("configuration ", g + 1);
  };
  // Column sets that fit kMaxTableColumns: the baseline, then as many configurations as fit.
  std::vector<std::vector<std::string>> cells(result.metrics.size());
  for (size_t m = 0; m < result.metrics.size(); ++m) {
    for (const GroupValue& value : result.metrics[m].groups) {
      cells[m].push_back(Cell(value, markers, plus_minus));
    }
  }
  auto column_width = [&](size_t g) {
    size_t width = DisplayWidth(column_name(g));
    for (const auto& row : cells) width = std::max(width, DisplayWidth(row[g]));
    return width;
  };
  size_t unit_width = DisplayWidth(std::string("Unit"));
  size_t label_width = DisplayWidth(std::string("Metric"));
  for (const MetricComparison& metric : result.metrics) {
    unit_width = std::max(unit_width, DisplayWidth(metric.unit));
    label_width = std::max(label_width, DisplayWidth(metric.label));
  }
  std::vector<std::vector<size_t>> pages = {{0}};
  for (size_t g = 1; g < result.groups.size(); ++g) {
    size_t width = kMinLabelColumns + 3 + unit_width + 3 + column_width(g);
    for (size_t other : pages.back()) width += 3 + column_width(other);
    if (width > kMaxTableColumns && pages.back().size() > 1) pages.push_back({0});
    pages.back().push_back(g);
  }
  for (size_t p = 0; p < pages.size(); ++p) {
    const std::vector<size_t>& page = pages[p];
    std::vector<size_t> widths = {0, unit_width};
    size_t rest = 3 + unit_width;
    for (size_t g : page) {
      widths.push_back(column_width(g));
      rest += 3 + widths.back();
    }
    // The metric names wrap when the numbers need the room.
    widths[0] = std::min(
        label_width, std::max(kMinLabelColumns, kMaxTableColumns > rest ? kMaxTableColumns - rest
                                                                        : kMinLabelColumns));
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"Metric", "Unit"};
    for (size_t g : page) header.push_back(column_name(g));
    rows.push_back(header);
    for (size_t m = 0; m < result.metrics.size(); ++m) {
      std::vector<std::string> lines = WrapWords(result.metrics[m].label, widths[0]);
      for (size_t l = 0; l < lines.size(); ++l) {
        std::vector<std::string> row = {lines[l], l == 0 ? result.metrics[m].unit : ""};
        for (size_t g : page) row.push_back(l + 1 == lines.size() ? cells[m][g] : "");
        rows.push_back(std::move(row));
      }
    }
    if (p > 0) absl::StrAppend(&out, "\n");
    absl::StrAppend(&out, DrawRows(rows, widths, options.unicode));
  }
  return out;
}

// The verdicts and what each marker means, with its count.
std::string Legend(const ComparisonResult& result, const ComparisonOptions& options,
                   const Markers& markers, const std::string& plus_minus) {
  std::string out;
  absl::StrAppend(&out, "\n");
  for (const std::string& verdict : result.verdicts) {
    absl::StrAppend(
        &out,
        Wrap("Verdict:", "   ",
             Words(options.unicode ? verdict
                                   : absl::StrReplaceAll(verdict, {{"\u00B1", plus_minus}}))));
  }
  if (!result.verdicts.empty()) absl::StrAppend(&out, "\n");
  absl::StrAppend(
      &out, Wrap(absl::StrCat(markers.regression, " = regression (", result.regressions, "):"),
                 "   ", Words(NoiseRule(options))));
  absl::StrAppend(&out, markers.noise, " = worse than ",
                  Number(options.regression_threshold_percent), "% but within the noise (",
                  CountStatus(result, ChangeStatus::kWithinNoise), ")\n");
  absl::StrAppend(&out, markers.expected,
                  " = worse, as expected with more (or fewer) cores: not a "
                  "regression (",
                  CountStatus(result, ChangeStatus::kExpectedWithMoreCores) +
                      CountStatus(result, ChangeStatus::kExpectedWithFewerCores),
                  ")\n");
  if (const int unknown = CountStatus(result, ChangeStatus::kNoNoiseEstimate); unknown > 0) {
    absl::StrAppend(&out, Wrap(absl::StrCat(markers.no_estimate, " = worse than ",
                                            Number(options.regression_threshold_percent),
                                            "%, but no noise estimate (", unknown, "):"),
                               "   ", Words(kNoEstimateAdvice)));
  }
  if (const int reread = CountStatus(result, ChangeStatus::kFromRereading); reread > 0) {
    absl::StrAppend(
        &out, Wrap(absl::StrCat(markers.rereading, " = not an improvement (", reread, "):"), "   ",
                   Words(kRereadingNote)));
    for (const std::string& note : result.rereading_notes) {
      absl::StrAppend(&out, Wrap("   ", "     ", Words(note)));
    }
  }
  return out;
}

std::string FormatTable(const ComparisonResult& result, const ComparisonOptions& options) {
  Markers markers;
  markers.regression = options.unicode ? "\u25BC" : "!";
  const std::string plus_minus = options.unicode ? "\u00B1" : "+-";
  return absl::StrCat(ConfigurationBlock(result, plus_minus),
                      MetricTable(result, options, markers, plus_minus),
                      Legend(result, options, markers, plus_minus));
}

std::string FormatCsv(const ComparisonResult& result) {
  std::string out = "metric,unit,configuration,runs,n,mean,stddev,change_percent,status\n";
  for (const MetricComparison& metric : result.metrics) {
    for (size_t g = 0; g < result.groups.size(); ++g) {
      const GroupValue& value = metric.groups[g];
      std::vector<std::string> runs;
      for (size_t r : result.groups[g].runs) runs.push_back(result.labels[r]);
      absl::StrAppend(&out, CsvField(metric.label), ",", CsvField(metric.unit), ",",
                      g == 0 ? "baseline" : "", g == 0 ? "" : absl::StrCat(g + 1), ",",
                      CsvField(absl::StrJoin(runs, ";")), ",", value.summary.n, ",",
                      value.summary.n > 0 ? Exact(value.summary.mean) : "", ",",
                      value.summary.stddev.has_value() ? Exact(*value.summary.stddev) : "", ",",
                      value.change_percent.has_value() && g > 0 ? Exact(*value.change_percent) : "",
                      ",", ChangeStatusName(value.status), "\n");
    }
  }
  return out;
}

std::string JsonStrings(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& value : values) quoted.push_back(JsonQuote(value));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

std::string FormatJson(const ComparisonResult& result, const ComparisonOptions& options) {
  std::string out = "{\n";
  absl::StrAppend(&out, "  \"runs\": ", JsonStrings(result.labels), ",\n");
  absl::StrAppend(&out, "  \"regression_threshold_percent\": ",
                  Exact(options.regression_threshold_percent), ",\n");
  absl::StrAppend(&out, "  \"noise_standard_errors\": ", Exact(kNoiseStandardErrors), ",\n");
  std::vector<std::string> facts;
  for (const ConfigurationFact& fact : result.configuration) {
    facts.push_back(absl::StrCat("    {\"key\": ", JsonQuote(fact.key),
                                 ", \"differs\": ", fact.differs ? "true" : "false",
                                 ", \"values\": ", JsonStrings(fact.values), "}"));
  }
  absl::StrAppend(&out, "  \"configuration\": [\n", absl::StrJoin(facts, ",\n"), "\n  ],\n");
  std::vector<std::string> groups;
  for (const RunGroup& group : result.groups) {
    std::vector<std::string> runs;
    for (size_t r : group.runs) runs.push_back(result.labels[r]);
    groups.push_back(absl::StrCat("    {\"runs\": ", JsonStrings(runs),
                                  ", \"cores\": ", JsonNumber(group.cores),
                                  ", \"backend\": ", JsonQuote(group.backend),
                                  ", \"workload\": ", JsonQuote(group.workload), "}"));
  }
  absl::StrAppend(&out, "  \"configurations\": [\n", absl::StrJoin(groups, ",\n"), "\n  ],\n");
  std::vector<std::string> metrics;
  for (const MetricComparison& metric : result.metrics) {
    std::vector<std::string> values;
    for (const GroupValue& value : metric.groups) {
      values.push_back(absl::StrCat(
          "{\"n\": ", value.summary.n, ", \"mean\": ",
          JsonNumber(value.summary.n > 0 ? std::optional<double>(value.summary.mean)
                                         : std::nullopt),
          ", \"stddev\": ", JsonNumber(value.summary.stddev), ", \"change_percent\": ",
          JsonNumber(value.status == ChangeStatus::kBaseline ? std::nullopt : value.change_percent),
          ", \"status\": ", JsonQuote(ChangeStatusName(value.status)), ", \"standard_error\": ",
          JsonNumber(value.standard_error), ", \"p_value\": ", JsonNumber(value.p_value), "}"));
    }
    metrics.push_back(absl::StrCat(
        "    {\"metric\": ", JsonQuote(metric.label), ", \"unit\": ", JsonQuote(metric.unit),
        ", \"better\": ",
        JsonQuote(metric.better == Better::kHigher  ? "higher"
                  : metric.better == Better::kLower ? "lower"
                                                    : "neither"),
        ", \"expected_with_more_cores\": ", metric.expected_with_more_cores ? "true" : "false",
        ", \"expected_with_fewer_cores\": ", metric.expected_with_fewer_cores ? "true" : "false",
        ", \"test\": ", metric.test.empty() ? "null" : JsonQuote(metric.test),
        ",\n     \"configurations\": [", absl::StrJoin(values, ", "), "]}"));
  }
  absl::StrAppend(&out, "  \"metrics\": [\n", absl::StrJoin(metrics, ",\n"), "\n  ],\n");
  absl::StrAppend(&out, "  \"regressions\": ", result.regressions, ",\n");
  absl::StrAppend(&out, "  \"threshold_given\": ", options.threshold_given ? "true" : "false",
                  ",\n  \"verdicts\": ", JsonStrings(result.verdicts), ",\n");
  if (result.fit.has_value()) {
    const AmdahlFit& fit = *result.fit;
    absl::StrAppend(
        &out, "  \"amdahl_fit\": {\"serial_fraction\": ", Exact(fit.serial_fraction),
        ", \"r_squared\": ", Exact(fit.r_squared),
        ", \"single_core_seconds_per_event\": ", Exact(fit.single_core_seconds_per_event),
        ", \"points_used\": ", fit.points_used, ", \"core_counts\": ", fit.core_counts,
        ", \"max_cores\": ", Exact(fit.max_cores),
        ", \"predicted_speedup_at_double\": ", Exact(fit.predicted_speedup_at_double),
        ", \"excluded_oversubscribed\": ", JsonStrings(fit.excluded), "},\n");
  } else {
    absl::StrAppend(&out, "  \"amdahl_fit\": null,\n");
  }
  std::vector<std::string> speedups;
  for (const MeasuredSpeedup& s : result.speedups) {
    speedups.push_back(absl::StrCat("{\"cores\": ", Exact(s.cores),
                                    ", \"oversubscribed\": ", s.oversubscribed ? "true" : "false",
                                    ", \"speedup\": ", Exact(s.speedup.value),
                                    ", \"standard_error\": ", JsonNumber(s.speedup.standard_error),
                                    "}"));
  }
  absl::StrAppend(
      &out, "  \"speedup_reference_cores\": ",
      JsonNumber(result.speedups.empty() ? std::nullopt
                                         : std::optional<double>(result.speedup_reference_cores)),
      ",\n  \"measured_speedups\": [", absl::StrJoin(speedups, ", "), "],\n");
  absl::StrAppend(&out, "  \"no_fit_reason\": ", JsonQuote(result.no_fit_reason), "\n}\n");
  return out;
}

std::string FormatMarkdown(const ComparisonResult& result, const ComparisonOptions& options) {
  std::string out = "## Configuration\n\n";
  for (const ConfigurationFact& fact : result.configuration) {
    if (fact.differs) {
      std::vector<std::string> values;
      for (size_t r = 0; r < fact.values.size(); ++r) {
        values.push_back(
            absl::StrCat(result.labels[r], "=", fact.values[r].empty() ? "N/A" : fact.values[r]));
      }
      absl::StrAppend(&out, "- **", MarkdownCell(fact.key),
                      "** (differs): ", MarkdownCell(absl::StrJoin(values, ", ")), "\n");
    } else {
      absl::StrAppend(&out, "- ", MarkdownCell(fact.key), ": ", MarkdownCell(fact.values.front()),
                      "\n");
    }
  }
  absl::StrAppend(&out, "\n## Comparison against the baseline (",
                  MarkdownCell(result.groups.front().name), ")\n\n| Metric | Unit |");
  std::string align = "|---|---|";
  for (const RunGroup& group : result.groups) {
    absl::StrAppend(&out, " ", MarkdownCell(group.name), " |");
    align += "---:|";
  }
  absl::StrAppend(&out, "\n", align, "\n");
  Markers markers;
  markers.regression = "\u25BC";
  for (const MetricComparison& metric : result.metrics) {
    absl::StrAppend(&out, "| ", MarkdownCell(metric.label), " | ", MarkdownCell(metric.unit), " |");
    for (const GroupValue& value : metric.groups) {
      absl::StrAppend(&out, " ", MarkdownCell(Cell(value, markers, "\u00B1")), " |");
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "\n");
  for (const std::string& verdict : result.verdicts) {
    absl::StrAppend(&out, "**Verdict:** ", MarkdownCell(verdict), "\n\n");
  }
  absl::StrAppend(&out, "\u25BC regression: ", NoiseRule(options), " (", result.regressions,
                  result.regressions == 1 ? " regression" : " regressions", "). ~ worse than ",
                  Number(options.regression_threshold_percent),
                  "% but within the noise. * worse, as expected with more (or fewer) cores. "
                  "? worse, but no noise estimate: ",
                  kNoEstimateAdvice, ". ^ not an improvement: ", kRereadingNote, ".\n");
  const std::string fit = FitSentenceOf(result);
  if (!fit.empty()) absl::StrAppend(&out, "\n", fit);
  return out;
}

std::string RunNotes(const ComparisonResult& result) {
  std::string out;
  for (const std::string& line : result.run_warnings)
    absl::StrAppend(&out, Wrap("", "   ", Words(line)));
  for (const std::string& line : result.run_findings)
    absl::StrAppend(&out, Wrap("", "   ", Words(line)));
  return out;
}

}  // namespace

namespace compare_internal {

std::string ComparisonText(const ComparisonResult& result, const ComparisonOptions& options) {
  switch (options.format) {
    case ComparisonFormat::kTable:
      return absl::StrCat(FormatTable(result, options), RunNotes(result),
                          FitSentenceOf(result, options.unicode));
    case ComparisonFormat::kCsv:
      return FormatCsv(result);
    case ComparisonFormat::kJson:
      return FormatJson(result, options);
    case ComparisonFormat::kMarkdown:
      return absl::StrCat(FormatMarkdown(result, options), "\n", RunNotes(result));
  }
  return "";
}

}  // namespace compare_internal

std::string ComparisonCell(const GroupValue& value) {
  Markers markers;
  markers.regression = "\u25BC";
  return Cell(value, markers, "\u00B1");
}

std::string AmdahlFitText(const ComparisonResult& result) { return FitSentenceOf(result); }

std::string FormatComparison(const std::vector<std::string>& labels,
                             const std::vector<v1::Measurement>& runs,
                             const ComparisonOptions& options) {
  absl::StatusOr<ComparisonResult> result = CompareRuns(labels, runs, options);
  if (!result.ok()) return absl::StrCat(result.status().message(), "\n");
  return result->text;
}

}  // namespace roastcoffea
