// Internal to the metric catalogue: the builder its entry files use (metric_catalogue_entries.cc
// for the measured CPU and our metrics, metric_catalogue_original.cc for the original tool's
// keys) and the getters they share.
#ifndef ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_BUILDER_H_
#define ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_BUILDER_H_

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "aggregation/aggregate.h"
#include "aggregation/metric_catalogue.h"

namespace roastcoffea {
namespace catalogue_internal {

using M = v1::AggregatedMetrics;
using G = MetricGroup;

// The original reports memory deltas in "MB" that are really MiB.
inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

inline std::optional<double> If(bool known, double value) {
  return known ? std::optional<double>(value) : std::nullopt;
}

inline bool Split(const M& m) { return m.has_fine() && HasThreadTimeSplit(m.fine()); }

// Branch averages are unknown when no file reported its branches.
inline bool BranchesReported(const M& m) {
  return m.has_branches() &&
         (m.branches().files_size() > 0 || m.branches().total_branches_read() > 0);
}

// A statistic of the chunk records: `Field` of the distribution `Stats`.
template <const v1::DistributionStats& (v1::ChunkMetrics::*Stats)() const,
          double (v1::DistributionStats::*Field)() const>
std::optional<double> Stat(const M& m) {
  return If(true, ((m.chunks().*Stats)().*Field)());
}

// A chunk memory-delta statistic in MiB.
template <double (v1::DistributionStats::*Field)() const>
std::optional<double> MemoryStat(const M& m) {
  return If(true, (m.chunks().memory_delta_bytes().*Field)() * (1.0 / kBytesPerMiB));
}

template <double (v1::Percentiles::*Field)() const>
std::optional<double> DurationPercentile(const M& m) {
  const v1::DistributionStats& d = m.chunks().duration_seconds();
  return If(d.has_percentiles(), (d.percentiles().*Field)());
}

// The thread-time split's processor time: CPU plus off CPU.
inline double ProcessorThreadTime(const M& m) {
  return m.fine().processor_cpu_time_seconds() + m.fine().processor_io_wait_time_seconds();
}
inline bool RunQueueSplit(const M& m) {
  return Split(m) && m.fine().has_processor_run_queue_wait_seconds();
}
// Processor off-CPU time that was not waiting for a CPU: I/O, locks, sleep.
inline double ProcessorBlockedSeconds(const M& m) {
  return std::max(
      0.0, m.fine().processor_io_wait_time_seconds() - m.fine().processor_run_queue_wait_seconds());
}
// `seconds` in percent of the processor thread time, for the Thread Time Split rows shown when
// `shown`; unknown when that time is 0.
inline std::optional<double> ProcessorShare(const M& m, bool shown, double seconds) {
  return If(shown && ProcessorThreadTime(m) > 0, 100 * seconds / ProcessorThreadTime(m));
}
inline std::string PercentOneDecimal(const M&, double percent, const CellFormats&) {
  return absl::StrFormat("%.1f%%", percent);
}

// The Resource Utilization rows (export/tables.h). A fixed set of workers (a thread pool, a
// static cluster) has one worker count and one core count: one row each instead of an
// average, a peak and a product that all repeat it.
inline bool Tracked(const M& m) { return m.has_workers(); }
inline bool CoresKnown(const M& m) {
  return m.workers().has_total_cores() && m.workers().total_cores() > 0.0;
}
inline bool ConstantWorkers(const M& m) {
  const v1::WorkerMetrics& w = m.workers();
  return Tracked(m) && w.peak_workers() > 0 &&
         std::abs(w.avg_workers() - w.peak_workers()) <= 0.005 * w.peak_workers();
}
inline bool ConstantCores(const M& m) {
  const v1::WorkerMetrics& w = m.workers();
  return ConstantWorkers(m) && CoresKnown(m) && w.has_cores_per_worker() &&
         (!w.has_avg_cores_over_window() ||
          std::abs(w.avg_cores_over_window() - w.total_cores()) <= 0.005 * w.total_cores());
}
inline bool WallReported(const M& m) { return m.workflow().has_summed_chunk_wall_seconds(); }
inline const char* NoWorkerTracking(const M&) { return "N/A (no worker tracking)"; }
inline std::string TwoDecimals(const M&, double value, const CellFormats&) {
  return absl::StrFormat("%.2f", value);
}

// The N/A texts of summary-table rows.
inline const char* NotReported(const M&) { return "N/A (not reported)"; }
inline const char* JustNA(const M&) { return "N/A"; }

// Chained setters on one entry of the catalogue being built.
class Entry {
 public:
  explicit Entry(MetricDef* def) : def_(def) {}
  Entry& Flat(FlatPart part, FlatPresence presence = FlatPresence::kAlways) {
    def_->flat = part;
    def_->presence = presence;
    return *this;
  }
  Entry& Direction(Better better, CoreTrend trend = CoreTrend::kSteady) {
    def_->better = better;
    def_->trend = trend;
    return *this;
  }
  Entry& Compared(int rank, std::string unit, double scale = 1.0, MetricGetter value = nullptr) {
    def_->compare_rank = rank;
    def_->compare_unit = std::move(unit);
    def_->compare_scale = scale;
    def_->compare_value = value;
    return *this;
  }
  // A summary-table row (see MetricDef::table).
  Entry& Row(SummaryTableId table, int rank, ValueFormat format,
             const char* (*unknown_text)(const M&) = nullptr, MetricGetter value = nullptr) {
    def_->table = table;
    def_->table_rank = rank;
    def_->format = format;
    def_->unknown_text = unknown_text;
    def_->table_value = value;
    return *this;
  }
  // How the row reads when `format` does not say it (see MetricDef::table_label and below).
  Entry& RowLabel(std::string label) {
    def_->table_label = std::move(label);
    return *this;
  }
  Entry& RowLabelFrom(RowLabeler label) {
    def_->label_from = label;
    return *this;
  }
  Entry& Bulleted() {
    def_->bullet = true;
    return *this;
  }
  Entry& RowText(RowFormatter text) {
    def_->row_text = text;
    return *this;
  }
  Entry& RowNoteFrom(RowNoter note) {
    def_->note = note;
    return *this;
  }
  Entry& FlagImpossible() {
    def_->flag_impossible = true;
    return *this;
  }
  Entry& Live() {
    def_->live = true;
    return *this;
  }

