// Efficiency metrics (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_
#define ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_

#include <optional>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's calculate_efficiency_metrics (reference §2.3), E = elapsed, cpu = total CPU
// time, both from `workflow`:
//   speedup_factor = cpu/E (0 when E <= 0; always set);
//   core_efficiency_fraction = cpu/(total_cores*E), event_rate_core_khz =
//   events/(E*total_cores)/1000: unset when total_cores is nullopt, else 0 when E <= 0.
// Cost: O(1).
v1::EfficiencyMetrics ComputeEfficiencyMetrics(const v1::WorkflowMetrics& workflow,
                                               std::optional<double> total_cores);

// The fixes (reference §6.9, §6.10), added to `efficiency` when `workers` has core_seconds:
//   core_efficiency_over_core_seconds_fraction = cpu / core_seconds,
//   event_rate_core_seconds_khz = events / core_seconds / 1000 (both 0 when core_seconds is 0);
//   parallel_efficiency_fraction = speedup_factor / avg_cores_over_window (when that is > 0).
// Cost: O(1).
void AddCoreSecondsEfficiency(const v1::WorkflowMetrics& workflow,
                              const v1::WorkerMetrics& workers,
                              v1::EfficiencyMetrics* efficiency);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_EFFICIENCY_H_
