#include "aggregation/aggregate.h"

#include <optional>

#include "aggregation/chunk_stats.h"
#include "aggregation/efficiency.h"
#include "aggregation/input_validation.h"
#include "aggregation/worker_metrics.h"
#include "aggregation/workflow.h"

namespace roastcoffea {

absl::StatusOr<v1::AggregatedMetrics> Aggregate(const AggregationInput& input) {
  absl::Status valid = aggregation_internal::ValidateAggregationInput(input);
  if (!valid.ok()) return valid;

  v1::AggregatedMetrics metrics;
  *metrics.mutable_workflow() =
      aggregation_internal::ComputeWorkflowMetrics(input.report, input.elapsed_seconds);

  std::optional<double> total_cores;
  if (input.tracking.has_value()) {
    *metrics.mutable_workers() = aggregation_internal::ComputeWorkerMetrics(*input.tracking);
    if (metrics.workers().has_total_cores()) total_cores = metrics.workers().total_cores();
  }
  *metrics.mutable_efficiency() =
      aggregation_internal::ComputeEfficiencyMetrics(metrics.workflow(), total_cores);

  if (std::optional<v1::ChunkMetrics> chunks =
          aggregation_internal::ComputeChunkMetrics(input.chunks)) {
    *metrics.mutable_chunks() = *std::move(chunks);
  }
  // input.spans: fine metrics are not aggregated yet.
  return metrics;
}

}  // namespace roastcoffea
