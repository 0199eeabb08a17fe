#include "export/compare.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/ascii.h"
#include "aggregation/aggregate.h"
#include "export/display_width.h"
#include "export/tables.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

std::optional<double> If(bool known, double value) {
  return known ? std::optional<double>(value) : std::nullopt;
}

struct MetricSpec {
  const char* label;
  const char* unit;
  Better better;
  std::optional<double> (*get)(const v1::AggregatedMetrics&);
};

const std::vector<MetricSpec>& Specs() {
  using M = v1::AggregatedMetrics;
  static const auto* const specs = new std::vector<MetricSpec>{
      // Measured CPU first (aggregation/cpu_metrics.h); unknown is N/A, never 0.
      {"CPU Efficiency", "%", Better::kHigher,
       [](const M& m) {
         return If(m.cpu().has_cpu_efficiency_fraction(),
                   100.0 * m.cpu().cpu_efficiency_fraction());
       }},
      {"CPU Time (measured)", "s", Better::kNeither,
       [](const M& m) { return If(m.cpu().has_cpu_seconds(), m.cpu().cpu_seconds()); }},
      {"Usable Cores (average)", "cores", Better::kNeither,
       [](const M& m) { return If(m.cpu().has_usable_cores(), m.cpu().usable_cores()); }},
      {"Elapsed Time", "s", Better::kLower,
       [](const M& m) { return If(true, m.workflow().elapsed_time_seconds()); }},
      {"Total Events", "events", Better::kNeither,
       [](const M& m) {
         return If(m.workflow().has_total_events(),
                   static_cast<double>(m.workflow().total_events()));
       }},
      {"Data Rate", "Gbps", Better::kHigher,
       [](const M& m) {
         return If(m.workflow().has_data_rate_gbps(), m.workflow().data_rate_gbps());
       }},
      {"Event Rate (Elapsed Time)", "kHz", Better::kHigher,
       [](const M& m) {
         return If(m.workflow().has_event_rate_elapsed_khz(),
                   m.workflow().event_rate_elapsed_khz());
       }},
      {"Event Rate (per CPU-second)", "kHz", Better::kHigher,
       [](const M& m) {
         return If(m.cpu().has_event_rate_per_cpu_second_khz(),
                   m.cpu().event_rate_per_cpu_second_khz());
       }},
      {"Event Rate (per summed chunk wall time)", "kHz", Better::kHigher,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds() &&
                       m.workflow().has_event_rate_cpu_total_khz(),
                   m.workflow().event_rate_cpu_total_khz());
       }},
      {"Event Rate (per tracked core)", "kHz/core", Better::kHigher,
       [](const M& m) {
         return If(m.workflow().has_total_events() && m.efficiency().has_event_rate_core_khz(),
                   m.efficiency().event_rate_core_khz());
       }},
      {"Summed Chunk Wall Time (reported)", "s", Better::kNeither,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds(),
                   m.workflow().summed_chunk_wall_seconds());
       }},
      {"Total Cores", "cores", Better::kNeither,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_total_cores(), m.workers().total_cores());
       }},
      // The original's speedup and core efficiency: how busy the workers were, not CPU.
      {"Busy-Worker Concurrency", "x", Better::kNeither,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds(), m.efficiency().speedup_factor());
       }},
      // One occupancy, as the tables show it: over core-seconds when known, else / total cores.
      {"Worker Occupancy (busy-worker concurrency / cores)", "%", Better::kNeither,
       [](const M& m) {
         if (!m.workflow().has_summed_chunk_wall_seconds()) return std::optional<double>();
         if (m.efficiency().has_core_efficiency_over_core_seconds_fraction()) {
           return If(true, 100.0 * m.efficiency().core_efficiency_over_core_seconds_fraction());
         }
         return If(m.efficiency().has_core_efficiency_fraction(),
                   100.0 * m.efficiency().core_efficiency_fraction());
       }},
      {"Chunk Time Waiting for a CPU (run queue)", "%", Better::kLower,
       [](const M& m) {
         return If(m.cpu().has_chunk_run_queue_wait_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_run_queue_wait_seconds() / m.cpu().chunk_wall_seconds());
       }},
      {"Chunk Time Blocked (I/O, locks, sleep)", "%", Better::kLower,
       [](const M& m) {
         return If(m.cpu().has_chunk_blocked_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_blocked_seconds() / m.cpu().chunk_wall_seconds());
       }},
      {"Peak Memory", "MiB", Better::kLower,
       [](const M& m) {
         return If(m.has_workers() && m.workers().peak_memory_bytes() > 0,
                   m.workers().peak_memory_bytes() / (1024.0 * 1024.0));
       }},
      {"Avg Memory (per worker or process)", "MiB", Better::kLower,
       [](const M& m) {
         return If(m.has_workers() && m.workers().avg_memory_per_worker_bytes() > 0,
                   m.workers().avg_memory_per_worker_bytes() / (1024.0 * 1024.0));
       }},
      {"Total Chunks", "chunks", Better::kNeither,
       [](const M& m) { return If(m.has_chunks(), static_cast<double>(m.chunks().num_chunks())); }},
      {"Failed Chunks", "chunks", Better::kLower,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_failed_chunks()));
       }},
      {"Chunk Duration Mean", "s", Better::kLower,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().count() > 0,
                   m.chunks().duration_seconds().mean());
       }},
      {"Chunk Duration p50", "s", Better::kLower,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p50());
       }},
      {"Chunk Duration p95", "s", Better::kLower,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p95());
       }},
      {"Chunk Duration p99", "s", Better::kLower,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p99());
       }},
      {"Processor CPU Time", "s", Better::kNeither,
       [](const M& m) {
         return If(m.has_fine() && HasThreadTimeSplit(m.fine()),
                   m.fine().processor_cpu_time_seconds());
       }},
      {"Processor I/O & Waiting Time", "s", Better::kLower,
       [](const M& m) {
         return If(m.has_fine() && HasThreadTimeSplit(m.fine()),
                   m.fine().processor_io_wait_time_seconds());
       }},
  };
  return *specs;
}

