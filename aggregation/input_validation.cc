#include "aggregation/input_validation.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schema/worker_series_columns.h"

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
  const bool stored_once[] = {false, StoredOnce(series.memory_limit_bytes(), num_times),
                              StoredOnce(series.cores(), num_times)};
  for (size_t c = 0; c < std::size(columns); ++c) {
    const auto& [name, size] = columns[c];
    // An empty column means "not measured"; any other length must match the time column, but
    // for a worker's cores and limits stored once (schema/worker_series_columns.h).
    if (size != 0 && size != num_times && !(c < std::size(stored_once) && stored_once[c])) {
      return absl::InvalidArgumentError(
          absl::StrCat("tracking.workers[", index, "] (worker \"", series.worker(), "\"): column ",
                       name, " has ", size, " samples but time_unix_ns has ", num_times));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateFiniteColumn(const google::protobuf::RepeatedField<double>& column,
                                  const v1::WorkerSeries& series, int index, const char* name) {
  // In blocks without a branch per value (v >= 0 and v <= DBL_MAX fail for NaN, infinities and
  // negatives; -0.0 passes); a block that fails is searched again for its first bad value.
  constexpr int kBlock = 256;
  for (int first = 0; first < column.size(); first += kBlock) {
    const int last = std::min(column.size(), first + kBlock);
    bool valid = true;
    for (int i = first; i < last; ++i) {
      valid &= (column[i] >= 0) & (column[i] <= std::numeric_limits<double>::max());
    }
    if (valid) continue;
    for (int i = first; i < last; ++i) {
      if (!std::isfinite(column[i]) || column[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tracking.workers[", index, "] (worker \"", series.worker(), "\"): ", name,
                         "[", i, "] is ", column[i], "; expected a finite value >= 0"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAggregationInput(const AggregationInput& input) {
  if (!std::isfinite(input.elapsed_seconds) || input.elapsed_seconds < 0) {
    return absl::InvalidArgumentError(absl::StrCat("elapsed_seconds is ", input.elapsed_seconds,
                                                   "; expected a finite value >= 0"));
  }
  const bool has_start = input.window_start_unix_ns != 0;
  const bool has_end = input.window_end_unix_ns != 0;
  if (has_start != has_end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "window_start_unix_ns is ", input.window_start_unix_ns, " and window_end_unix_ns is ",
        input.window_end_unix_ns, "; set both or neither"));
  }
  if (input.window_end_unix_ns < input.window_start_unix_ns) {
    return absl::InvalidArgumentError(absl::StrCat("window_end_unix_ns ", input.window_end_unix_ns,
                                                   " is before window_start_unix_ns ",
                                                   input.window_start_unix_ns));
  }
  if (input.tracking != nullptr) {
    const v1::TrackingData& tracking = *input.tracking;
    if (tracking.worker_count_size() != tracking.worker_count_time_unix_ns_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tracking.worker_count has ", tracking.worker_count_size(),
                       " samples but tracking.worker_count_time_unix_ns has ",
                       tracking.worker_count_time_unix_ns_size()));
    }
    for (int i = 0; i < tracking.workers_size(); ++i) {
      const v1::WorkerSeries& series = tracking.workers(i);
      absl::Status status = ValidateWorkerSeries(series, i);
      if (status.ok()) status = ValidateFiniteColumn(series.cores(), series, i, "cores");
      if (status.ok()) {
        status = ValidateFiniteColumn(series.memory_bytes(), series, i, "memory_bytes");
      }
      if (!status.ok()) return status;
    }
  }
  // Chunk records are validated by BuildChunkColumns, in its single pass over them.
  if (input.spans != nullptr) {
    for (int s = 0; s < input.spans->size(); ++s) {
      const v1::Span& span = (*input.spans)[s];
      for (int m = 0; m < span.metrics_size(); ++m) {
        const v1::FineMetric& metric = span.metrics(m);
        if (!std::isfinite(metric.value())) {
          return absl::InvalidArgumentError(
              absl::StrCat("spans[", s, "] (\"", span.name(), "\").metrics[", m, "] (",
                           metric.task_prefix(), ", ", metric.activity(), ", ", metric.unit(),
                           "): value is ", metric.value(), "; expected finite"));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
