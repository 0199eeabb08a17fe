#include "aggregation/series_integral.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "Eigen/Core"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Value of the linear interpolation at `t`, for t between times[k-1] and times[k].
double Interpolate(absl::Span<const int64_t> times, absl::Span<const double> values, size_t k,
                   int64_t t) {
  const double span = SecondsBetween(times[k - 1], times[k]);
  const double fraction = SecondsBetween(times[k - 1], t) / span;
  return values[k - 1] + fraction * (values[k] - values[k - 1]);
}

// The steps between the instants of samples [first, last], in seconds, into `seconds`.
void ComputeTimeSteps(absl::Span<const int64_t> times, size_t first, size_t last,
                      std::vector<double>* seconds) {
  const Eigen::Index m = static_cast<Eigen::Index>(last - first + 1);
  Eigen::Map<const Eigen::Array<int64_t, Eigen::Dynamic, 1>> t(times.data() + first, m);
  seconds->resize(static_cast<size_t>(m - 1));
  Eigen::Map<Eigen::ArrayXd> dt(seconds->data(), m - 1);
  // Unsigned differences of sorted instants are exact and cannot overflow. When the whole span
  // fits in int64 (any series shorter than 292 years) the signed differences are the same
  // numbers, and convert to the same doubles in one instruction each (unsigned ones need several).
  const uint64_t span = static_cast<uint64_t>(times[last]) - static_cast<uint64_t>(times[first]);
  if (span <= static_cast<uint64_t>(INT64_MAX)) {
    dt = (t.tail(m - 1) - t.head(m - 1)).cast<double>() * 1e-9;
  } else {
    dt = (t.tail(m - 1).cast<uint64_t>() - t.head(m - 1).cast<uint64_t>()).cast<double>() * 1e-9;
  }
}

// Trapezoid sum over the samples [first, last] (inclusive), vectorised with Eigen; the time
// steps are taken from `steps` when it holds these samples' (and kept there otherwise).
double InteriorTrapezoid(absl::Span<const int64_t> times, absl::Span<const double> values,
                         size_t first, size_t last, TimeSteps* steps) {
  if (last <= first) return 0;
  const Eigen::Index m = static_cast<Eigen::Index>(last - first + 1);
  std::vector<double> own_seconds;
  const std::vector<double>* seconds = &own_seconds;
  if (steps == nullptr) {
    ComputeTimeSteps(times, first, last, &own_seconds);
  } else {
    if (steps->times != times.data() || steps->first != first || steps->last != last ||
        steps->seconds.size() != last - first) {
      ComputeTimeSteps(times, first, last, &steps->seconds);
      steps->times = times.data();
      steps->first = first;
      steps->last = last;
    }
    seconds = &steps->seconds;
  }
  Eigen::Map<const Eigen::ArrayXd> v(values.data() + first, m);
  Eigen::Map<const Eigen::ArrayXd> dt(seconds->data(), m - 1);
  return 0.5 * ((v.head(m - 1) + v.tail(m - 1)) * dt).sum();
}

// STEP: each value holds from its instant to the next sample's, over [a, b] (a < b, both
// within [first sample, last sample]). Among samples at one instant the last stored holds.
double StepIntegral(absl::Span<const int64_t> t, absl::Span<const double> v, int64_t a, int64_t b) {
  // k: the last sample at or before a, the one that holds at a.
  size_t n = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), a) - t.begin());
  int64_t from = a;
  double integral = 0;
  for (; n < t.size() && t[n] < b; ++n) {
    integral += v[n - 1] * SecondsBetween(from, t[n]);
    from = t[n];
  }
  return integral + v[n - 1] * SecondsBetween(from, b);
}

}  // namespace

double SecondsBetween(int64_t from, int64_t to) {
  // long double holds every int64 exactly, so the difference cannot overflow or round early.
  return static_cast<double>((static_cast<long double>(to) - static_cast<long double>(from)) *
                             1e-9L);
}

double TimeWindow::Seconds() const { return SecondsBetween(start_unix_ns, end_unix_ns); }