std::string Number(double value) {
  if (!std::isfinite(value)) return "N/A";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.4g", value);
}

std::string PadRight(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return text + std::string(w < width ? width - w : 0, ' ');
}

std::string PadLeft(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return std::string(w < width ? width - w : 0, ' ') + text;
}

}  // namespace

std::vector<ComparedMetric> CompareMetrics(const std::vector<v1::Measurement>& runs) {
  std::vector<ComparedMetric> out;
  for (const MetricSpec& spec : Specs()) {
    ComparedMetric metric{spec.label, spec.unit, spec.better, {}};
    bool any = false;
    for (const v1::Measurement& run : runs) {
      metric.values.push_back(spec.get(run.metrics()));
      any = any || metric.values.back().has_value();
    }
    if (any) out.push_back(std::move(metric));
  }
  return out;
}

std::optional<double> PercentChange(std::optional<double> baseline, std::optional<double> value) {
  if (!baseline.has_value() || !value.has_value() || *baseline == 0.0 ||
      !std::isfinite(*baseline) || !std::isfinite(*value)) {
    return std::nullopt;
  }
  return 100.0 * (*value - *baseline) / std::fabs(*baseline);
}

bool IsRegression(Better better, double change_percent, double threshold_percent) {
  switch (better) {
    case Better::kHigher:
      return change_percent < -threshold_percent;
    case Better::kLower:
      return change_percent > threshold_percent;
    default:
      return false;
  }
}

std::optional<double> RunCores(const v1::Measurement& run) {
  const v1::AggregatedMetrics& metrics = run.metrics();
  if (metrics.has_workers() && metrics.workers().has_total_cores() &&
      metrics.workers().total_cores() > 0) {
    return metrics.workers().total_cores();
  }
  const auto& configuration = run.metadata().configuration();
  if (auto it = configuration.find("threads"); it != configuration.end()) {
    double threads = 0;
    if (absl::SimpleAtod(it->second, &threads) && threads > 0) return threads;
  }
  return std::nullopt;
}

absl::StatusOr<AmdahlFit> FitAmdahl(const std::vector<v1::Measurement>& runs) {
  std::vector<std::pair<double, double>> points;  // (cores, elapsed)
  std::set<double> distinct;
  for (const v1::Measurement& run : runs) {
    const std::optional<double> cores = RunCores(run);
    const double elapsed = run.metrics().workflow().elapsed_time_seconds();
    if (!cores.has_value() || !(elapsed > 0) || !std::isfinite(elapsed)) continue;
    points.emplace_back(*cores, elapsed);
    distinct.insert(*cores);
  }
  if (points.size() < 3 || distinct.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Amdahl's law needs at least three runs with known cores and elapsed time on at least "
        "two different core counts; have ",
        points.size(), " usable runs on ", distinct.size(), " core counts"));
  }
  Eigen::MatrixXd design(points.size(), 2);
  Eigen::VectorXd elapsed(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    design(i, 0) = 1.0;
    design(i, 1) = 1.0 / points[i].first;
    elapsed(i) = points[i].second;
  }
  const Eigen::Vector2d ab = design.colPivHouseholderQr().solve(elapsed);
  // Physical constraints: neither part negative.
  double a = std::max(0.0, ab(0));
  double b = std::max(0.0, ab(1));
  if (a + b <= 0) {
    return absl::FailedPreconditionError("Amdahl fit degenerate: elapsed times do not fit");
  }
  AmdahlFit fit;
  fit.serial_fraction = a / (a + b);
  fit.single_core_seconds = a + b;
  fit.max_cores = *distinct.rbegin();
  fit.predicted_speedup_at_double = (a + b) / (a + b / (2.0 * fit.max_cores));
  return fit;
}

