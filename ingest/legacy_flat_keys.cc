#include "ingest/legacy_flat_keys.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace roastcoffea {
namespace {

constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// The keys of the workflow metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> WorkflowSetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"elapsed_time_seconds",
       [](double v, M* m) { m->mutable_workflow()->set_elapsed_time_seconds(v); }},
      {"total_events",
       [](double v, M* m) { m->mutable_workflow()->set_total_events(std::llround(v)); }},
      {"total_cpu_time",
       [](double v, M* m) { m->mutable_workflow()->set_total_cpu_time_seconds(v); }},
      {"total_bytes_read",
       [](double v, M* m) { m->mutable_workflow()->set_total_bytes_read(std::llround(v)); }},
      {"num_chunks",
       [](double v, M* m) { m->mutable_workflow()->set_num_chunks(std::llround(v)); }},
      {"data_rate_gbps", [](double v, M* m) { m->mutable_workflow()->set_data_rate_gbps(v); }},
      {"event_rate_elapsed_khz",
       [](double v, M* m) { m->mutable_workflow()->set_event_rate_elapsed_khz(v); }},
      {"event_rate_cpu_total_khz",
       [](double v, M* m) { m->mutable_workflow()->set_event_rate_cpu_total_khz(v); }},
      {"avg_cpu_time_per_chunk",
       [](double v, M* m) { m->mutable_workflow()->set_avg_cpu_time_per_chunk_seconds(v); }},
  };
}

// The keys of the workers metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> WorkerSetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"avg_workers", [](double v, M* m) { m->mutable_workers()->set_avg_workers(v); }},
      {"peak_workers",
       [](double v, M* m) {
         m->mutable_workers()->set_peak_workers(static_cast<int32_t>(std::lround(v)));
       }},
      {"total_cores", [](double v, M* m) { m->mutable_workers()->set_total_cores(v); }},
      {"cores_per_worker", [](double v, M* m) { m->mutable_workers()->set_cores_per_worker(v); }},
      {"peak_memory_bytes", [](double v, M* m) { m->mutable_workers()->set_peak_memory_bytes(v); }},
      {"avg_memory_per_worker_bytes",
       [](double v, M* m) { m->mutable_workers()->set_avg_memory_per_worker_bytes(v); }},
  };
}

// The keys of the efficiency metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> EfficiencySetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"core_efficiency",
       [](double v, M* m) { m->mutable_efficiency()->set_core_efficiency_fraction(v); }},
      {"speedup_factor", [](double v, M* m) { m->mutable_efficiency()->set_speedup_factor(v); }},
      {"event_rate_core_khz",
       [](double v, M* m) { m->mutable_efficiency()->set_event_rate_core_khz(v); }},
  };
}

