// Comparing runs: `collect compare A B [C ...]` prints key metrics side by side, each run's
// change in percent against the first (the baseline), and marks regressions; with three or
// more runs on different core counts it also fits Amdahl's law.
//
// Thread-safety: pure functions. Cost: O(runs x metrics); the fit solves one 2-column least
// squares problem (Eigen).
#ifndef ROASTCOFFEA_EXPORT_COMPARE_H_
#define ROASTCOFFEA_EXPORT_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Which way a metric gets worse.
enum class Better { kHigher, kLower, kNeither };

struct ComparedMetric {
  std::string label;  // "Event Rate (Elapsed Time)"
  std::string unit;   // "kHz", "s", "bytes", "%", ...
  Better better = Better::kNeither;
  std::vector<std::optional<double>> values;  // one per run; nullopt where unknown
};

struct ComparisonOptions {
  // A change worse than this (in percent of the baseline) is a regression.
  double regression_threshold_percent = 5.0;
  // Unicode box lines and "▲"/"▼" markers; false: ASCII only.
  bool unicode = true;
};

// The compared metrics, in display order, for `runs` (at least one).
std::vector<ComparedMetric> CompareMetrics(const std::vector<v1::Measurement>& runs);

// Change of `value` against `baseline` in percent; nullopt when either is unknown or the
// baseline is 0.
std::optional<double> PercentChange(std::optional<double> baseline, std::optional<double> value);

// True when `change_percent` is worse than the threshold in the metric's bad direction.
bool IsRegression(Better better, double change_percent, double threshold_percent);

// Amdahl's law T(n) = T1 (s + (1 - s) / n) fitted by least squares to (cores, elapsed) of the
// runs: T(n) = a + b / n, serial fraction s = a / (a + b).
struct AmdahlFit {
  double serial_fraction = 0;
  double single_core_seconds = 0;  // a + b
  double max_cores = 0;            // the largest core count among the runs
  double predicted_speedup_at_double = 0;  // T1 / T(2 * max_cores)
};

// The cores of a run: WorkerMetrics.total_cores when tracked, else the "threads" entry of its
// configuration; nullopt when neither is known.
std::optional<double> RunCores(const v1::Measurement& run);

// FailedPrecondition (saying what is missing) unless at least three runs have known cores and
// a positive elapsed time, with at least two different core counts; the fraction is clamped to
// [0, 1].
absl::StatusOr<AmdahlFit> FitAmdahl(const std::vector<v1::Measurement>& runs);

// The comparison table (Metric, Unit, then one column per run: the value, and for the other
// runs its change against the first), the legend, and the Amdahl fit or why there is none.
// `labels` name the runs (one per run). Text ends in '\n'.
std::string FormatComparison(const std::vector<std::string>& labels,
                             const std::vector<v1::Measurement>& runs,
                             const ComparisonOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_COMPARE_H_
