#include "export/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "aggregation/aggregate.h"
#include "export/display_width.h"
#include "export/tables.h"
#include "io/json_escape.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

std::optional<double> If(bool known, double value) {
  return known ? std::optional<double>(value) : std::nullopt;
}

// How a metric moves when the same workload runs on more cores, nothing being wrong.
enum CoreTrend { kSteady, kFallsWithCores, kGainsWithCores };

struct MetricSpec {
  const char* label;
  const char* unit;
  Better better;
  CoreTrend trend;
  std::optional<double> (*get)(const v1::AggregatedMetrics&);
};

const std::vector<MetricSpec>& Specs() {
  using M = v1::AggregatedMetrics;
  static const auto* const specs = new std::vector<MetricSpec>{
      // Measured CPU first (aggregation/cpu_metrics.h); unknown is N/A, never 0.
      {"CPU Efficiency", "%", Better::kHigher, kFallsWithCores,
       [](const M& m) {
         return If(m.cpu().has_cpu_efficiency_fraction(),
                   100.0 * m.cpu().cpu_efficiency_fraction());
       }},
      {"CPU Time (measured)", "s", Better::kNeither, kSteady,
       [](const M& m) { return If(m.cpu().has_cpu_seconds(), m.cpu().cpu_seconds()); }},
      {"Usable Cores (average)", "cores", Better::kNeither, kSteady,
       [](const M& m) { return If(m.cpu().has_usable_cores(), m.cpu().usable_cores()); }},
      {"Elapsed Time", "s", Better::kLower, kGainsWithCores,
       [](const M& m) { return If(true, m.workflow().elapsed_time_seconds()); }},
      {"Total Events", "events", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.workflow().has_total_events(),
                   static_cast<double>(m.workflow().total_events()));
       }},
      {"Data Rate", "Gbps", Better::kHigher, kGainsWithCores,
       [](const M& m) {
         return If(m.workflow().has_data_rate_gbps(), m.workflow().data_rate_gbps());
       }},
      {"Bytes Read", "MiB", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.workflow().has_total_bytes_read(),
                   m.workflow().total_bytes_read() / (1024.0 * 1024.0));
       }},
      {"Bytes Read per Event", "bytes", Better::kLower, kSteady,
       [](const M& m) {
         return If(m.workflow().has_total_bytes_read() && m.workflow().total_events() > 0,
                   static_cast<double>(m.workflow().total_bytes_read()) /
                       static_cast<double>(m.workflow().total_events()));
       }},
      {"Read Amplification (bytes read / file bytes)", "x", Better::kLower, kSteady,
       [](const M& m) {
         return If(m.workflow().has_read_amplification(), m.workflow().read_amplification());
       }},
      {"Event Rate (Elapsed Time)", "kHz", Better::kHigher, kGainsWithCores,
       [](const M& m) {
         return If(m.workflow().has_event_rate_elapsed_khz(),
                   m.workflow().event_rate_elapsed_khz());
       }},
      {"Event Rate (per CPU-second)", "kHz", Better::kHigher, kFallsWithCores,
       [](const M& m) {
         return If(m.cpu().has_event_rate_per_cpu_second_khz(),
                   m.cpu().event_rate_per_cpu_second_khz());
       }},
      {"Event Rate (per summed chunk wall time)", "kHz", Better::kHigher, kFallsWithCores,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds() &&
                       m.workflow().has_event_rate_cpu_total_khz(),
                   m.workflow().event_rate_cpu_total_khz());
       }},
      {"Event Rate (per tracked core)", "kHz/core", Better::kHigher, kFallsWithCores,
       [](const M& m) {
         return If(m.workflow().has_total_events() && m.efficiency().has_event_rate_core_khz(),
                   m.efficiency().event_rate_core_khz());
       }},
      {"Summed Chunk Wall Time (reported)", "s", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds(),
                   m.workflow().summed_chunk_wall_seconds());
       }},
      {"Total Cores", "cores", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.has_workers() && m.workers().has_total_cores(), m.workers().total_cores());
       }},
      // The original's speedup and core efficiency: how busy the workers were, not CPU.
      {"Busy-Worker Concurrency", "x", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.workflow().has_summed_chunk_wall_seconds(), m.efficiency().speedup_factor());
       }},
      // One occupancy, as the tables show it: over core-seconds when known, else / total cores.
      {"Worker Occupancy (busy-worker concurrency / cores)", "%", Better::kNeither, kSteady,
       [](const M& m) {
         if (!m.workflow().has_summed_chunk_wall_seconds()) return std::optional<double>();
         if (m.efficiency().has_core_efficiency_over_core_seconds_fraction()) {
           return If(true, 100.0 * m.efficiency().core_efficiency_over_core_seconds_fraction());
         }
         return If(m.efficiency().has_core_efficiency_fraction(),
                   100.0 * m.efficiency().core_efficiency_fraction());
       }},
      {"Chunk Time Waiting for a CPU (run queue)", "%", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.cpu().has_chunk_run_queue_wait_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_run_queue_wait_seconds() / m.cpu().chunk_wall_seconds());
       }},
      {"Chunk Time Blocked (I/O, locks, sleep)", "%", Better::kLower, kSteady,
       [](const M& m) {
         return If(m.cpu().has_chunk_blocked_seconds() && m.cpu().chunk_wall_seconds() > 0,
                   100.0 * m.cpu().chunk_blocked_seconds() / m.cpu().chunk_wall_seconds());
       }},
      {"Peak Memory", "MiB", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_workers() && m.workers().peak_memory_bytes() > 0,
                   m.workers().peak_memory_bytes() / (1024.0 * 1024.0));
       }},
      {"Avg Memory (per worker or process)", "MiB", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_workers() && m.workers().avg_memory_per_worker_bytes() > 0,
                   m.workers().avg_memory_per_worker_bytes() / (1024.0 * 1024.0));
       }},
      {"Total Chunks", "chunks", Better::kNeither, kSteady,
       [](const M& m) { return If(m.has_chunks(), static_cast<double>(m.chunks().num_chunks())); }},
      {"Failed Chunks", "chunks", Better::kLower, kSteady,
       [](const M& m) {
         return If(m.has_chunks(), static_cast<double>(m.chunks().num_failed_chunks()));
       }},
      {"Chunk Duration Mean", "s", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().count() > 0,
                   m.chunks().duration_seconds().mean());
       }},
      {"Chunk Duration p50", "s", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p50());
       }},
      {"Chunk Duration p95", "s", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p95());
       }},
      {"Chunk Duration p99", "s", Better::kLower, kFallsWithCores,
       [](const M& m) {
         return If(m.has_chunks() && m.chunks().duration_seconds().has_percentiles(),
                   m.chunks().duration_seconds().percentiles().p99());
       }},
      {"Processor CPU Time", "s", Better::kNeither, kSteady,
       [](const M& m) {
         return If(m.has_fine() && HasThreadTimeSplit(m.fine()),
                   m.fine().processor_cpu_time_seconds());
       }},
      {"Processor Off-CPU Time", "s", Better::kLower, kFallsWithCores,
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

// A spread or standard error: two significant digits are all it can claim.
std::string Spread(double value) {
  if (!std::isfinite(value)) return "N/A";
  if (std::fabs(value) >= 100) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.2g", value);
}

// Machine-readable numbers: 15 significant digits, as the flat formats print them.
std::string Exact(double value) { return absl::StrFormat("%.15g", value); }

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

// Configuration entries that say which resources ran the workload, not what it was.
bool IsResourceKey(const std::string& key) {
  static const auto* const keys = new std::set<std::string>{
      "threads",   "workers",          "peak_workers", "tasks",
      "backend",   "interval_seconds", "profile_hz",   "dataset_directory",
      "scheduler", "taskvine_logs",    "wq_port"};
  return keys->count(key) > 0;
}

std::optional<double> RunEvents(const v1::Measurement& run) {
  const auto& workflow = run.metrics().workflow();
  if (!workflow.has_total_events()) return std::nullopt;
  return static_cast<double>(workflow.total_events());
}

std::string BuildText(const v1::BuildInfo& build) {
  std::string text = build.build_mode().empty() ? "unknown" : build.build_mode();
  if (!build.compiler().empty()) absl::StrAppend(&text, " (", build.compiler(), ")");
  return text;
}

// A std::string key for protobuf Map lookups (a const char* would be hashed as a pointer).
const std::string& kBackendKey = *new std::string("backend");

// Every fact of one run that the configuration block shows, in display order.
std::vector<std::pair<std::string, std::string>> RunFacts(const v1::Measurement& run) {
  const v1::MeasurementMetadata& metadata = run.metadata();
  std::vector<std::pair<std::string, std::string>> facts;
  facts.emplace_back("tool version", metadata.tool_version());
  facts.emplace_back("tool build",
                     metadata.has_tool_build() ? BuildText(metadata.tool_build()) : "");
  facts.emplace_back("analysis build",
                     metadata.has_analysis_build() ? BuildText(metadata.analysis_build()) : "");
  facts.emplace_back("host", metadata.host());
  const v1::HostFacts& host = metadata.host_facts();
  facts.emplace_back("CPU model", host.cpu_model());
  facts.emplace_back("usable CPUs", metadata.has_host_facts() && host.usable_cpus() > 0
                                        ? Number(host.usable_cpus())
                                        : "");
  facts.emplace_back("backend", metadata.backend().empty()
                                    ? (metadata.configuration().count(kBackendKey) > 0
                                           ? metadata.configuration().at(kBackendKey)
                                           : "")
                                    : metadata.backend());
  // Sorted: protobuf maps have no order.
  std::map<std::string, std::string> configuration(metadata.configuration().begin(),
                                                   metadata.configuration().end());
  for (const auto& [key, value] : configuration) {
    if (key == "backend" || key == "dataset_directory") continue;
    facts.emplace_back(key, value);
  }
  const std::optional<double> events = RunEvents(run);
  facts.emplace_back("Total Events", events.has_value() ? Number(*events) : "");
  const std::optional<double> cores = RunCores(run);
  facts.emplace_back("cores", cores.has_value() ? Number(*cores) : "");
  facts.emplace_back("oversubscribed", RunOversubscribed(run) ? "yes" : "no");
  facts.emplace_back("load average (1 min) at start",
                     host.has_load_average_1m_start()
                         ? absl::StrFormat("%.2f", host.load_average_1m_start())
                         : "");
  return facts;
}

std::vector<ConfigurationFact> ConfigurationFacts(const std::vector<v1::Measurement>& runs) {
  std::vector<ConfigurationFact> facts;
  std::map<std::string, size_t> index;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const auto& [key, value] : RunFacts(runs[r])) {
      auto [it, inserted] = index.emplace(key, facts.size());
      if (inserted) facts.push_back({key, std::vector<std::string>(runs.size()), false});
      facts[it->second].values[r] = ReplaceControlCharacters(value);
    }
  }
  std::vector<ConfigurationFact> same;
  std::vector<ConfigurationFact> differ;
  for (ConfigurationFact& fact : facts) {
    fact.differs = std::any_of(fact.values.begin(), fact.values.end(),
                               [&](const std::string& v) { return v != fact.values.front(); });
    // A fact unknown in every run says nothing.
    if (!fact.differs && fact.values.front().empty()) continue;
    (fact.differs ? differ : same).push_back(std::move(fact));
  }
  for (ConfigurationFact& fact : differ) same.push_back(std::move(fact));
  return same;
}

