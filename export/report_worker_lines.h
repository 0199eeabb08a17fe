// The lines of the report's per-worker charts (memory, CPU, occupancy, executing and active
// tasks: export/report_plots.h), made from the workers' series in two passes, one series at a
// time: a survey (which workers have the figure, which series are equal, the instants and time
// range) and then the lines (each distinct series while there are few, else their mean and
// range or their sum, export_internal::MeanBandBuilder). Memory: a few bytes per worker and
// O(kMaxLinePoints) per chart, whatever the length of the series, so that `collect report`
// streams the series of a saved run (store/measurement_io.h ForEachWorkerSeries) instead of
// loading 3.6 x 10^6 samples (issue #25). The lines are those the charts drew from the whole
// series; equal series (threads of one process) are found by a 128-bit fingerprint of their
// points instead of comparing the points (a series with a NaN value equals none, as before).
//
// Thread-safety: none (one writer). Cost: two passes over the samples.
#ifndef ROASTCOFFEA_EXPORT_REPORT_WORKER_LINES_H_
#define ROASTCOFFEA_EXPORT_REPORT_WORKER_LINES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "export/svg_plot.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

namespace export_internal {
class MeanBandSurvey;
class MeanBandBuilder;
}  // namespace export_internal

// The figures drawn per worker.
enum class WorkerFigure { kMemory, kCpu, kOccupancy, kExecuting, kActive };
inline constexpr size_t kWorkerFigures = 5;

// One chart's lines.
struct WorkerLines {
  size_t series = 0;      // distinct series of the workers that have the figure (0: no chart)
  bool constant = false;  // every value of every series is `constant_value`
  double constant_value = 0;
  // Each distinct series (named for its worker, or "N workers, same series") when there are at
  // most max_legend_entries; else one line, their mean and range (or their sum).
  std::vector<LineSeries> lines;
  bool band = false;  // `lines` is the one line across workers
  std::string note;   // what the line across workers says of itself (time bins), or empty
  double peak = 0;    // the largest value (from 0)
  double x_low = 0, x_high = 0;  // the first and last instant of the series
};

class ReportWorkerLines {
 public:
  // Time in seconds since `origin_unix_ns`; lines drawn one per series up to
  // `max_legend_entries` distinct series.
  ReportWorkerLines(int64_t origin_unix_ns, size_t max_legend_entries);
  ~ReportWorkerLines();
  ReportWorkerLines(ReportWorkerLines&&) noexcept;
  ReportWorkerLines& operator=(ReportWorkerLines&&) noexcept;

  // The first pass: every worker series of the tracking, in order.
  void Survey(const v1::WorkerSeries& worker);
  // Whether the second pass is needed (some chart draws lines).
  bool NeedsLines();
  // The second pass: the same series in the same order. It reads of each only its instants,
  // its kind and the LineColumns (WorkerSeries field numbers of double columns).
  void AddLines(const v1::WorkerSeries& worker);
  static std::vector<int> LineColumns();
  // After the passes: makes the lines.
  void Finish();

  // Active tasks have their survey's figures but no lines when active_equals_executing() (their
  // chart is a sentence then).
  const WorkerLines& lines(WorkerFigure figure) const;
  // The memory limits the workers report (their last, > 0), in MiB.
  const std::set<double>& memory_limits_mib() const { return memory_limits_mib_; }
  // Some worker has active tasks; at every sample of every such worker they equal its
  // executing tasks.
  bool any_active() const { return any_active_; }
  bool active_equals_executing() const { return active_equals_executing_; }

 private:
  struct Figure;
  void EndSurvey();
  int64_t origin_unix_ns_;
  size_t max_legend_entries_;
  std::vector<std::unique_ptr<Figure>> figures_;
  std::set<double> memory_limits_mib_;
  bool any_active_ = false, active_equals_executing_ = true;
  bool surveyed_ = false;
  size_t worker_ = 0;  // the next worker of the second pass
  // Reused for each worker: its rows in time order, their instants, a figure's series.
  // A figure's values, `column` (of `worker`) divided by `divisor`, in the rows' time order.
  void ValuesOf(const v1::WorkerSeries& worker,
                const google::protobuf::RepeatedField<double>& column, double divisor);
  std::vector<int> order_;
  std::vector<double> x_;
  LineSeries scratch_;
  std::vector<double> print_scratch_;
};

// Both passes over measurement.tracking().workers().
ReportWorkerLines ReportWorkerLinesOf(const v1::Measurement& measurement, int64_t origin_unix_ns,
                                      size_t max_legend_entries);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_WORKER_LINES_H_
