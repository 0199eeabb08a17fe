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
#include "aggregation/metric_catalogue.h"
#include "export/compare_text.h"
#include "export/display_width.h"
#include "export/tables.h"
#include "io/json_escape.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace {

using compare_internal::ComparisonText;
using compare_internal::Exact;
using compare_internal::NoiseRule;
using compare_internal::Number;
using compare_internal::Words;
using compare_internal::Wrap;
using export_internal::DisplayWidth;
using export_internal::ReplaceControlCharacters;

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

// The compared row of catalogue metric `key` (aggregation/metric_catalogue.h), or nullptr.
MetricComparison* FindCompared(std::vector<MetricComparison>* metrics, const std::string& key) {
  const MetricDef* def = FindMetric(key);
  if (def == nullptr) return nullptr;
  for (MetricComparison& metric : *metrics) {
    if (metric.label == def->label) return &metric;
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
  MetricComparison* rate = FindCompared(metrics, "data_rate_gbps");
  if (rate == nullptr) return;
  const MetricComparison* amplification = FindCompared(metrics, "read_amplification");
  const MetricComparison* per_event = FindCompared(metrics, "bytes_read_per_event");
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

}  // namespace

std::vector<ComparedMetric> CompareMetrics(const std::vector<v1::Measurement>& runs) {
  std::vector<const MetricDef*> compared;
  for (const MetricDef& metric : MetricCatalogue()) {
    if (metric.compare_rank > 0) compared.push_back(&metric);
  }
  std::stable_sort(compared.begin(), compared.end(), [](const MetricDef* a, const MetricDef* b) {
    return a->compare_rank < b->compare_rank;
  });
  std::vector<ComparedMetric> out;
  for (const MetricDef* spec : compared) {
    ComparedMetric metric{spec->label,
                          spec->compare_unit.empty() ? spec->unit : spec->compare_unit,
                          spec->better,
                          spec->trend == CoreTrend::kFallsWithCores,
                          spec->trend == CoreTrend::kGainsWithCores,
                          {}};
    bool any = false;
    for (const v1::Measurement& run : runs) {
      metric.values.push_back(ComparedValue(*spec, run.metrics()));
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
    if (part.metrics().has_chunks()) ClearChunkInfo(part.mutable_metrics()->mutable_chunks());
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

namespace {

absl::Status CheckCompareInputs(const std::vector<std::string>& labels,
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
  if (!options.configuration_of_run.empty() && options.configuration_of_run.size() != runs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("compare: ", options.configuration_of_run.size(),
                                                   " configurations for ", runs.size(), " runs"));
  }
  return absl::OkStatus();
}

// Each metric's replicate summary per group, all marked baseline until classified.
std::vector<MetricComparison> SummarizeGroups(const std::vector<v1::Measurement>& runs,
                                              const std::vector<RunGroup>& groups) {
  std::vector<MetricComparison> metrics;
  for (const ComparedMetric& metric : CompareMetrics(runs)) {
    MetricComparison compared{metric.label,
                              metric.unit,
                              metric.better,
                              metric.expected_with_more_cores,
                              metric.expected_with_fewer_cores,
                              {},
                              ""};
    for (const RunGroup& group : groups) {
      std::vector<double> values;
      for (size_t r : group.runs) {
        if (metric.values[r].has_value()) values.push_back(*metric.values[r]);
      }
      GroupValue value;
      value.summary = SummarizeReplicates(values);
      value.status = ChangeStatus::kBaseline;
      compared.groups.push_back(value);
    }
    metrics.push_back(std::move(compared));
  }
  if (std::optional<MetricComparison> per_chunk = PerChunkRow(runs, groups)) {
    metrics.push_back(*std::move(per_chunk));
  }
  return metrics;
}

// Every group after the first against the first: change, beyond the noise or not, status.
void ClassifyChanges(const ComparisonOptions& options, ComparisonResult* result) {
  for (MetricComparison& metric : result->metrics) {
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
      value.status = Classify(metric, result->groups.front(), result->groups[g], baseline,
                              value.summary, value.change_percent, beyond, options);
    }
  }
}

// A scaling study: the runs with known cores, normalised per event; speedups and an Amdahl fit
// once there are two core counts.
void AddScalingStudy(const std::vector<std::string>& labels,
                     const std::vector<v1::Measurement>& runs, ComparisonResult* result) {
  std::set<double> core_counts;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::optional<double> cores = RunCores(runs[r]);
    if (!cores.has_value()) continue;
    core_counts.insert(*cores);
    const std::optional<double> events = RunEvents(runs[r]);
    const double elapsed = runs[r].metrics().workflow().elapsed_time_seconds();
    result->scaling_points.push_back(
        ScalingPoint{ReplaceControlCharacters(labels[r]), *cores,
                     events.has_value() && *events > 0 ? elapsed / *events : 0.0,
                     RunWorkload(runs[r]), RunOversubscribed(runs[r])});
  }
  if (core_counts.size() < 2) return;
  result->speedups = MeasuredSpeedups(result->scaling_points, &result->speedup_reference_cores);
  absl::StatusOr<AmdahlFit> fit = FitAmdahl(result->scaling_points);
  if (fit.ok()) {
    result->fit = *std::move(fit);
  } else {
    // FitAmdahl's sentences start "no Amdahl fit: ...".
    result->no_fit_reason = std::string(fit.status().message());
  }
}

}  // namespace

absl::StatusOr<ComparisonResult> CompareRuns(const std::vector<std::string>& labels,
                                             const std::vector<v1::Measurement>& runs,
                                             const ComparisonOptions& options) {
  if (absl::Status valid = CheckCompareInputs(labels, runs, options); !valid.ok()) return valid;
  ComparisonResult result;
  result.labels = labels;
  result.fail_on_regression = options.fail_on_regression;
  result.regression_rule = NoiseRule(options);
  result.configuration = ConfigurationFacts(runs);
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
  result.metrics = SummarizeGroups(runs, result.groups);
  ClassifyChanges(options, &result);
  MarkDataRateFromRereading(result.groups, &result.metrics, &result.rereading_notes);
  for (const MetricComparison& metric : result.metrics) {
    for (const GroupValue& value : metric.groups) {
      if (value.status == ChangeStatus::kRegression) ++result.regressions;
    }
  }
  result.verdicts = Verdicts(result, runs);
  FillRunNotes(labels, runs, &result);
  AddScalingStudy(labels, runs, &result);
  result.text = ComparisonText(result, options);
  return result;
}

}  // namespace roastcoffea