bool SortedSeries::InOrder(absl::Span<const int64_t> times, v1::SeriesKind kind) {
  // STEP keeps samples sharing an instant (successive changes); SAMPLED merges them. Checked in
  // blocks without a branch per sample, stopping at the first block out of order.
  const bool step = kind == v1::SERIES_KIND_STEP;
  constexpr size_t kBlock = 256;
  for (size_t first = 1; first < times.size(); first += kBlock) {
    const size_t last = std::min(times.size(), first + kBlock);
    bool in_order = true;
    if (step) {
      for (size_t i = first; i < last; ++i) in_order &= times[i - 1] <= times[i];
    } else {
      for (size_t i = first; i < last; ++i) in_order &= times[i - 1] < times[i];
    }
    if (!in_order) return false;
  }
  return true;
}

SortedSeries::SortedSeries(absl::Span<const int64_t> times, absl::Span<const double> values,
                           v1::SeriesKind kind)
    : SortedSeries(times, values, kind, InOrder(times, kind)) {}

SortedSeries::SortedSeries(absl::Span<const int64_t> times, absl::Span<const double> values,
                           v1::SeriesKind kind, bool in_order)
    : times_(times), values_(values), step_(kind == v1::SERIES_KIND_STEP) {
  if (in_order) return;
  // By time only, stably: the stored order within an instant is the order of the changes.
  std::vector<size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return times[a] < times[b]; });
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    double sum = 0;
    while (j < order.size() && times[order[j]] == times[order[i]]) {
      if (step_) {
        owned_times_.push_back(times[order[j]]);
        owned_values_.push_back(values[order[j]]);
      }
      sum += values[order[j++]];
    }
    if (!step_) {
      owned_times_.push_back(times[order[i]]);
      owned_values_.push_back(sum / static_cast<double>(j - i));
    }
    i = j;
  }
  times_ = owned_times_;
  values_ = owned_values_;
}

WindowIntegral IntegrateInsideSamples(const SortedSeries& series, const TimeWindow& window,
                                      TimeSteps* steps) {
  const absl::Span<const int64_t> t = series.times();
  const absl::Span<const double> v = series.values();
  WindowIntegral result;
  if (t.size() < 2) return result;
  const int64_t a = std::max(t.front(), window.start_unix_ns);
  const int64_t b = std::min(t.back(), window.end_unix_ns);
  if (a >= b) return result;
  result.covered_seconds = SecondsBetween(a, b);
  if (series.step()) {
    result.integral = StepIntegral(t, v, a, b);
    return result;
  }
  // i: first sample >= a; j: last sample <= b.
  const size_t i = static_cast<size_t>(std::lower_bound(t.begin(), t.end(), a) - t.begin());
  const size_t j = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), b) - t.begin()) - 1;
  if (i > j) {
    // a and b fall inside one segment (i - 1, i).
    result.integral =
        (Interpolate(t, v, i, a) + Interpolate(t, v, i, b)) / 2 * result.covered_seconds;
    return result;
  }
  double integral = InteriorTrapezoid(t, v, i, j, steps);
  if (a < t[i]) integral += (Interpolate(t, v, i, a) + v[i]) / 2 * SecondsBetween(a, t[i]);
  if (t[j] < b) integral += (v[j] + Interpolate(t, v, j + 1, b)) / 2 * SecondsBetween(t[j], b);
  result.integral = integral;
  return result;
}

double IntegrateHoldingEnds(const SortedSeries& series, const TimeWindow& window) {
  const absl::Span<const int64_t> t = series.times();
  const absl::Span<const double> v = series.values();
  if (t.empty()) return 0;
  double integral = IntegrateInsideSamples(series, window).integral;
  if (window.start_unix_ns < t.front()) {
    const int64_t until = std::min(t.front(), window.end_unix_ns);
    integral += v.front() * SecondsBetween(window.start_unix_ns, until);
  }
  if (t.back() < window.end_unix_ns) {
    // With one sample, t.front() == t.back(): the two holds cover the window exactly once.
    const int64_t from = std::max(t.back(), window.start_unix_ns);
    integral += v.back() * SecondsBetween(from, window.end_unix_ns);
  }
  return integral;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
