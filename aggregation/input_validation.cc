#include "aggregation/input_validation.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

absl::Status ValidateWorkerSeries(const v1::WorkerSeries& series, int index) {
  const int num_times = series.time_unix_ns_size();
  const std::pair<const char*, int> columns[] = {
      {"memory_bytes", series.memory_bytes_size()},
      {"memory_limit_bytes", series.memory_limit_bytes_size()},
      {"cores", series.cores_size()},
      {"active_tasks", series.active_tasks_size()},
      {"executing_tasks", series.executing_tasks_size()},
      {"managed_bytes", series.managed_bytes_size()},
      {"occupancy_seconds", series.occupancy_seconds_size()},
      {"cpu_percent", series.cpu_percent_size()},
      {"last_seen_unix_seconds", series.last_seen_unix_seconds_size()},
      {"spilled_bytes", series.spilled_bytes_size()},
      {"network_read_bytes_per_second", series.network_read_bytes_per_second_size()},
      {"network_write_bytes_per_second", series.network_write_bytes_per_second_size()},
      {"disk_read_bytes_per_second", series.disk_read_bytes_per_second_size()},
      {"disk_write_bytes_per_second", series.disk_write_bytes_per_second_size()},
  };
  for (const auto& [name, size] : columns) {
    // An empty column means "not measured"; any other length must match the time column.
    if (size != 0 && size != num_times) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tracking.workers[", index, "] (worker \"", series.worker(), "\"): column ", name,
          " has ", size, " samples but time_unix_ns has ", num_times));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAggregationInput(const AggregationInput& input) {
  if (!std::isfinite(input.elapsed_seconds) || input.elapsed_seconds < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "elapsed_seconds is ", input.elapsed_seconds, "; expected a finite value >= 0"));
  }
  if (input.tracking.has_value()) {
    const v1::TrackingData& tracking = *input.tracking;
    if (tracking.worker_count_size() != tracking.worker_count_time_unix_ns_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tracking.worker_count has ", tracking.worker_count_size(),
          " samples but tracking.worker_count_time_unix_ns has ",
          tracking.worker_count_time_unix_ns_size()));
    }
    for (int i = 0; i < tracking.workers_size(); ++i) {
      absl::Status status = ValidateWorkerSeries(tracking.workers(i), i);
      if (!status.ok()) return status;
    }
  }
  for (size_t i = 0; i < input.chunks.size(); ++i) {
    const v1::ChunkRecord& chunk = input.chunks[i];
    const double duration = chunk.duration_seconds();
    if (!std::isfinite(duration) || duration < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chunks[", i, "] (uuid \"", chunk.uuid(), "\", file \"", chunk.file(), "\", entries ",
          chunk.entry_start(), "-", chunk.entry_stop(), "): duration_seconds is ", duration,
          "; expected a finite value >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
