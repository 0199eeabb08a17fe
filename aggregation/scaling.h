// Formulas of a scaling study over several saved runs (`collect compare`): the mean and spread
// of repeated measurements of one configuration, the noise rule that decides whether a change
// between two configurations is beyond the run-to-run noise, and Amdahl's law fitted to the
// time per event against the core count.
//
// Thread-safety: pure functions. Cost: linear in the number of values or points.
#ifndef ROASTCOFFEA_AGGREGATION_SCALING_H_
#define ROASTCOFFEA_AGGREGATION_SCALING_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace roastcoffea {

// Repeated measurements of one value in one configuration.
struct ReplicateSummary {
  size_t n = 0;
  double mean = 0;
  // Sample standard deviation (n - 1 in the denominator); unknown with fewer than two values.
  std::optional<double> stddev;
};

// The mean and spread of `values` (non-finite values are left out; n counts the rest).
ReplicateSummary SummarizeReplicates(const std::vector<double>& values);

// How many combined standard errors a difference of means must exceed to be beyond the noise.
inline constexpr double kNoiseStandardErrors = 2.0;

// The noise of the difference of two means: kNoiseStandardErrors x sqrt(s_a^2 / n_a +
// s_b^2 / n_b). A side with a single run borrows the other side's standard deviation (the same
// measurement on the same host is assumed to scatter alike); nullopt when neither side has two
// or more runs (the noise is unknown).
std::optional<double> DifferenceNoise(const ReplicateSummary& a, const ReplicateSummary& b);

// True when |mean_b - mean_a| exceeds DifferenceNoise, or when the noise is unknown (then only
// the caller's threshold can decide).
bool BeyondNoise(const ReplicateSummary& a, const ReplicateSummary& b);

// A ratio of two means with its standard error.
struct Ratio {
  double value = 0;
  std::optional<double> standard_error;  // unknown when neither side was repeated
};

// Speedup of `compared` over `baseline` (times): baseline.mean / compared.mean, with its
// standard error by first-order propagation of the standard errors of the two means
// (relative: sqrt(s_a^2 / (n_a mean_a^2) + s_b^2 / (n_b mean_b^2))); a side with a single run
// borrows the other side's standard deviation, as DifferenceNoise does. nullopt when a side
// is empty or a mean is not positive.
std::optional<Ratio> Speedup(const ReplicateSummary& baseline, const ReplicateSummary& compared);

// Mann-Whitney U rank test of two independent samples (e.g. the per-chunk time per event of
// two runs): no assumption of normality, robust to the long tail of chunk durations. Ties get
// mid-ranks; the p value uses the normal approximation with the tie correction, so each sample
// needs kRankTestMinSamples values.
struct RankTest {
  double u = 0;  // U of sample a: the number of pairs (a_i, b_j) with a_i > b_j (ties count 1/2)
  double z = 0;  // (U - n_a n_b / 2) / sigma_U; positive when a tends to be larger
  double p_two_sided = 1;
  size_t n_a = 0;
  size_t n_b = 0;
};

// The fewest values per sample for the normal approximation of MannWhitney.
inline constexpr size_t kRankTestMinSamples = 8;

// A difference is significant for the rank test below this two-sided p value: strict, since a
// run's hundreds of chunks make small, irrelevant shifts (a busier host) significant.
inline constexpr double kRankTestAlpha = 0.001;

// nullopt when a sample has fewer than kRankTestMinSamples finite values, or every value of
// both samples is equal. Non-finite values are left out. Cost: O((n_a + n_b) log(n_a + n_b)).
std::optional<RankTest> MannWhitney(const std::vector<double>& a, const std::vector<double>& b);

// One run of a scaling study.
struct ScalingPoint {
  std::string label;             // names the run in messages
  double cores = 0;              // cores the run used (threads, workers' cores)
  double seconds_per_event = 0;  // elapsed time / events: normalised per event
  std::string workload;          // runs of one study must have the same workload
  bool oversubscribed = false;   // more threads than usable CPUs: left out of the fit
};

// Amdahl's law t(n) = t1 (s + (1 - s) / n), fitted by least squares to the time per event:
// t(n) = a + b / n, serial fraction s = a / (a + b). When the unconstrained fit gives a < 0
// (faster than linear), a = 0 is imposed and b refitted, so s = 0.
struct AmdahlFit {
  double serial_fraction = 0;
  double single_core_seconds_per_event = 0;  // t1 = a + b
  // Goodness of fit: 1 - (residual sum of squares) / (total sum of squares) of the time per
  // event, of the model as reported; 1 when every point has the same time and the model hits it.
  double r_squared = 0;
  size_t points_used = 0;
  size_t core_counts = 0;                  // distinct core counts among the points used
  double max_cores = 0;                    // the largest core count used
  double predicted_speedup_at_double = 0;  // AmdahlSpeedup(s, 2 x max_cores)
  std::vector<std::string> excluded;       // labels of the oversubscribed points left out
};

// Speedup 1 / (s + (1 - s) / n) at `cores` = n.
double AmdahlSpeedup(double serial_fraction, double cores);

// The minimum of distinct core counts a fit needs: two points always fit a line.
inline constexpr size_t kAmdahlMinCoreCounts = 3;

// FailedPrecondition with a sentence saying why when: the points do not all have the same
// workload (naming two that differ); fewer than kAmdahlMinCoreCounts distinct core counts
// remain after the oversubscribed points are left out (saying which); a point has no positive
// finite cores or time per event (InvalidArgument naming it); or the time per event grows with
// the cores (b < 0: nothing parallel to fit).
absl::StatusOr<AmdahlFit> FitAmdahl(const std::vector<ScalingPoint>& points);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_SCALING_H_
