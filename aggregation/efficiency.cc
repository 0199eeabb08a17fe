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

void AddCoreSecondsEfficiency(const v1::WorkflowMetrics& workflow,
                              const v1::WorkerMetrics& workers,
                              v1::EfficiencyMetrics* efficiency) {
  if (!workers.has_core_seconds()) return;
  const double core_seconds = workers.core_seconds();
  const double cpu = workflow.total_cpu_time_seconds();
  const double events = static_cast<double>(workflow.total_events());
  efficiency->set_core_efficiency_over_core_seconds_fraction(
      core_seconds > 0 ? cpu / core_seconds : 0.0);
  efficiency->set_event_rate_core_seconds_khz(core_seconds > 0 ? events / core_seconds / 1000
                                                               : 0.0);
  if (workers.has_avg_cores_over_window() && workers.avg_cores_over_window() > 0) {
    efficiency->set_parallel_efficiency_fraction(efficiency->speedup_factor() /
                                                 workers.avg_cores_over_window());
  }
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
