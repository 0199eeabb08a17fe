// Efficiency metrics (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_
#define ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_

#include <optional>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's calculate_efficiency_metrics (docs/reference.md §2.3), E = elapsed, cpu = total
// CPU time, both from `workflow`:
//   speedup_factor = cpu/E (cpu known, E > 0);
//   core_efficiency_fraction = cpu/(total_cores*E) (cpu known), event_rate_core_khz =
//   events/(E*total_cores)/1000 (events known): both need total_cores > 0 and E > 0.
// Unknown inputs leave a figure unset, never 0 (the original gives 0 or uses E for cpu).
// Cost: O(1).
v1::EfficiencyMetrics ComputeEfficiencyMetrics(const v1::WorkflowMetrics& workflow,
                                               std::optional<double> total_cores);

// The fixes (docs/reference.md §6.9, §6.10), added to `efficiency` when `workers` has core_seconds:
//   core_efficiency_over_core_seconds_fraction = cpu / core_seconds (cpu known),
//   event_rate_core_seconds_khz = events / core_seconds / 1000 (events known), both only when
//   core_seconds > 0; parallel_efficiency_fraction = speedup_factor / avg_cores_over_window
//   (speedup known, that average > 0).
// Cost: O(1).
void AddCoreSecondsEfficiency(const v1::WorkflowMetrics& workflow, const v1::WorkerMetrics& workers,
                              v1::EfficiencyMetrics* efficiency);

// Engines that log their tasks' execution (TaskVine, Work Queue), added to `efficiency` when
// `workers` has core_seconds > 0 and a span carries the "taskvine-run" "execute-core-seconds"
// fine metric (cores x execution of the retrieved attempts over the whole run, so the same in
// every span: the largest is taken):
//   task_execution_core_efficiency_fraction = execute-core-seconds / core_seconds.
// Cost: O(m) for m span metrics.
void AddTaskExecutionEfficiency(const google::protobuf::RepeatedPtrField<v1::Span>& spans,
                                const v1::WorkerMetrics& workers,
                                v1::EfficiencyMetrics* efficiency);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_
