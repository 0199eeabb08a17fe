// CanonicalKeyName: the original's key-name drift (docs/reference.md §2.9), old name -> current
// name.
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "aggregation/aggregate.h"

namespace roastcoffea {
namespace {

// Scalar keys the original emits at HEAD (docs/reference.md §2.1-§2.6).
const absl::flat_hash_set<std::string>& CurrentKeys() {
  static const auto* const keys = new absl::flat_hash_set<std::string>{
      // Workflow.
      "elapsed_time_seconds", "total_events", "total_cpu_time", "total_bytes_read", "num_chunks",
      "data_rate_gbps", "event_rate_elapsed_khz", "event_rate_cpu_total_khz",
      "avg_cpu_time_per_chunk",
      // Workers.
      "avg_workers", "peak_workers", "total_cores", "cores_per_worker", "peak_memory_bytes",
      "avg_memory_per_worker_bytes",
      // Efficiency.
      "core_efficiency", "speedup_factor", "event_rate_core_khz",
      // Fine metrics.
      "processor_cpu_time_seconds", "processor_io_wait_time_seconds", "processor_cpu_percent",
      "processor_io_wait_percent", "overhead_cpu_time_seconds", "overhead_io_wait_time_seconds",
      "total_bytes_memory_read", "disk_read_bytes", "disk_write_bytes",
      "decompression_time_seconds", "compression_time_seconds",
      "total_compression_overhead_seconds", "deserialization_time_seconds",
      "serialization_time_seconds", "total_serialization_overhead_seconds",
      // Chunks.
      "num_successful_chunks", "num_failed_chunks", "chunk_duration_mean", "chunk_duration_min",
      "chunk_duration_max", "chunk_duration_std", "chunk_mem_delta_mean_mb",
      "chunk_mem_delta_min_mb", "chunk_mem_delta_max_mb", "chunk_mem_delta_std_mb",
      "total_events_from_chunks", "chunk_events_mean", "chunk_events_min", "chunk_events_max",
      // Branch coverage.
      "avg_branches_read_percent", "avg_bytes_read_percent", "total_branches_read"};
  return *keys;
}

// Whole-name renames from the README, notebooks and the metrics reference doc.
const absl::flat_hash_map<std::string, std::string>& RenamedKeys() {
  static const auto* const renames = new absl::flat_hash_map<std::string, std::string>{
      {"wall_time", "elapsed_time_seconds"},
      {"overall_rate_gbps", "data_rate_gbps"},
      {"event_rate_wall_khz", "event_rate_elapsed_khz"},
      {"event_rate_agg_khz", "event_rate_cpu_total_khz"},
      {"event_rate_core_hz", "event_rate_core_khz"},
      {"total_bytes_read_coffea", "total_bytes_read"},
      {"total_bytes_compressed", "total_bytes_read"},
      {"total_bytes_memory_read_dask", "total_bytes_memory_read"},
      {"cpu_time_seconds", "processor_cpu_time_seconds"},
      {"io_time_seconds", "processor_io_wait_time_seconds"},
  };
  return *renames;
}

}  // namespace

std::optional<std::string> CanonicalKeyName(absl::string_view key) {
  const std::string name(key);
  if (CurrentKeys().contains(name)) return name;
  if (auto it = RenamedKeys().find(name); it != RenamedKeys().end()) return it->second;

  // Pattern renames: processor_noncpu_* -> processor_io_wait_*, *_percentage -> *_percent.
  std::string renamed = name;
  constexpr absl::string_view kOldNoncpu = "processor_noncpu_";
  if (absl::StartsWith(renamed, kOldNoncpu)) {
    renamed = absl::StrCat("processor_io_wait_", renamed.substr(kOldNoncpu.size()));
  }
  constexpr absl::string_view kOldPercent = "_percentage";
  if (absl::EndsWith(renamed, kOldPercent)) {
    renamed = absl::StrCat(renamed.substr(0, renamed.size() - kOldPercent.size()), "_percent");
  }
  if (renamed != name && CurrentKeys().contains(renamed)) return renamed;
  // Unknown, or removed without a successor (overall_rate_mbps, overall_rate_mbs).
  return std::nullopt;
}

}  // namespace roastcoffea