std::vector<RunGroup> GroupRuns(const std::vector<std::string>& labels,
                                const std::vector<v1::Measurement>& runs,
                                const std::vector<int>& configuration_of_run) {
  std::vector<RunGroup> groups;
  std::map<std::string, size_t> index;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::optional<double> cores = RunCores(runs[r]);
    const v1::MeasurementMetadata& metadata = runs[r].metadata();
    const std::string backend = metadata.backend();
    const std::string workload = RunWorkload(runs[r]);
    // Runs of different builds or hosts are never repeats of each other.
    const std::string key =
        configuration_of_run.empty()
            ? absl::StrCat(workload, "\n", backend, "\n",
                           cores.has_value() ? Exact(*cores) : "unknown", "\n",
                           metadata.tool_version(), "\n", BuildText(metadata.tool_build()), "\n",
                           BuildText(metadata.analysis_build()), "\n", metadata.host(), "\n",
                           metadata.host_facts().cpu_model())
            : absl::StrCat(configuration_of_run[r]);
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.push_back(RunGroup{{}, "", cores, backend, workload});
    groups[it->second].runs.push_back(r);
  }
  for (RunGroup& group : groups) {
    std::vector<std::string> names;
    for (size_t r : group.runs) names.push_back(ReplaceControlCharacters(labels[r]));
    group.name = absl::StrJoin(names, ", ");
    if (group.runs.size() > 1) absl::StrAppend(&group.name, " (n=", group.runs.size(), ")");
  }
  return groups;
}