std::string FormatComparison(const std::vector<std::string>& labels,
                             const std::vector<v1::Measurement>& runs,
                             const ComparisonOptions& options) {
  const std::vector<ComparedMetric> metrics = CompareMetrics(runs);
  const std::string worse = options.unicode ? "\u25BC" : "!";
  // Header then rows of cells.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"Metric", "Unit"};
  for (size_t r = 0; r < runs.size(); ++r) {
    header.push_back(ReplaceControlCharacters(r < labels.size() ? labels[r] : absl::StrCat("run ", r)));
  }
  rows.push_back(header);
  int regressions = 0;
  for (const ComparedMetric& metric : metrics) {
    std::vector<std::string> row = {metric.label, metric.unit};
    for (size_t r = 0; r < metric.values.size(); ++r) {
      if (!metric.values[r].has_value()) {
        row.push_back("N/A");
        continue;
      }
      std::string cell = Number(*metric.values[r]);
      if (r > 0) {
        const std::optional<double> change = PercentChange(metric.values[0], metric.values[r]);
        if (change.has_value()) {
          absl::StrAppend(&cell, absl::StrFormat(" (%+.1f%%)", *change));
          if (IsRegression(metric.better, *change, options.regression_threshold_percent)) {
            absl::StrAppend(&cell, " ", worse);
            ++regressions;
          }
        }
      }
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  const std::string vertical = options.unicode ? "\u2502" : "|";
  const std::string horizontal = options.unicode ? "\u2500" : "-";
  std::string rule;
  for (size_t c = 0; c < widths.size(); ++c) {
    for (size_t i = 0; i < widths[c] + (c == 0 ? 1 : 2); ++i) rule += horizontal;
    if (c + 1 < widths.size()) rule += options.unicode ? "\u253C" : "+";
  }
  std::string out = absl::StrCat("Comparison against the baseline (", header[2], ")\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < rows[i].size(); ++c) {
      // Numbers right-aligned, names left-aligned.
      const std::string cell = c < 2 || i == 0 ? PadRight(rows[i][c], widths[c])
                                               : PadLeft(rows[i][c], widths[c]);
      absl::StrAppend(&line, c == 0 ? "" : absl::StrCat(vertical, " "), cell, " ");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
    if (i == 0) absl::StrAppend(&out, rule, "\n");
  }
  absl::StrAppend(&out, "\n", worse, " = worse than the baseline by more than ",
                  Number(options.regression_threshold_percent), "% (", regressions,
                  regressions == 1 ? " regression" : " regressions", ")\n");
  // What each run's own warnings say (an unoptimised build, an oversubscribed or loaded host):
  // a difference may be that, not the code.
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string label =
        ReplaceControlCharacters(r < labels.size() ? labels[r] : absl::StrCat("run ", r));
    for (const v1::Warning& warning : runs[r].warnings()) {
      absl::StrAppend(&out, "WARNING (", label, "): ",
                      ReplaceControlCharacters(warning.message()), "\n");
    }
  }
  // What limited each run (the saved findings), by code: a difference may be one of these.
  for (size_t r = 0; r < runs.size(); ++r) {
    const v1::AggregatedMetrics& m = runs[r].metrics();
    if (!m.findings_evaluated()) continue;
    std::vector<std::string> codes;
    for (const v1::Finding& finding : m.findings()) {
      codes.push_back(absl::StrCat(finding.code(), " (",
                                   absl::AsciiStrToLower(SeverityLabel(finding.severity())), ")"));
    }
    absl::StrAppend(&out, "Findings (",
                    ReplaceControlCharacters(r < labels.size() ? labels[r] : absl::StrCat("run ", r)),
                    "): ", codes.empty() ? "none" : ReplaceControlCharacters(absl::StrJoin(codes, ", ")),
                    "\n");
  }
  absl::StatusOr<AmdahlFit> fit = FitAmdahl(runs);
  if (fit.ok()) {
    absl::StrAppend(&out,
                    absl::StrFormat("Amdahl's law fit: serial fraction %.3f (%.1f%%), predicted "
                                    "speedup at %s cores: %.2fx\n",
                                    fit->serial_fraction, 100.0 * fit->serial_fraction,
                                    Number(2 * fit->max_cores), fit->predicted_speedup_at_double));
  } else if (runs.size() >= 3) {
    absl::StrAppend(&out, "No Amdahl fit: ", fit.status().message(), "\n");
  }
  return out;
}

}  // namespace roastcoffea
