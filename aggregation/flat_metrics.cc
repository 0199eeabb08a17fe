// ToFlatMetrics: the original tool's flat key names, units and order (reference §2.1-§2.5).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"

namespace roastcoffea {
namespace {

// The original reports memory deltas in "MB" that are really MiB.
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

class FlatMetricsBuilder {
 public:
  void Add(std::string key, std::optional<double> value, std::string unit) {
    metrics_.push_back({std::move(key), value, std::move(unit)});
  }
  void AddStats(const std::string& prefix, const std::string& suffix,
                const v1::DistributionStats& stats, double scale, const std::string& unit,
                bool with_std) {
    Add(absl::StrCat(prefix, "mean", suffix), stats.mean() * scale, unit);
    Add(absl::StrCat(prefix, "min", suffix), stats.min() * scale, unit);
    Add(absl::StrCat(prefix, "max", suffix), stats.max() * scale, unit);
    if (with_std) Add(absl::StrCat(prefix, "std", suffix), stats.std() * scale, unit);
  }
  std::vector<FlatMetric> Release() { return std::move(metrics_); }

 private:
  std::vector<FlatMetric> metrics_;
};

std::optional<double> Optional(bool has, double value) {
  return has ? std::optional<double>(value) : std::nullopt;
}

}  // namespace

std::vector<FlatMetric> ToFlatMetrics(const v1::AggregatedMetrics& metrics) {
  FlatMetricsBuilder flat;
  const v1::WorkflowMetrics& workflow = metrics.workflow();
  // Chunk records override the report's chunk count, in the same slot (a dict update).
  const int64_t num_chunks =
      metrics.has_chunks() ? metrics.chunks().num_chunks() : workflow.num_chunks();
  flat.Add("data_rate_gbps", workflow.data_rate_gbps(), "Gbps");
  flat.Add("total_events", static_cast<double>(workflow.total_events()), "events");
  flat.Add("event_rate_elapsed_khz", workflow.event_rate_elapsed_khz(), "kHz");
  flat.Add("event_rate_cpu_total_khz", workflow.event_rate_cpu_total_khz(), "kHz");
  flat.Add("elapsed_time_seconds", workflow.elapsed_time_seconds(), "s");
  flat.Add("total_cpu_time", workflow.total_cpu_time_seconds(), "s");
  flat.Add("num_chunks", static_cast<double>(num_chunks), "chunks");
  flat.Add("avg_cpu_time_per_chunk", workflow.avg_cpu_time_per_chunk_seconds(), "s");
  flat.Add("total_bytes_read", static_cast<double>(workflow.total_bytes_read()), "bytes");

  if (metrics.has_workers()) {
    const v1::WorkerMetrics& workers = metrics.workers();
    flat.Add("avg_workers", workers.avg_workers(), "workers");
    flat.Add("peak_workers", workers.peak_workers(), "workers");
    flat.Add("total_cores", Optional(workers.has_total_cores(), workers.total_cores()), "cores");
    flat.Add("cores_per_worker",
             Optional(workers.has_cores_per_worker(), workers.cores_per_worker()), "cores");
    flat.Add("peak_memory_bytes", workers.peak_memory_bytes(), "bytes");
    flat.Add("avg_memory_per_worker_bytes", workers.avg_memory_per_worker_bytes(), "bytes");
  }

  const v1::EfficiencyMetrics& efficiency = metrics.efficiency();
  flat.Add("core_efficiency",
           Optional(efficiency.has_core_efficiency_fraction(),
                    efficiency.core_efficiency_fraction()),
           "fraction");
  flat.Add("speedup_factor", efficiency.speedup_factor(), "x");
  flat.Add("event_rate_core_khz",
           Optional(efficiency.has_event_rate_core_khz(), efficiency.event_rate_core_khz()),
           "kHz/core");

  if (metrics.has_chunks()) {
    const v1::ChunkMetrics& chunks = metrics.chunks();
    flat.Add("num_successful_chunks", static_cast<double>(chunks.num_successful_chunks()),
             "chunks");
    flat.Add("num_failed_chunks", static_cast<double>(chunks.num_failed_chunks()), "chunks");
    // The original emits statistics only when some chunk succeeded.
    if (chunks.has_duration_seconds()) {
      flat.AddStats("chunk_duration_", "", chunks.duration_seconds(), 1.0, "s", true);
    }
    if (chunks.has_memory_delta_bytes()) {
      flat.AddStats("chunk_mem_delta_", "_mb", chunks.memory_delta_bytes(), 1.0 / kBytesPerMiB,
                    "MiB", true);
    }
    if (chunks.has_events()) {
      flat.Add("total_events_from_chunks", static_cast<double>(chunks.total_events_from_chunks()),
               "events");
      flat.AddStats("chunk_events_", "", chunks.events(), 1.0, "events", false);
    }
    for (const v1::DatasetChunkMetrics& dataset : chunks.per_dataset()) {
      const std::string prefix = absl::StrCat("per_dataset.", dataset.dataset(), ".");
      flat.Add(absl::StrCat(prefix, "num_chunks"), static_cast<double>(dataset.num_chunks()),
               "chunks");
      flat.Add(absl::StrCat(prefix, "total_duration"), dataset.total_duration_seconds(), "s");
      flat.Add(absl::StrCat(prefix, "total_events"), static_cast<double>(dataset.total_events()),
               "events");
      flat.Add(absl::StrCat(prefix, "mean_duration"), dataset.mean_duration_seconds(), "s");
      if (dataset.has_mean_events_per_chunk()) {
        flat.Add(absl::StrCat(prefix, "mean_events_per_chunk"), dataset.mean_events_per_chunk(),
                 "events");
      }
    }
  }
  return flat.Release();
}

}  // namespace roastcoffea
