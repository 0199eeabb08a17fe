#include "aggregation/scaling.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace roastcoffea {

ReplicateSummary SummarizeReplicates(const std::vector<double>& values) {
  ReplicateSummary summary;
  double sum = 0;
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    ++summary.n;
    sum += value;
  }
  if (summary.n == 0) return summary;
  summary.mean = sum / summary.n;
  if (summary.n < 2) return summary;
  double squares = 0;  // two passes: no cancellation for values far from 0
  for (double value : values) {
    if (std::isfinite(value)) squares += (value - summary.mean) * (value - summary.mean);
  }
  summary.stddev = std::sqrt(squares / (summary.n - 1));
  return summary;
}

std::optional<double> DifferenceNoise(const ReplicateSummary& a, const ReplicateSummary& b) {
  if (a.n == 0 || b.n == 0) return std::nullopt;
  const std::optional<double> sa = a.stddev.has_value() ? a.stddev : b.stddev;
  const std::optional<double> sb = b.stddev.has_value() ? b.stddev : a.stddev;
  if (!sa.has_value() || !sb.has_value()) return std::nullopt;
  return kNoiseStandardErrors * std::sqrt(*sa * *sa / a.n + *sb * *sb / b.n);
}

bool BeyondNoise(const ReplicateSummary& a, const ReplicateSummary& b) {
  const std::optional<double> noise = DifferenceNoise(a, b);
  return !noise.has_value() || std::fabs(b.mean - a.mean) > *noise;
}

std::optional<RankTest> MannWhitney(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<std::pair<double, bool>> values;  // (value, from a)
  for (double v : a) {
    if (std::isfinite(v)) values.emplace_back(v, true);
  }
  const size_t n_a = values.size();
  for (double v : b) {
    if (std::isfinite(v)) values.emplace_back(v, false);
  }
  const size_t n_b = values.size() - n_a;
  if (n_a < kRankTestMinSamples || n_b < kRankTestMinSamples) return std::nullopt;
  std::sort(values.begin(), values.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  const double n = static_cast<double>(values.size());
  double rank_sum_a = 0;
  double tie_term = 0;  // sum of t^3 - t over groups of t tied values
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j].first == values[i].first) ++j;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) rank_sum_a += values[k].second ? mid_rank : 0.0;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double na = static_cast<double>(n_a);
  const double nb = static_cast<double>(n_b);
  const double variance = na * nb / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (!(variance > 0)) return std::nullopt;
  RankTest test;
  test.n_a = n_a;
  test.n_b = n_b;
  test.u = rank_sum_a - na * (na + 1.0) / 2.0;
  test.z = (test.u - na * nb / 2.0) / std::sqrt(variance);
  test.p_two_sided = std::erfc(std::fabs(test.z) / std::sqrt(2.0));
  return test;
}

std::optional<Ratio> Speedup(const ReplicateSummary& baseline, const ReplicateSummary& compared) {
  if (baseline.n == 0 || compared.n == 0 || !(baseline.mean > 0) || !(compared.mean > 0)) {
    return std::nullopt;
  }
  Ratio ratio;
  ratio.value = baseline.mean / compared.mean;
  const std::optional<double> sa = baseline.stddev.has_value() ? baseline.stddev : compared.stddev;
  const std::optional<double> sb = compared.stddev.has_value() ? compared.stddev : baseline.stddev;
  if (sa.has_value() && sb.has_value()) {
    const double ra = *sa / baseline.mean;
    const double rb = *sb / compared.mean;
    ratio.standard_error = ratio.value * std::sqrt(ra * ra / baseline.n + rb * rb / compared.n);
  }
  return ratio;
}

double AmdahlSpeedup(double serial_fraction, double cores) {
  return 1.0 / (serial_fraction + (1.0 - serial_fraction) / cores);
}

