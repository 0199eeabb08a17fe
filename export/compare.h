// Comparing runs: `collect compare A B [C ...]` for scaling studies and CI.
//
// Runs with the same workload (every configuration entry that is not a resource, plus the
// events processed; the measured code's identity, "code build-id" and "label", is part of it),
// backend and cores are repeats of one configuration: each metric is shown as their mean ±
// sample standard deviation (n runs). The first run's configuration is the baseline; every
// other configuration gets its change in percent of the baseline's mean.
// A change counts as a regression only when (1) it is worse than the threshold in the metric's
// bad direction, (2) it is beyond a noise estimate, and (3) it is not expected from the core
// count (metrics that fall when cores are added are marked "expected" instead).
// Noise estimates: for a metric of the whole run, |difference of means| > 2 combined standard
// errors of the repeats (aggregation/scaling.h DifferenceNoise; a side measured once borrows
// the other's spread). With no repeats on either side there is no noise estimate and no
// regression ("?"), unless the user gave the threshold explicitly (threshold_given: then the
// threshold alone decides). The per-chunk time per event row is its own noise estimate: the
// chunks of each side are compared with the Mann-Whitney rank test (aggregation/scaling.h),
// significant below kRankTestAlpha.
// Data Rate that rose while the chunks re-read more bytes (read amplification, or bytes read
// per event when that is unknown) is marked "not an improvement" (kFromRereading).
// With runs of one workload on at least three distinct core counts, Amdahl's law is fitted to
// the time per event (aggregation/scaling.h FitAmdahl), oversubscribed runs left out.
//
// Thread-safety: pure functions. Cost: O(runs x metrics + chunks log chunks).
#ifndef ROASTCOFFEA_EXPORT_COMPARE_H_
#define ROASTCOFFEA_EXPORT_COMPARE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "aggregation/metric_catalogue.h"
#include "aggregation/scaling.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ComparedMetric {
  std::string label;  // "Event Rate (Elapsed Time)", as in the terminal tables
  std::string unit;   // "kHz", "s", "bytes", "%", ...
  Better better = Better::kNeither;
  // Gets worse (in its bad direction) when the same workload runs on more cores, without any
  // regression of the code: e.g. CPU Efficiency, Event Rate (per tracked core), Peak Memory.
  bool expected_with_more_cores = false;
  // Gets worse when the same workload runs on fewer cores: Elapsed Time, Event Rate (Elapsed
  // Time), Data Rate (a scaling study with the largest core count as the baseline).
  bool expected_with_fewer_cores = false;
  std::vector<std::optional<double>> values;  // one per run; nullopt where unknown
};

// The compared metrics, in display order, for `runs` (at least one); only metrics known in at
// least one run.
std::vector<ComparedMetric> CompareMetrics(const std::vector<v1::Measurement>& runs);

// Change of `value` against `baseline` in percent; nullopt when either is unknown or the
// baseline is 0.
std::optional<double> PercentChange(std::optional<double> baseline, std::optional<double> value);

// True when `change_percent` is worse than the threshold in the metric's bad direction.
bool IsRegression(Better better, double change_percent, double threshold_percent);

// The cores of a run: WorkerMetrics.total_cores when tracked, else the "threads" entry of its
// configuration; nullopt when neither is known.
std::optional<double> RunCores(const v1::Measurement& run);

// True when the run had more worker threads than usable CPUs: its warning "oversubscribed", or
// RunCores above HostFacts.usable_cpus.
bool RunOversubscribed(const v1::Measurement& run);

// What the run measured, as "key=value, ..." in key order: the configuration entries that are
// not resources (threads, workers, backend, sampling interval, ...), and the events processed
// ("events=N", or "events=unknown").
std::string RunWorkload(const v1::Measurement& run);

enum class ComparisonFormat { kTable, kCsv, kJson, kMarkdown };

// "table", "csv", "json" or "markdown" (also "md"); InvalidArgument naming the value otherwise.
absl::StatusOr<ComparisonFormat> ParseComparisonFormat(absl::string_view name);

// The exit status of `collect compare --fail_on_regression` when a regression was found.
inline constexpr int kRegressionExitCode = 5;

struct ComparisonOptions {
  ComparisonFormat format = ComparisonFormat::kTable;
  // A change worse than this (in percent of the baseline's mean) may be a regression.
  double regression_threshold_percent = 5.0;
  // The caller should fail (kRegressionExitCode) when a regression is found: see
  // ComparisonResult::failed.
  bool fail_on_regression = false;
  // Unicode box lines and "▼" markers; false: ASCII only (table format).
  bool unicode = true;
  // Which configuration each run belongs to, one entry per run (runs with the same number are
  // repeats; numbered in any order): for runs whose metadata cannot tell them apart, e.g. two
  // versions of the code. Empty: automatic, runs with the same workload, backend, cores, builds,
  // tool version and host are repeats.
  std::vector<int> configuration_of_run;
  // The user set regression_threshold_percent explicitly: where no noise estimate exists (one
  // run per side, no chunk records) the threshold alone decides. Otherwise such changes are
  // shown as kNoNoiseEstimate and are never regressions.
  bool threshold_given = false;
};

// One configuration: runs that repeat one workload with one backend on one core count.
struct RunGroup {
  std::vector<size_t> runs;  // indices into the compared runs, in argument order
  std::string name;          // "A" or "A, B (n=2)": the run labels
  std::optional<double> cores;
  std::string backend;
  std::string workload;  // RunWorkload
};

