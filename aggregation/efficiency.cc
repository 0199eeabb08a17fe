#include "aggregation/efficiency.h"

namespace roastcoffea {
namespace aggregation_internal {

v1::EfficiencyMetrics ComputeEfficiencyMetrics(const v1::WorkflowMetrics& workflow,
                                               std::optional<double> total_cores) {
  const double elapsed = workflow.elapsed_time_seconds();
  const double cpu = workflow.total_cpu_time_seconds();
  const double events = static_cast<double>(workflow.total_events());

  v1::EfficiencyMetrics efficiency;
  efficiency.set_speedup_factor(elapsed > 0 ? cpu / elapsed : 0.0);
  // Without core counts (no tracking, or no worker reported cores) these stay unset, as None.
  if (total_cores.has_value()) {
    const bool usable = elapsed > 0 && *total_cores > 0;
    efficiency.set_core_efficiency_fraction(usable ? cpu / (*total_cores * elapsed) : 0.0);
    efficiency.set_event_rate_core_khz(usable ? events / (elapsed * *total_cores) / 1000 : 0.0);
  }
  return efficiency;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
