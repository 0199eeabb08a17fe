#include "aggregation/aggregate.h"

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "aggregation/branch_coverage.h"
#include "aggregation/chunk_stats.h"
#include "aggregation/efficiency.h"
#include "aggregation/fine_metrics.h"
#include "aggregation/input_validation.h"
#include "aggregation/series_integral.h"
#include "aggregation/worker_metrics.h"
#include "aggregation/workflow.h"

namespace roastcoffea {
namespace {

int64_t UnixNanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

}  // namespace

AggregationInput AggregationInputFromMeasurement(const v1::Measurement& measurement,
                                                 const AggregationOptions& options) {
  AggregationInput input;
  input.report = &measurement.report();
  input.elapsed_seconds = measurement.metadata().elapsed_seconds();
  if (measurement.metadata().has_start_time() && measurement.metadata().has_end_time()) {
    input.window_start_unix_ns = UnixNanos(measurement.metadata().start_time());
    input.window_end_unix_ns = UnixNanos(measurement.metadata().end_time());
  }
  if (measurement.has_tracking()) input.tracking = &measurement.tracking();
  input.chunks = &measurement.chunks();
  input.spans = &measurement.spans();
  input.options = options;
  return input;
}

absl::StatusOr<v1::AggregatedMetrics> Aggregate(const AggregationInput& input) {
  absl::Status valid = aggregation_internal::ValidateAggregationInput(input);
  if (!valid.ok()) return valid;

  v1::AggregatedMetrics metrics;
  const v1::WorkflowReport empty_report;
  *metrics.mutable_workflow() = aggregation_internal::ComputeWorkflowMetrics(
      input.report != nullptr ? *input.report : empty_report, input.elapsed_seconds);

  std::optional<double> total_cores;
  absl::flat_hash_map<std::string, double> core_seconds_by_worker;
  if (input.tracking != nullptr) {
    v1::WorkerMetrics* workers = metrics.mutable_workers();
    *workers = aggregation_internal::ComputeWorkerMetrics(*input.tracking);
    if (workers->has_total_cores()) total_cores = workers->total_cores();
    const bool has_window = input.window_start_unix_ns != 0 || input.window_end_unix_ns != 0;
    const aggregation_internal::TimeWindow window =
        has_window ? aggregation_internal::TimeWindow{input.window_start_unix_ns,
                                                      input.window_end_unix_ns}
                   : aggregation_internal::SampleWindow(*input.tracking);
    core_seconds_by_worker =
        aggregation_internal::AddWindowedWorkerMetrics(*input.tracking, window, workers);
  }
  *metrics.mutable_efficiency() =
      aggregation_internal::ComputeEfficiencyMetrics(metrics.workflow(), total_cores);
  if (metrics.has_workers()) {
    aggregation_internal::AddCoreSecondsEfficiency(metrics.workflow(), metrics.workers(),
                                                   metrics.mutable_efficiency());
  }

  if (input.spans != nullptr) {
    if (auto fine = aggregation_internal::ComputeFineMetrics(
            *input.spans, input.options.processor_task_patterns,
            input.tracking != nullptr ? &core_seconds_by_worker : nullptr)) {
      *metrics.mutable_fine() = *std::move(fine);
    }
  }
  if (input.chunks != nullptr) {
    aggregation_internal::BranchCoverageAccumulator branches;
    absl::StatusOr<std::optional<v1::ChunkMetrics>> chunks =
        aggregation_internal::AggregateChunkRecords(
            *input.chunks, input.options.include_chunk_info,
            input.options.parallel_min_records, &branches);
    if (!chunks.ok()) return chunks.status();
    if (chunks->has_value()) *metrics.mutable_chunks() = std::move(**chunks);
    if (auto coverage = branches.Finish()) *metrics.mutable_branches() = *std::move(coverage);
  }
  return metrics;
}

}  // namespace roastcoffea