// How a change worse than the threshold compares with the noise: nullopt when there is no
// noise estimate, else whether it is beyond it.
using NoiseVerdict = std::optional<bool>;

ChangeStatus Classify(const MetricComparison& metric, const RunGroup& baseline_group,
                      const RunGroup& group, const ReplicateSummary& baseline,
                      const ReplicateSummary& value, std::optional<double> change,
                      NoiseVerdict beyond_noise, const ComparisonOptions& options) {
  if (value.n == 0 || baseline.n == 0 || !change.has_value()) return ChangeStatus::kUnknown;
  if (!IsRegression(metric.better, *change, options.regression_threshold_percent)) {
    return ChangeStatus::kOk;
  }
  if (baseline_group.cores.has_value() && group.cores.has_value()) {
    if (metric.expected_with_more_cores && *group.cores > *baseline_group.cores) {
      return ChangeStatus::kExpectedWithMoreCores;
    }
    if (metric.expected_with_fewer_cores && *group.cores < *baseline_group.cores) {
      return ChangeStatus::kExpectedWithFewerCores;
    }
  }
  if (!beyond_noise.has_value()) {
    return options.threshold_given ? ChangeStatus::kRegression : ChangeStatus::kNoNoiseEstimate;
  }
  return *beyond_noise ? ChangeStatus::kRegression : ChangeStatus::kWithinNoise;
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

// The chunks that finished with events: their time per event is a noise estimate of a run.
bool UsableChunk(const v1::ChunkRecord& chunk) {
  return chunk.status() != v1::CHUNK_STATUS_FAILED && chunk.events() > 0 &&
         std::isfinite(chunk.duration_seconds()) && chunk.duration_seconds() > 0;
}

// True when every usable chunk of every run has a CPU time: CPU time per event is then the
// per-chunk figure, as it hardly moves when other processes load the host; wall time otherwise.
bool EveryChunkHasCpu(const std::vector<v1::Measurement>& runs) {
  bool any = false;
  for (const v1::Measurement& run : runs) {
    for (const v1::ChunkRecord& chunk : run.chunks()) {
      if (!UsableChunk(chunk)) continue;
      if (!(chunk.cpu_seconds() > 0) || !std::isfinite(chunk.cpu_seconds())) return false;
      any = true;
    }
  }
  return any;
}

// Microseconds per event of each usable chunk of `run`.
void AppendChunkTimesPerEvent(const v1::Measurement& run, bool cpu, std::vector<double>* out) {
  for (const v1::ChunkRecord& chunk : run.chunks()) {
    if (!UsableChunk(chunk)) continue;
    const double seconds = cpu ? chunk.cpu_seconds() : chunk.duration_seconds();
    out->push_back(1e6 * seconds / static_cast<double>(chunk.events()));
  }
}

// The per-chunk row: each group's chunks pooled, the standard error of their mean, and the
// rank test against the baseline's chunks. nullopt when no run has usable chunks.
std::optional<MetricComparison> PerChunkRow(const std::vector<v1::Measurement>& runs,
                                            const std::vector<RunGroup>& groups) {
  const bool cpu = EveryChunkHasCpu(runs);
  std::vector<std::vector<double>> samples(groups.size());
  bool any = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t r : groups[g].runs) AppendChunkTimesPerEvent(runs[r], cpu, &samples[g]);
    any = any || !samples[g].empty();
  }
  if (!any) return std::nullopt;
  MetricComparison row;
  row.label = cpu ? "Chunk CPU Time per Event" : "Chunk Wall Time per Event";
  row.unit = "us";
  row.better = Better::kLower;
  row.expected_with_more_cores = true;  // contention for caches and memory bandwidth
  row.test = "Mann-Whitney U over chunks";
  for (size_t g = 0; g < groups.size(); ++g) {
    GroupValue value;
    value.summary = SummarizeReplicates(samples[g]);
    value.status = g == 0 ? ChangeStatus::kBaseline : ChangeStatus::kUnknown;
    if (value.summary.stddev.has_value()) {
      value.standard_error =
          *value.summary.stddev / std::sqrt(static_cast<double>(value.summary.n));
    }
    if (g > 0) {
      if (const std::optional<RankTest> test = MannWhitney(samples[0], samples[g])) {
        value.p_value = test->p_two_sided;
      }
    }
    row.groups.push_back(value);
  }
  return row;
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

