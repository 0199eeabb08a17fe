#include "export/report_worker_lines.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "aggregation/timeline.h"
#include "export/report_mean_band.h"

namespace roastcoffea {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

using Column = const google::protobuf::RepeatedField<double>& (v1::WorkerSeries::*)() const;

// A figure: its column, what its values are divided by (MiB for memory, else 1: exact either
// way) and whether, crowded, the line is the sum over workers (counts), not the mean and range.
struct FigureSpec {
  Column column;
  int field;  // the column's field number
  double divisor;
  bool sum;
};
constexpr FigureSpec kSpecs[kWorkerFigures] = {
    {&v1::WorkerSeries::memory_bytes, v1::WorkerSeries::kMemoryBytesFieldNumber, kMiB, false},
    {&v1::WorkerSeries::cpu_percent, v1::WorkerSeries::kCpuPercentFieldNumber, 1, false},
    {&v1::WorkerSeries::occupancy_seconds, v1::WorkerSeries::kOccupancySecondsFieldNumber, 1,
     false},
    {&v1::WorkerSeries::executing_tasks, v1::WorkerSeries::kExecutingTasksFieldNumber, 1, true},
    {&v1::WorkerSeries::active_tasks, v1::WorkerSeries::kActiveTasksFieldNumber, 1, true}};

// The worker has the figure: one value per instant.
bool Has(const v1::WorkerSeries& w, const FigureSpec& spec) {
  return (w.*spec.column)().size() == w.time_unix_ns_size() && w.time_unix_ns_size() > 0;
}
bool HasExecuting(const v1::WorkerSeries& w) {
  return Has(w, kSpecs[static_cast<size_t>(WorkerFigure::kExecuting)]);
}
bool HasActive(const v1::WorkerSeries& w) {
  return Has(w, kSpecs[static_cast<size_t>(WorkerFigure::kActive)]);
}

// The rows of a worker series in time order (rows sharing an instant keep their stored order:
// for a STEP series, the order of its changes) and their instants in seconds since `origin`:
// one pass for every figure of the worker.
void TimesOf(const v1::WorkerSeries& worker, int64_t origin, std::vector<int>* order,
             std::vector<double>* x) {
  const auto& time = worker.time_unix_ns();
  order->resize(static_cast<size_t>(time.size()));
  for (int i = 0; i < time.size(); ++i) (*order)[static_cast<size_t>(i)] = i;
  // Samples are nearly always stored in time order: checked in one pass, not sorted again.
  if (!std::is_sorted(time.begin(), time.end())) {
    std::stable_sort(order->begin(), order->end(), [&](int a, int b) { return time[a] < time[b]; });
  }
  x->clear();
  for (int i : *order) x->push_back(SecondsSince(origin, time[i]));
}

// Two independent 64-bit hashes of `values`, equal for equal values (== : -0.0 and 0.0 alike);
// nullopt when one is NaN (equal to nothing, as the points' comparison had it). `scratch` holds
// the values with -0.0 made 0.0 when there is one.
std::optional<std::pair<size_t, size_t>> PrintOf(const std::vector<double>& values,
                                                 std::vector<double>* scratch) {
  bool negative_zero = false;
  for (double v : values) {
    if (std::isnan(v)) return std::nullopt;
    negative_zero = negative_zero || (v == 0 && std::signbit(v));
  }
  const std::vector<double>* hashed = &values;
  if (negative_zero) {
    scratch->assign(values.begin(), values.end());
    for (double& v : *scratch) v = v == 0 ? 0.0 : v;
    hashed = scratch;
  }
  // By bytes, in one piece (hashing element by element was 4 % of a report): without NaN, and
  // with every zero +0.0, equal values are equal bytes.
  const absl::string_view bytes(reinterpret_cast<const char*>(hashed->data()),
                                hashed->size() * sizeof(double));
  return std::make_pair(absl::HashOf(bytes), absl::HashOf(size_t{0x9e3779b9}, bytes));
}

}  // namespace