enum class ChangeStatus {
  kBaseline,                // the first configuration
  kUnknown,                 // no value, or no change (baseline unknown or 0)
  kOk,                      // better, or not worse than the threshold
  kWithinNoise,             // worse than the threshold but not beyond the noise
  kExpectedWithMoreCores,   // worse, as expected from more cores
  kExpectedWithFewerCores,  // worse, as expected from fewer cores
  kRegression,
  kNoNoiseEstimate,  // worse than the threshold, but nothing tells run-to-run noise apart
  kFromRereading,    // Data Rate rose while the chunks re-read more bytes: not an improvement
};

// "baseline", "unknown", "ok", "within_noise", "expected_with_more_cores",
// "expected_with_fewer_cores", "regression", "no_noise_estimate", "from_rereading".
absl::string_view ChangeStatusName(ChangeStatus status);

struct GroupValue {
  ReplicateSummary summary;              // over the group's runs where the value is known
  std::optional<double> change_percent;  // of the mean against the baseline's mean
  ChangeStatus status = ChangeStatus::kUnknown;
  // Per-chunk rows: the standard error of the mean over the group's chunks (shown instead of
  // the standard deviation), and the rank test's p value against the baseline.
  std::optional<double> standard_error;
  std::optional<double> p_value;
};

struct MetricComparison {
  std::string label;
  std::string unit;
  Better better = Better::kNeither;
  bool expected_with_more_cores = false;
  bool expected_with_fewer_cores = false;
  std::vector<GroupValue> groups;  // one per RunGroup
  // The noise test of a per-chunk row ("Mann-Whitney U over chunks"); empty for run metrics.
  std::string test;
};

// One configuration fact of every run ("threads", "host", "tool version", ...).
struct ConfigurationFact {
  std::string key;
  std::vector<std::string> values;  // one per run; "" where unknown
  bool differs = false;
};

// The measured speedup of one core count against the smallest (time per event).
struct MeasuredSpeedup {
  double cores = 0;
  bool oversubscribed = false;
  Ratio speedup;
};

struct ComparisonResult {
  std::vector<std::string> labels;               // one per run
  std::vector<ConfigurationFact> configuration;  // same-in-every-run facts, then the rest
  std::vector<RunGroup> groups;                  // groups[0] is the baseline
  std::vector<MetricComparison> metrics;
  int regressions = 0;  // cells with ChangeStatus::kRegression
  // The Amdahl fit, or why there is none (empty when all runs have one core count: no study).
  std::vector<ScalingPoint> scaling_points;
  std::optional<AmdahlFit> fit;
  std::string no_fit_reason;
  // With one workload on two or more core counts: the speedup per core count against the
  // smallest core count that is not oversubscribed (speedup_reference_cores).
  std::vector<MeasuredSpeedup> speedups;
  double speedup_reference_cores = 0;
  bool fail_on_regression = false;  // from the options
  // Every run falls into one configuration and records the same code (RunsShareKnownCode).
  bool repeats_of_known_code = false;
  std::string regression_rule;  // the rule above, with the threshold
  // One line per compared configuration: "B ran 1.90 ± 0.44x faster than A (elapsed time per
  // event, mean of 2 and 2 runs)", with how the uncertainty was estimated.
  std::vector<std::string> verdicts;
  // Why each Data Rate marked kFromRereading is no improvement: "B: read amplification 1 -> 4.4"
  // (or bytes read per event when a side has no read amplification).
  std::vector<std::string> rereading_notes;
  // Each run's warnings ("WARNING (A): ...") and findings ("Findings (A): ...").
  std::vector<std::string> run_warnings;
  std::vector<std::string> run_findings;
  std::string text;  // in the requested format, ends in '\n'

  bool regression_found() const { return regressions > 0; }
  // True when the caller should exit with kRegressionExitCode.
  bool failed() const { return fail_on_regression && regression_found(); }
};

// What CompareRuns reads of a run, taken out of `run`: its metadata, warnings and aggregated
// metrics without the per-chunk timeline (metrics.chunks.chunk_info), and of each chunk record
// only its events, duration, CPU time and status (the per-chunk noise estimate): an empty-ish
// record of a few hundred bytes, against kilobytes for a full one (sections, slices, files), so
// comparing many big runs holds one whole run at a time. CompareRuns gives the same result on
// ComparedPart(run) as on `run`.
v1::Measurement ComparedPart(v1::Measurement run);

// Compares `runs` (at least two), named by `labels` (one per run). InvalidArgument when there
// are fewer than two runs, the label or configuration_of_run count differs, or
// fail_on_regression is asked for while every run falls into one configuration and the runs do
// not record the measured code's identity (RunsShareKnownCode): they may be two versions that
// metadata cannot tell apart, so the message says how to label or group them. Runs that record
// the same code (build-id or label) and flags are repeats: shown with their spread, and the gate
// passes (nothing can regress), saying so.
// True when every run records the measured code's identity (configuration "code build-id" or
// "label", as collect writes them) and all record the same.
bool RunsShareKnownCode(const std::vector<v1::Measurement>& runs);

absl::StatusOr<ComparisonResult> CompareRuns(const std::vector<std::string>& labels,
                                             const std::vector<v1::Measurement>& runs,
                                             const ComparisonOptions& options);

// One cell as the table shows it: "2.41 ± 0.05 (+3.0%) ▼" (mean, spread when repeated, change
// against the baseline, "▼" regression, "~" within the noise, "*" expected with more cores,
// "?" no noise estimate, "^" Data Rate from re-reading).
std::string ComparisonCell(const GroupValue& value);

// The fit's sentence with the measured and fitted speedup per core count, or why there is no
// fit ("" when the runs are not a scaling study). Ends in '\n' unless empty.
std::string AmdahlFitText(const ComparisonResult& result);

// CompareRuns' text; an error's message (ending in '\n') when the runs cannot be compared.
std::string FormatComparison(const std::vector<std::string>& labels,
                             const std::vector<v1::Measurement>& runs,
                             const ComparisonOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_COMPARE_H_