// Per core count (oversubscribed runs apart), the speedup of the mean time per event against
// the smallest core count that is not oversubscribed; empty unless every point has one
// workload and there are two core counts.
std::vector<MeasuredSpeedup> MeasuredSpeedups(const std::vector<ScalingPoint>& points,
                                              double* reference_cores) {
  std::map<std::pair<bool, double>, std::vector<double>> times;  // (oversubscribed, cores)
  for (const ScalingPoint& point : points) {
    if (point.workload != points.front().workload || !(point.seconds_per_event > 0)) return {};
    times[{point.oversubscribed, point.cores}].push_back(point.seconds_per_event);
  }
  const auto reference = times.lower_bound({false, 0.0});
  if (reference == times.end() || reference->first.first || times.size() < 2) return {};
  *reference_cores = reference->first.second;
  const ReplicateSummary base = SummarizeReplicates(reference->second);
  std::vector<MeasuredSpeedup> speedups;
  for (const auto& [key, values] : times) {
    if (key == reference->first) {  // 1 by definition, not a measurement
      speedups.push_back({key.second, false, Ratio{1.0, std::nullopt}});
      continue;
    }
    const std::optional<Ratio> speedup = Speedup(base, SummarizeReplicates(values));
    if (speedup.has_value()) speedups.push_back({key.second, key.first, *speedup});
  }
  std::stable_sort(
      speedups.begin(), speedups.end(),
      [](const MeasuredSpeedup& a, const MeasuredSpeedup& b) { return a.cores < b.cores; });
  return speedups;
}

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