struct ReportWorkerLines::Figure {
  FigureSpec spec;
  WorkerLines result;
  // Per worker of the tracking: the index of its distinct series, or -1 (a repeat of an earlier
  // series, or without the figure).
  std::vector<int32_t> distinct_of_worker;
  absl::flat_hash_map<std::pair<size_t, size_t>, int32_t> distinct_by_print;
  std::vector<int> merged;         // per distinct series: the workers it stands for
  std::vector<std::string> names;  // of the first max_legend_entries + 1 distinct series
  bool any_value = false;          // for `constant`
  export_internal::MeanBandSurvey survey;
  std::unique_ptr<export_internal::MeanBandBuilder> band;
};

ReportWorkerLines::ReportWorkerLines(int64_t origin_unix_ns, size_t max_legend_entries)
    : origin_unix_ns_(origin_unix_ns), max_legend_entries_(max_legend_entries) {
  for (const FigureSpec& spec : kSpecs) {
    figures_.push_back(std::make_unique<Figure>());
    figures_.back()->spec = spec;
    figures_.back()->result.constant = true;
  }
}

ReportWorkerLines::~ReportWorkerLines() = default;
ReportWorkerLines::ReportWorkerLines(ReportWorkerLines&&) noexcept = default;
ReportWorkerLines& ReportWorkerLines::operator=(ReportWorkerLines&&) noexcept = default;

void ReportWorkerLines::Survey(const v1::WorkerSeries& worker) {
  // The last limit (one stored once for the series: that one); one that is not a finite number
  // of bytes > 0 (a file edited by hand) is no limit, not a caption of "N/A ... infx the peak".
  if (worker.memory_limit_bytes_size() > 0) {
    const double limit = worker.memory_limit_bytes(worker.memory_limit_bytes_size() - 1);
    if (limit > 0 && std::isfinite(limit)) memory_limits_mib_.insert(limit / kMiB);
  }
  if (HasActive(worker)) {
    any_active_ = true;
    for (int i = 0; i < worker.active_tasks_size() && active_equals_executing_; ++i) {
      active_equals_executing_ =
          HasExecuting(worker) && worker.active_tasks(i) == worker.executing_tasks(i);
    }
  }
  bool timed = false;
  std::optional<std::pair<size_t, size_t>> times_print;
  for (const std::unique_ptr<Figure>& f : figures_) {
    if (!Has(worker, f->spec)) {
      f->distinct_of_worker.push_back(-1);
      continue;
    }
    if (!timed) {
      TimesOf(worker, origin_unix_ns_, &order_, &x_);
      times_print = PrintOf(x_, &print_scratch_);
      timed = true;
    }
    ValuesOf(worker, (worker.*f->spec.column)(), f->spec.divisor);
    // Workers with equal points (threads of one process) are one series, named for all.
    const std::optional<std::pair<size_t, size_t>> values_print =
        PrintOf(scratch_.y, &print_scratch_);
    const int32_t index = static_cast<int32_t>(f->merged.size());
    if (times_print.has_value() && values_print.has_value()) {
      const std::pair<size_t, size_t> print = {
          absl::HashOf(times_print->first, values_print->first, scratch_.step),
          absl::HashOf(times_print->second, values_print->second, scratch_.step)};
      const auto [found, added] = f->distinct_by_print.try_emplace(print, index);
      if (!added) {
        ++f->merged[static_cast<size_t>(found->second)];
        f->distinct_of_worker.push_back(-1);
        continue;
      }
    }
    f->distinct_of_worker.push_back(index);
    f->merged.push_back(1);
    if (f->names.size() <= max_legend_entries_) f->names.push_back(worker.worker());
    WorkerLines& r = f->result;
    r.x_low = r.series == 0 ? scratch_.x.front() : std::min(r.x_low, scratch_.x.front());
    r.x_high = r.series == 0 ? scratch_.x.back() : std::max(r.x_high, scratch_.x.back());
    ++r.series;
    for (double y : scratch_.y) {
      r.peak = std::max(r.peak, y);
      if (!f->any_value) r.constant_value = y;
      if (y != r.constant_value) r.constant = false;
      f->any_value = true;
    }
    f->survey.Add(scratch_);
  }
}