// The keys of the fine (processor, I/O, compression and serialization) metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> FineSetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"processor_cpu_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_processor_cpu_time_seconds(v); }},
      {"processor_io_wait_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_processor_io_wait_time_seconds(v); }},
      {"processor_cpu_percent",
       [](double v, M* m) { m->mutable_fine()->set_processor_cpu_percent(v); }},
      {"processor_io_wait_percent",
       [](double v, M* m) { m->mutable_fine()->set_processor_io_wait_percent(v); }},
      {"overhead_cpu_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_overhead_cpu_time_seconds(v); }},
      {"overhead_io_wait_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_overhead_io_wait_time_seconds(v); }},
      {"total_bytes_memory_read",
       [](double v, M* m) { m->mutable_fine()->set_total_bytes_memory_read(v); }},
      {"disk_read_bytes", [](double v, M* m) { m->mutable_fine()->set_disk_read_bytes(v); }},
      {"disk_write_bytes", [](double v, M* m) { m->mutable_fine()->set_disk_write_bytes(v); }},
      {"decompression_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_decompression_time_seconds(v); }},
      {"compression_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_compression_time_seconds(v); }},
      {"total_compression_overhead_seconds",
       [](double v, M* m) { m->mutable_fine()->set_total_compression_overhead_seconds(v); }},
      {"deserialization_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_deserialization_time_seconds(v); }},
      {"serialization_time_seconds",
       [](double v, M* m) { m->mutable_fine()->set_serialization_time_seconds(v); }},
      {"total_serialization_overhead_seconds",
       [](double v, M* m) { m->mutable_fine()->set_total_serialization_overhead_seconds(v); }},
  };
}

// The keys of the chunks metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> ChunkSetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"num_successful_chunks",
       [](double v, M* m) { m->mutable_chunks()->set_num_successful_chunks(std::llround(v)); }},
      {"num_failed_chunks",
       [](double v, M* m) { m->mutable_chunks()->set_num_failed_chunks(std::llround(v)); }},
      {"chunk_duration_mean",
       [](double v, M* m) { m->mutable_chunks()->mutable_duration_seconds()->set_mean(v); }},
      {"chunk_duration_min",
       [](double v, M* m) { m->mutable_chunks()->mutable_duration_seconds()->set_min(v); }},
      {"chunk_duration_max",
       [](double v, M* m) { m->mutable_chunks()->mutable_duration_seconds()->set_max(v); }},
      {"chunk_duration_std",
       [](double v, M* m) { m->mutable_chunks()->mutable_duration_seconds()->set_std(v); }},
      {"chunk_mem_delta_mean_mb",
       [](double v, M* m) {
         m->mutable_chunks()->mutable_memory_delta_bytes()->set_mean(v * kBytesPerMiB);
       }},
      {"chunk_mem_delta_min_mb",
       [](double v, M* m) {
         m->mutable_chunks()->mutable_memory_delta_bytes()->set_min(v * kBytesPerMiB);
       }},
      {"chunk_mem_delta_max_mb",
       [](double v, M* m) {
         m->mutable_chunks()->mutable_memory_delta_bytes()->set_max(v * kBytesPerMiB);
       }},
      {"chunk_mem_delta_std_mb",
       [](double v, M* m) {
         m->mutable_chunks()->mutable_memory_delta_bytes()->set_std(v * kBytesPerMiB);
       }},
      {"total_events_from_chunks",
       [](double v, M* m) { m->mutable_chunks()->set_total_events_from_chunks(std::llround(v)); }},
      {"chunk_events_mean",
       [](double v, M* m) { m->mutable_chunks()->mutable_events()->set_mean(v); }},
      {"chunk_events_min",
       [](double v, M* m) { m->mutable_chunks()->mutable_events()->set_min(v); }},
      {"chunk_events_max",
       [](double v, M* m) { m->mutable_chunks()->mutable_events()->set_max(v); }},
  };
}

// The keys of the branches metrics.
std::vector<std::pair<std::string, LegacyFlatKeySetter>> BranchSetters() {
  using M = v1::AggregatedMetrics;
  return {
      {"avg_branches_read_percent",
       [](double v, M* m) { m->mutable_branches()->set_avg_branches_read_percent(v); }},
      {"avg_bytes_read_percent",
       [](double v, M* m) { m->mutable_branches()->set_avg_bytes_read_percent(v); }},
      {"total_branches_read",
       [](double v, M* m) { m->mutable_branches()->set_total_branches_read(std::llround(v)); }},
  };
}

}  // namespace

const absl::flat_hash_map<std::string, LegacyFlatKeySetter>& LegacyFlatKeySetters() {
  static const auto* const setters = [] {
    auto* all = new absl::flat_hash_map<std::string, LegacyFlatKeySetter>;
    for (auto section : {&WorkflowSetters, &WorkerSetters, &EfficiencySetters, &FineSetters,
                         &ChunkSetters, &BranchSetters}) {
      for (auto& [key, setter] : section()) all->emplace(std::move(key), std::move(setter));
    }
    return all;
  }();
  return *setters;
}

}  // namespace roastcoffea
