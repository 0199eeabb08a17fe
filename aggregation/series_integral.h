// Trapezoid integrals of sampled series over a wall-clock window (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_
#define ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace roastcoffea {
namespace aggregation_internal {

// [start, end] in UTC ns since the epoch; end >= start.
struct TimeWindow {
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  double Seconds() const;
};

// Seconds from `from` to `to` (negative when to < from), exact for any pair of int64 instants
// up to double rounding.
double SecondsBetween(int64_t from, int64_t to);

// A series with strictly increasing times. Views the caller's columns when they already are
// (the common case: no copy); otherwise owns a sorted copy in which samples sharing a
// timestamp are replaced by their mean (a documented treatment of duplicate samples).
// Not copyable (the views may point into its own buffers).
class SortedSeries {
 public:
  SortedSeries(absl::Span<const int64_t> times, absl::Span<const double> values);
  SortedSeries(const SortedSeries&) = delete;
  SortedSeries& operator=(const SortedSeries&) = delete;

  absl::Span<const int64_t> times() const { return times_; }
  absl::Span<const double> values() const { return values_; }
  bool empty() const { return times_.empty(); }

 private:
  std::vector<int64_t> owned_times_;
  std::vector<double> owned_values_;
  absl::Span<const int64_t> times_;
  absl::Span<const double> values_;
};

struct WindowIntegral {
  double integral = 0;         // value x seconds
  double covered_seconds = 0;  // length of [first sample, last sample] inside the window
};

// Integral over `window` of the series' linear interpolation, taken as 0 outside its first and
// last sample (a worker exists only while it is sampled; a single sample covers no time).
// Segments that cross a window edge are cut at the edge by linear interpolation.
// Cost: O(log n + samples inside the window) (Eigen over the interior).
WindowIntegral IntegrateInsideSamples(const SortedSeries& series, const TimeWindow& window);

// Like IntegrateInsideSamples, but outside the samples the first (before) and last (after)
// value are held, so the whole window is covered: for cluster-level series such as the worker
// count. A single sample holds its value over the whole window; no samples give 0.
double IntegrateHoldingEnds(const SortedSeries& series, const TimeWindow& window);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_