void ReportWorkerLines::EndSurvey() {
  if (surveyed_) return;
  surveyed_ = true;
  for (const std::unique_ptr<Figure>& f : figures_) {
    WorkerLines& r = f->result;
    r.constant = r.constant && f->any_value;
    f->distinct_by_print = {};
    // Active tasks equal to executing ones are said in a sentence, never drawn (report_plots'
    // ActivePlot): no lines (a TaskVine run's second pass did them for nothing).
    if (&f == &figures_[static_cast<size_t>(WorkerFigure::kActive)] && any_active_ &&
        active_equals_executing_) {
      f->distinct_of_worker = {};
      f->survey = export_internal::MeanBandSurvey();
      continue;
    }
    r.band = r.series > max_legend_entries_;
    if (r.band) {
      f->band = std::make_unique<export_internal::MeanBandBuilder>(f->survey, f->spec.sum);
    }
    f->survey = export_internal::MeanBandSurvey();
  }
}

bool ReportWorkerLines::NeedsLines() {
  EndSurvey();
  for (const std::unique_ptr<Figure>& f : figures_) {
    if (f->result.series > 0) return true;
  }
  return false;
}

void ReportWorkerLines::AddLines(const v1::WorkerSeries& worker) {
  EndSurvey();
  const size_t w = worker_++;
  bool timed = false;
  for (const std::unique_ptr<Figure>& f : figures_) {
    if (w >= f->distinct_of_worker.size() || f->distinct_of_worker[w] < 0) continue;
    if (!timed) TimesOf(worker, origin_unix_ns_, &order_, &x_), timed = true;
    ValuesOf(worker, (worker.*f->spec.column)(), f->spec.divisor);
    if (f->band != nullptr) {
      f->band->Add(scratch_);
      continue;
    }
    const size_t distinct = static_cast<size_t>(f->distinct_of_worker[w]);
    LineSeries line = scratch_;
    line.name = f->merged[distinct] > 1 ? absl::StrCat(f->merged[distinct], " workers, same series")
                                        : f->names[distinct];
    f->result.lines.push_back(std::move(line));
  }
}

void ReportWorkerLines::Finish() {
  EndSurvey();
  for (const std::unique_ptr<Figure>& f : figures_) {
    if (f->band != nullptr) {
      f->result.lines = {f->band->Finish(&f->result.note)};
      f->band.reset();
    }
    f->distinct_of_worker = {};
  }
}

void ReportWorkerLines::ValuesOf(const v1::WorkerSeries& worker,
                                 const google::protobuf::RepeatedField<double>& column,
                                 double divisor) {
  scratch_.step = worker.kind() == v1::SERIES_KIND_STEP;
  scratch_.x = x_;
  scratch_.y.resize(order_.size());
  for (size_t k = 0; k < order_.size(); ++k) scratch_.y[k] = column[order_[k]] / divisor;
}

std::vector<int> ReportWorkerLines::LineColumns() {
  std::vector<int> fields;
  for (const FigureSpec& spec : kSpecs) fields.push_back(spec.field);
  return fields;
}

const WorkerLines& ReportWorkerLines::lines(WorkerFigure figure) const {
  return figures_[static_cast<size_t>(figure)]->result;
}

ReportWorkerLines ReportWorkerLinesOf(const v1::Measurement& measurement, int64_t origin_unix_ns,
                                      size_t max_legend_entries) {
  ReportWorkerLines lines(origin_unix_ns, max_legend_entries);
  for (const v1::WorkerSeries& worker : measurement.tracking().workers()) lines.Survey(worker);
  if (lines.NeedsLines()) {
    for (const v1::WorkerSeries& worker : measurement.tracking().workers()) {
      lines.AddLines(worker);
    }
  }
  lines.Finish();
  return lines;
}

}  // namespace roastcoffea