namespace {

// Every point has a positive, finite core count and time per event, and all measure one
// workload.
absl::Status CheckScalingPoints(const std::vector<ScalingPoint>& points) {
  for (const ScalingPoint& point : points) {
    if (!(point.cores > 0) || !std::isfinite(point.cores) || !(point.seconds_per_event > 0) ||
        !std::isfinite(point.seconds_per_event)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no Amdahl fit: run ", point.label, " has no positive cores (", point.cores,
          ") or time per event (", point.seconds_per_event, " s; the events must be known)"));
    }
    if (point.workload != points.front().workload) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no Amdahl fit: runs ", points.front().label, " and ", point.label,
          " measure different workloads (", points.front().workload, " vs ", point.workload,
          "); a scaling study compares one workload on different core counts"));
    }
  }
  return absl::OkStatus();
}

// seconds per event = serial + parallel / cores.
struct TimePerEventLine {
  double serial = 0;
  double parallel = 0;
  double r_squared = 0;
};

// Least squares of y = a + b x with x = 1 / cores, y = seconds per event; `used` has at least
// three distinct core counts.
TimePerEventLine FitTimePerEvent(const std::vector<const ScalingPoint*>& used) {
  const double count = static_cast<double>(used.size());
  double mean_x = 0;
  double mean_y = 0;
  for (const ScalingPoint* point : used) {
    mean_x += 1.0 / point->cores / count;
    mean_y += point->seconds_per_event / count;
  }
  double sxx = 0;
  double sxy = 0;
  double syy = 0;
  for (const ScalingPoint* point : used) {
    const double dx = 1.0 / point->cores - mean_x;
    const double dy = point->seconds_per_event - mean_y;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  double b = sxy / sxx;  // sxx > 0: at least three distinct core counts
  double a = mean_y - b * mean_x;
  if (a < 0) {
    // Faster than linear (caches, noise): no serial part; refit through the origin.
    double xx = 0;
    double xy = 0;
    for (const ScalingPoint* point : used) {
      xx += 1.0 / (point->cores * point->cores);
      xy += point->seconds_per_event / point->cores;
    }
    a = 0;
    b = xy / xx;
  }
  double residuals = 0;
  for (const ScalingPoint* point : used) {
    const double r = point->seconds_per_event - (a + b / point->cores);
    residuals += r * r;
  }
  TimePerEventLine line;
  line.serial = a;
  line.parallel = b;
  line.r_squared = syy > 0 ? 1.0 - residuals / syy : (residuals == 0 ? 1.0 : 0.0);
  return line;
}

}  // namespace

absl::StatusOr<AmdahlFit> FitAmdahl(const std::vector<ScalingPoint>& points) {
  if (absl::Status status = CheckScalingPoints(points); !status.ok()) return status;
  AmdahlFit fit;
  std::vector<const ScalingPoint*> used;
  std::set<double> counts;
  for (const ScalingPoint& point : points) {
    if (point.oversubscribed) {
      fit.excluded.push_back(point.label);
      continue;
    }
    used.push_back(&point);
    counts.insert(point.cores);
  }
  if (counts.size() < kAmdahlMinCoreCounts) {
    std::vector<std::string> listed;
    for (double cores : counts) listed.push_back(absl::StrCat(cores));
    return absl::FailedPreconditionError(
        absl::StrCat("no Amdahl fit: it needs runs on at least ", kAmdahlMinCoreCounts,
                     " distinct core counts (two points always fit), have ", counts.size(),
                     counts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(listed, ", "), ")"),
                     fit.excluded.empty() ? ""
                                          : absl::StrCat(" after leaving out the oversubscribed ",
                                                         absl::StrJoin(fit.excluded, ", "))));
  }
  const TimePerEventLine line = FitTimePerEvent(used);
  if (!(line.parallel > 0)) {
    return absl::FailedPreconditionError(
        "no Amdahl fit: the time per event does not fall with more cores (nothing parallel "
        "to fit)");
  }
  fit.serial_fraction = line.serial / (line.serial + line.parallel);
  fit.single_core_seconds_per_event = line.serial + line.parallel;
  fit.r_squared = line.r_squared;
  fit.points_used = used.size();
  fit.core_counts = counts.size();
  fit.max_cores = *counts.rbegin();
  fit.predicted_speedup_at_double = AmdahlSpeedup(fit.serial_fraction, 2 * fit.max_cores);
  return fit;
}

}  // namespace roastcoffea
