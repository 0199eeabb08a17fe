// Exact integrals of tracking series over a wall-clock window, by series kind (internal to
// //aggregation): SAMPLED series are interpolated linearly (trapezoid), STEP series hold each
// value until the next sample (v1::SeriesKind).
#ifndef ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_
#define ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "schema/measurement.pb.h"

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

// A series in time order, read by its kind (SERIES_KIND_UNSPECIFIED reads as SAMPLED):
//   SAMPLED: strictly increasing times; samples sharing a timestamp are replaced by their mean
//            (a documented treatment of duplicate samples).
//   STEP:    non-decreasing times; samples sharing a timestamp are kept in their stored order
//            (successive changes: "before" then "after"), sorted stably by time only when the
//            input is out of order. Never sorted or merged by value.
// Views the caller's columns when they already are in order (the common case: no copy);
// otherwise owns a sorted copy. Not copyable (the views may point into its own buffers).
class SortedSeries {
 public:
  SortedSeries(absl::Span<const int64_t> times, absl::Span<const double> values,
               v1::SeriesKind kind = v1::SERIES_KIND_SAMPLED);
  // The same, given `in_order` = InOrder(times, kind): one check of a time column shared by
  // several value columns (a worker's memory and cores).
  SortedSeries(absl::Span<const int64_t> times, absl::Span<const double> values,
               v1::SeriesKind kind, bool in_order);
  // Whether `times` already are in the order a series of `kind` reads them in (SAMPLED strictly
  // increasing, STEP non-decreasing), so that the series views them. Cost: O(n).
  static bool InOrder(absl::Span<const int64_t> times, v1::SeriesKind kind);
  SortedSeries(const SortedSeries&) = delete;
  SortedSeries& operator=(const SortedSeries&) = delete;

  absl::Span<const int64_t> times() const { return times_; }
  absl::Span<const double> values() const { return values_; }
  bool empty() const { return times_.empty(); }
  bool step() const { return step_; }
  // The value the series holds at its last instant: SAMPLED, the mean of the samples there;
  // STEP, the last one stored there. Must not be empty.
  double LastValue() const { return values_.back(); }

 private:
  std::vector<int64_t> owned_times_;
  std::vector<double> owned_values_;
  absl::Span<const int64_t> times_;
  absl::Span<const double> values_;
  bool step_ = false;
};

struct WindowIntegral {
  double integral = 0;         // value x seconds
  double covered_seconds = 0;  // length of [first sample, last sample] inside the window
};

// Integral over `window` of the series between its first and last sample, taken as 0 outside
// them (a worker exists only while it is sampled; samples at a single instant cover no time).
// SAMPLED: linear interpolation; segments that cross a window edge are cut at the edge by
// interpolation. STEP: each value holds from its instant to the next sample's; the last
// sample only ends the coverage (its value holds for no time), so a per-worker step series
// whose last sample is its disconnection counts exactly its connected time, whatever that
// sample's value (e.g. 0 cores).
// Cost: O(log n + samples inside the window) (Eigen over the interior for SAMPLED).
// `steps`, if not null, keeps the time steps of the samples integrated for the next call over
// the same time column and samples (another value column of the same worker), which then reuses
// them: the same results as without. Pass it only for series that view one caller's column.
struct TimeSteps {
  const int64_t* times = nullptr;  // the column and samples [first, last] `seconds` is for
  size_t first = 0;
  size_t last = 0;
  std::vector<double> seconds;
};
WindowIntegral IntegrateInsideSamples(const SortedSeries& series, const TimeWindow& window,
                                      TimeSteps* steps = nullptr);

// Like IntegrateInsideSamples, but outside the samples the first (before) and last (after)
// value are held, so the whole window is covered: for cluster-level series such as the worker
// count. STEP: the first stored value is the state before the first change, the last stored at
// the latest instant the state after the last one. A single instant holds its first value
// before and its last after; no samples give 0.
double IntegrateHoldingEnds(const SortedSeries& series, const TimeWindow& window);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_SERIES_INTEGRAL_H_
