// Bounded tracking: a worker series past a budget of samples is reduced so that every figure
// computed from it (aggregation/worker_metrics.h) stays exact.
//
// The rule. The series is first put in the form the integrals read it in (SortedSeries: by
// time; SAMPLED samples sharing an instant replaced by their mean). Its distinct instants are
// then cut into blocks of m instants between "knots": every m-th instant, the first and the
// last, and, for each protected instant p (a window edge), the last instant <= p and the first
// >= p. Knots keep their samples. The samples strictly inside a block are replaced, column by
// column, by:
//   SAMPLED: two samples, 1 ns after the block's first knot and 1 ns before its last, both with
//            the value w that makes the trapezoid over the block equal the original one;
//   STEP:    one sample at the block's first knot (replacing that knot's samples) with the
//            block's time-weighted mean, held until the next knot; the last instant's samples
//            are kept as they are.
// So every integral over an interval whose ends are knots (the series' own window, and any
// window whose edges are protected or outside the samples) is unchanged up to rounding (~1e-15
// relative per reduction), hence every time-weighted average, core-seconds and covered seconds;
// the first and last samples, hence the values held at the ends (total_cores), are kept; the
// highest memory_bytes sample is kept in WorkerSeries.max_memory_bytes (peak_memory_bytes reads
// it). A SAMPLED w is the block's mean up to O(1 ns / block length), clamped into the block's
// range. What is not kept: single samples inside a block (a column's other peaks, the shape
// finer than a block), which only plots and the capacity findings read.
//
// Thread-safety: pure. Cost: O(samples of the series) plus a sort when out of order.
#ifndef ROASTCOFFEA_AGGREGATION_SERIES_REDUCTION_H_
#define ROASTCOFFEA_AGGREGATION_SERIES_REDUCTION_H_

#include <cstdint>

#include "absl/types/span.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Past this many samples a worker series is reduced to at most half of it (so reductions are
// amortised O(1) per sample): at most ~1024 x (8 + 8 x columns) bytes per worker. The floor of
// MaxSamplesPerWorker.
inline constexpr int kDefaultMaxSamplesPerWorker = 1024;

// The whole tracking's budget, shared by its workers: 2^20 worker-samples, ~130 MB with Dask's
// 15 columns. A run of few workers keeps its series whole for hours (10 workers at 0.25 s: 7 h);
// 1,000 workers keep kDefaultMaxSamplesPerWorker each.
inline constexpr int64_t kMaxTrackingSamples = int64_t{1} << 20;

// The per-worker budget of a tracking with `workers` worker series: kMaxTrackingSamples shared
// by them, never below kDefaultMaxSamplesPerWorker.
inline int MaxSamplesPerWorker(int64_t workers) {
  const int64_t share = kMaxTrackingSamples / (workers > 0 ? workers : 1);
  return static_cast<int>(share > kDefaultMaxSamplesPerWorker ? share
                                                              : kDefaultMaxSamplesPerWorker);
}

// MergeTrackingSegment's budget when it should be the tracking's share (MaxSamplesPerWorker of
// the workers joined so far).
inline constexpr int kShareOfTrackingBudget = -1;

// Budgets below this are raised to it (a block needs room for its knots).
inline constexpr int kMinSamplesPerWorker = 16;

// When `series` holds more than `max_samples` samples (0 or less: no limit), reduces it by the
// rule above to at most max(max_samples, kMinSamplesPerWorker) / 2 samples plus six per
// protected instant, sets samples_before_reduction (the original count, when not set yet:
// whoever appends to a reduced series adds to it) and max_memory_bytes. Blocks holding a non-finite
// value, or shorter than 3 ns, are kept as they are; a series whose columns are not each empty or
// as long as its times is left untouched. Returns whether the series was reduced.
bool ReduceWorkerSeries(int max_samples, absl::Span<const int64_t> protected_instants,
                        v1::WorkerSeries* series);

// ReduceWorkerSeries on every worker series of `tracking` (the worker count, queued chunks and
// manager series are small and kept whole); without `step_series_too`, on its SAMPLED series
// only. Returns the number of series reduced.
int ReduceTracking(int max_samples_per_worker, absl::Span<const int64_t> protected_instants,
                   v1::TrackingData* tracking, bool step_series_too = true);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_SERIES_REDUCTION_H_