 private:
  MetricDef* def_;
};

class Builder {
 public:
  Entry Add(std::string key, std::string label, std::string unit, MetricGroup group,
            MetricGetter value, std::string description) {
    MetricDef def;
    def.key = std::move(key);
    def.label = std::move(label);
    def.unit = std::move(unit);
    def.group = group;
    def.value = value;
    def.description = std::move(description);
    metrics_->push_back(std::move(def));
    return Entry(&metrics_->back());
  }
  explicit Builder(std::vector<MetricDef>* metrics) : metrics_(metrics) {}

 private:
  std::vector<MetricDef>* metrics_;
};

inline constexpr auto kHigher = Better::kHigher;
inline constexpr auto kLower = Better::kLower;
inline constexpr auto kFalls = CoreTrend::kFallsWithCores;
inline constexpr auto kGains = CoreTrend::kGainsWithCores;
inline constexpr auto kHeadline = FlatPart::kHeadline;
inline constexpr auto kOriginal = FlatPart::kOriginal;
inline constexpr auto kAddition = FlatPart::kAddition;
inline constexpr auto kChunkAddition = FlatPart::kChunkAddition;

// The original tool's keys, in its order: workflow, workers, efficiency, fine metrics, chunks,
// branch coverage (metric_catalogue_original.cc).
void AddOriginalMetrics(Builder& b);

}  // namespace catalogue_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_BUILDER_H_