std::string FormatTable(const ComparisonResult& result, const ComparisonOptions& options) {
  Markers markers;
  markers.regression = options.unicode ? "\u25BC" : "!";
  const std::string plus_minus = options.unicode ? "\u00B1" : "+-";
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
  const std::string vertical = options.unicode ? "\u2502" : "|";
  const std::string horizontal = options.unicode ? "\u2500" : "-";
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
    std::string rule;
    for (size_t c = 0; c < widths.size(); ++c) {
      const size_t pad = c == 0 || c + 1 == widths.size() ? 1 : 2;  // as the lines below
      for (size_t i = 0; i < widths[c] + pad; ++i) rule += horizontal;
      if (c + 1 < widths.size()) rule += options.unicode ? "\u253C" : "+";
    }
    if (p > 0) absl::StrAppend(&out, "\n");
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
  }
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

// What each run's own warnings and findings say: a difference may be that, not the code.
void FillRunNotes(const std::vector<std::string>& labels, const std::vector<v1::Measurement>& runs,
                  ComparisonResult* result) {
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const v1::Warning& warning : runs[r].warnings()) {
      result->run_warnings.push_back(
          absl::StrCat("WARNING (", ReplaceControlCharacters(labels[r]),
                       "): ", ReplaceControlCharacters(warning.message())));
    }
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    const v1::AggregatedMetrics& m = runs[r].metrics();
    if (!m.findings_evaluated()) continue;
    std::vector<std::string> codes;
    for (const v1::Finding& finding : m.findings()) {
      codes.push_back(absl::StrCat(finding.code(), " (",
                                   absl::AsciiStrToLower(SeverityLabel(finding.severity())), ")"));
    }
    result->run_findings.push_back(absl::StrCat(
        "Findings (", ReplaceControlCharacters(labels[r]),
        "): ", codes.empty() ? "none" : ReplaceControlCharacters(absl::StrJoin(codes, ", "))));
  }
}

MetricComparison* FindMetric(std::vector<MetricComparison>* metrics, absl::string_view label) {
  for (MetricComparison& metric : *metrics) {
    if (metric.label == label) return &metric;
  }
  return nullptr;
}

// A Data Rate that rose is no improvement when the bytes behind it grew by more than this
// fraction: the chunks re-read bytes (e.g. smaller chunks re-reading compressed baskets).
constexpr double kRereadingTolerance = 0.05;

// Data Rate rose while the read amplification grew (or, when that is unknown on a side, the
// bytes read per event grew): kFromRereading instead of an unmarked improvement.
void MarkDataRateFromRereading(const std::vector<RunGroup>& groups,
                               std::vector<MetricComparison>* metrics,
                               std::vector<std::string>* notes) {
  MetricComparison* rate = FindMetric(metrics, "Data Rate");
  if (rate == nullptr) return;
  const MetricComparison* amplification =
      FindMetric(metrics, "Read Amplification (bytes read / file bytes)");
  const MetricComparison* per_event = FindMetric(metrics, "Bytes Read per Event");
  for (size_t g = 1; g < rate->groups.size(); ++g) {
    GroupValue& value = rate->groups[g];
    if (!value.change_percent.has_value() || *value.change_percent <= 0) continue;
    auto grew = [g](const MetricComparison* metric) -> std::optional<bool> {
      if (metric == nullptr) return std::nullopt;
      const ReplicateSummary& a = metric->groups.front().summary;
      const ReplicateSummary& b = metric->groups[g].summary;
      if (a.n == 0 || b.n == 0 || !(a.mean > 0)) return std::nullopt;
      return b.mean > a.mean * (1 + kRereadingTolerance);
    };
    const MetricComparison* evidence = amplification;
    std::optional<bool> reread = grew(amplification);
    if (!reread.has_value()) {
      evidence = per_event;
      reread = grew(per_event);
    }
    if (!reread.value_or(false)) continue;
    value.status = ChangeStatus::kFromRereading;
    notes->push_back(absl::StrCat(
        groups[g].name, ": Data Rate ", absl::StrFormat("%+.1f%%", *value.change_percent),
        " while ", evidence == amplification ? "read amplification" : "bytes read per event",
        " went from ", Number(evidence->groups.front().summary.mean), " to ",
        Number(evidence->groups[g].summary.mean)));
  }
}

// "B ran 1.90 ± 0.44x faster than A (...)" per compared configuration. The uncertainty comes
// from the repeats of the elapsed time when a side was repeated, else from the chunks (the
// standard errors of the two per-chunk means), else there is none and the line says so.
std::vector<std::string> Verdicts(const ComparisonResult& result,
                                  const std::vector<v1::Measurement>& runs) {
  const std::string plus_minus = "\u00B1";  // ASCII tables replace it
  const bool per_event = std::all_of(runs.begin(), runs.end(), [](const v1::Measurement& run) {
    return run.metrics().workflow().total_events() > 0;
  });
  auto times = [&](const RunGroup& group) {
    std::vector<double> values;
    for (size_t r : group.runs) {
      const v1::WorkflowMetrics& workflow = runs[r].metrics().workflow();
      if (!(workflow.elapsed_time_seconds() > 0)) continue;
      values.push_back(per_event ? workflow.elapsed_time_seconds() /
                                       static_cast<double>(workflow.total_events())
                                 : workflow.elapsed_time_seconds());
    }
    return SummarizeReplicates(values);
  };
  const MetricComparison* chunk_row = nullptr;
  for (const MetricComparison& metric : result.metrics) {
    if (!metric.test.empty()) chunk_row = &metric;
  }
  const std::string elapsed = per_event ? "elapsed time per event" : "elapsed time";
  std::vector<std::string> verdicts;
  const RunGroup& base = result.groups.front();
  const ReplicateSummary base_times = times(base);
  for (size_t g = 1; g < result.groups.size(); ++g) {
    const RunGroup& group = result.groups[g];
    const ReplicateSummary group_times = times(group);
    std::optional<Ratio> ratio;
    std::string basis;
    if (base_times.n > 1 || group_times.n > 1) {
      ratio = Speedup(base_times, group_times);
      basis = absl::StrCat(elapsed, ", mean of ", base_times.n, " and ", group_times.n, " runs");
    } else if (chunk_row != nullptr && chunk_row->groups.front().summary.n >= kRankTestMinSamples &&
               chunk_row->groups[g].summary.n >= kRankTestMinSamples) {
      ratio = Speedup(chunk_row->groups.front().summary, chunk_row->groups[g].summary);
      basis = absl::StrCat("per-chunk estimate: ", chunk_row->label, ", mean ", plus_minus,
                           " standard error over ", chunk_row->groups.front().summary.n, " and ",
                           chunk_row->groups[g].summary.n, " chunks");
    } else {
      ratio = Speedup(base_times, group_times);
      basis = absl::StrCat(elapsed, "; one run each and no chunk records: no noise estimate");
    }
    if (!ratio.has_value()) {
      verdicts.push_back(absl::StrCat(group.name, ": no verdict (no elapsed time on a side)"));
      continue;
    }
    const double v = ratio->value;
    const bool faster = v >= 1;
    std::string line =
        absl::StrCat(group.name, " ran ", absl::StrFormat("%.2f", faster ? v : 1 / v));
    if (ratio->standard_error.has_value()) {
      const double se = *ratio->standard_error;
      absl::StrAppend(&line, absl::StrFormat(" %s %.2f", plus_minus, faster ? se : se / (v * v)));
    }
    absl::StrAppend(&line, "x ", faster ? "faster" : "slower", " than ", base.name, " (", basis,
                    ")");
    if (ratio->standard_error.has_value() &&
        std::fabs(v - 1) <= kNoiseStandardErrors * *ratio->standard_error) {
      absl::StrAppend(&line, ": within the noise");
    }
    verdicts.push_back(std::move(line));
  }
  return verdicts;
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

std::vector<ComparedMetric> CompareMetrics(const std::vector<v1::Measurement>& runs) {
  std::vector<ComparedMetric> out;
  for (const MetricSpec& spec : Specs()) {
    ComparedMetric metric{spec.label,
                          spec.unit,
                          spec.better,
                          spec.trend == kFallsWithCores,
                          spec.trend == kGainsWithCores,
                          {}};
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
  // std::string keys: protobuf's Map would hash a const char* as a pointer.
  if (auto it = configuration.find(std::string("threads")); it != configuration.end()) {
    double threads = 0;
    if (absl::SimpleAtod(it->second, &threads) && threads > 0) return threads;
  }
  return std::nullopt;
}

bool RunOversubscribed(const v1::Measurement& run) {
  for (const v1::Warning& warning : run.warnings()) {
    if (warning.code() == "oversubscribed") return true;
  }
  const std::optional<double> cores = RunCores(run);
  const double usable = run.metadata().host_facts().usable_cpus();
  return cores.has_value() && usable > 0 && *cores > usable;
}

std::string RunWorkload(const v1::Measurement& run) {
  std::map<std::string, std::string> configuration(run.metadata().configuration().begin(),
                                                   run.metadata().configuration().end());
  std::vector<std::string> parts;
  for (const auto& [key, value] : configuration) {
    if (!IsResourceKey(key)) parts.push_back(absl::StrCat(key, "=", value));
  }
  const std::optional<double> events = RunEvents(run);
  parts.push_back(absl::StrCat("events=", events.has_value() ? Number(*events) : "unknown"));
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<ComparisonFormat> ParseComparisonFormat(absl::string_view name) {
  if (name == "table") return ComparisonFormat::kTable;
  if (name == "csv") return ComparisonFormat::kCsv;
  if (name == "json") return ComparisonFormat::kJson;
  if (name == "markdown" || name == "md") return ComparisonFormat::kMarkdown;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be table, csv, json or markdown for compare, got '", name, "'"));
}

absl::string_view ChangeStatusName(ChangeStatus status) {
  switch (status) {
    case ChangeStatus::kBaseline:
      return "baseline";
    case ChangeStatus::kOk:
      return "ok";
    case ChangeStatus::kWithinNoise:
      return "within_noise";
    case ChangeStatus::kExpectedWithMoreCores:
      return "expected_with_more_cores";
    case ChangeStatus::kExpectedWithFewerCores:
      return "expected_with_fewer_cores";
    case ChangeStatus::kRegression:
      return "regression";
    case ChangeStatus::kNoNoiseEstimate:
      return "no_noise_estimate";
    case ChangeStatus::kFromRereading:
      return "from_rereading";
    default:
      return "unknown";
  }
}

v1::Measurement ComparedPart(v1::Measurement run) {
  v1::Measurement part;
  if (run.has_metadata()) part.mutable_metadata()->Swap(run.mutable_metadata());
  part.mutable_warnings()->Swap(run.mutable_warnings());
  if (run.has_metrics()) {
    part.mutable_metrics()->Swap(run.mutable_metrics());
    if (part.metrics().has_chunks()) part.mutable_metrics()->mutable_chunks()->clear_chunk_info();
  }
  // The per-chunk noise estimate reads these four fields of each record.
  part.mutable_chunks()->Reserve(run.chunks_size());
  for (const v1::ChunkRecord& chunk : run.chunks()) {
    v1::ChunkRecord& kept = *part.add_chunks();
    kept.set_events(chunk.events());
    kept.set_duration_seconds(chunk.duration_seconds());
    kept.set_cpu_seconds(chunk.cpu_seconds());
    kept.set_status(chunk.status());
  }
  return part;
}

bool RunsShareKnownCode(const std::vector<v1::Measurement>& runs) {
  std::string first;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto& configuration = runs[r].metadata().configuration();
    std::string identity;
    for (const std::string& key : {std::string("code build-id"), std::string("label")}) {
      const auto it = configuration.find(key);
      if (it != configuration.end() && !it->second.empty()) {
        absl::StrAppend(&identity, key, "=", it->second, "\n");
      }
    }
    if (identity.empty()) return false;
    if (r == 0) first = identity;
    if (identity != first) return false;
  }
  return !runs.empty();
}

absl::StatusOr<ComparisonResult> CompareRuns(const std::vector<std::string>& labels,
                                             const std::vector<v1::Measurement>& runs,
                                             const ComparisonOptions& options) {
  if (runs.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("compare needs at least two runs, got ", runs.size()));
  }
  if (labels.size() != runs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compare: ", labels.size(), " labels for ", runs.size(), " runs"));
  }
  ComparisonResult result;
  result.labels = labels;
  result.fail_on_regression = options.fail_on_regression;
  result.regression_rule = NoiseRule(options);
  result.configuration = ConfigurationFacts(runs);
  if (!options.configuration_of_run.empty() && options.configuration_of_run.size() != runs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("compare: ", options.configuration_of_run.size(),
                                                   " configurations for ", runs.size(), " runs"));
  }
  result.groups = GroupRuns(labels, runs, options.configuration_of_run);
  result.repeats_of_known_code = result.groups.size() == 1 && RunsShareKnownCode(runs);
  if (result.groups.size() == 1 && options.fail_on_regression && !result.repeats_of_known_code) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compare --fail_on_regression: all ", runs.size(),
        " runs have the same configuration and none records which code it measured (no code "
        "build-id or --label), so they may be versions that cannot be told apart; run each "
        "version with --label=VERSION, or give each version's runs as one comma-separated "
        "argument, e.g. collect compare BASE1,BASE2 NEW1,NEW2"));
  }
  for (const ComparedMetric& metric : CompareMetrics(runs)) {
    MetricComparison compared{metric.label,
                              metric.unit,
                              metric.better,
                              metric.expected_with_more_cores,
                              metric.expected_with_fewer_cores,
                              {},
                              ""};
    for (const RunGroup& group : result.groups) {
      std::vector<double> values;
      for (size_t r : group.runs) {
        if (metric.values[r].has_value()) values.push_back(*metric.values[r]);
      }
      GroupValue value;
      value.summary = SummarizeReplicates(values);
      value.status = ChangeStatus::kBaseline;
      compared.groups.push_back(value);
    }
    result.metrics.push_back(std::move(compared));
  }
  if (std::optional<MetricComparison> per_chunk = PerChunkRow(runs, result.groups)) {
    result.metrics.push_back(*std::move(per_chunk));
  }
  for (MetricComparison& metric : result.metrics) {
    const ReplicateSummary& baseline = metric.groups.front().summary;
    for (size_t g = 1; g < metric.groups.size(); ++g) {
      GroupValue& value = metric.groups[g];
      if (baseline.n > 0 && value.summary.n > 0) {
        value.change_percent = PercentChange(baseline.mean, value.summary.mean);
      }
      NoiseVerdict beyond;
      if (!metric.test.empty()) {
        if (value.p_value.has_value()) beyond = *value.p_value < kRankTestAlpha;
      } else if (const std::optional<double> noise = DifferenceNoise(baseline, value.summary)) {
        beyond = std::fabs(value.summary.mean - baseline.mean) > *noise;
      }
      value.status = Classify(metric, result.groups.front(), result.groups[g], baseline,
                              value.summary, value.change_percent, beyond, options);
    }
  }
  MarkDataRateFromRereading(result.groups, &result.metrics, &result.rereading_notes);
  for (const MetricComparison& metric : result.metrics) {
    for (const GroupValue& value : metric.groups) {
      if (value.status == ChangeStatus::kRegression) ++result.regressions;
    }
  }
  result.verdicts = Verdicts(result, runs);
  FillRunNotes(labels, runs, &result);
  // A scaling study: the runs with known cores, normalised per event.
  std::set<double> core_counts;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::optional<double> cores = RunCores(runs[r]);
    if (!cores.has_value()) continue;
    core_counts.insert(*cores);
    const std::optional<double> events = RunEvents(runs[r]);
    const double elapsed = runs[r].metrics().workflow().elapsed_time_seconds();
    result.scaling_points.push_back(
        ScalingPoint{ReplaceControlCharacters(labels[r]), *cores,
                     events.has_value() && *events > 0 ? elapsed / *events : 0.0,
                     RunWorkload(runs[r]), RunOversubscribed(runs[r])});
  }
  if (core_counts.size() >= 2) {
    result.speedups = MeasuredSpeedups(result.scaling_points, &result.speedup_reference_cores);
    absl::StatusOr<AmdahlFit> fit = FitAmdahl(result.scaling_points);
    if (fit.ok()) {
      result.fit = *std::move(fit);
    } else {
      // FitAmdahl's sentences start "no Amdahl fit: ...".
      result.no_fit_reason = std::string(fit.status().message());
    }
  }
  switch (options.format) {
    case ComparisonFormat::kTable:
      result.text = absl::StrCat(FormatTable(result, options), RunNotes(result),
                                 FitSentenceOf(result, options.unicode));
      break;
    case ComparisonFormat::kCsv:
      result.text = FormatCsv(result);
      break;
    case ComparisonFormat::kJson:
      result.text = FormatJson(result, options);
      break;
    case ComparisonFormat::kMarkdown:
      result.text = absl::StrCat(FormatMarkdown(result, options), "\n", RunNotes(result));
      break;
  }
  return result;
}

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
