#include "aggregation/efficiency.h"

#include <algorithm>

namespace roastcoffea {
namespace aggregation_internal {

v1::EfficiencyMetrics ComputeEfficiencyMetrics(const v1::WorkflowMetrics& workflow,
                                               std::optional<double> total_cores) {
  const double elapsed = workflow.elapsed_time_seconds();
  const double cpu = workflow.total_cpu_time_seconds();
  const double events = static_cast<double>(workflow.total_events());

  // Unknown inputs leave the figure unset (None), never 0: no summed chunk wall time, no
  // speedup or core efficiency; no events, no event rate; no elapsed time or cores, neither.
  v1::EfficiencyMetrics efficiency;
  const bool has_cpu = workflow.has_total_cpu_time_seconds();
  if (has_cpu && elapsed > 0) efficiency.set_speedup_factor(cpu / elapsed);
  if (total_cores.has_value() && elapsed > 0 && *total_cores > 0) {
    if (has_cpu) efficiency.set_core_efficiency_fraction(cpu / (*total_cores * elapsed));
    if (workflow.has_total_events()) {
      efficiency.set_event_rate_core_khz(events / (elapsed * *total_cores) / 1000);
    }
  }
  return efficiency;
}

void AddCoreSecondsEfficiency(const v1::WorkflowMetrics& workflow, const v1::WorkerMetrics& workers,
                              v1::EfficiencyMetrics* efficiency) {
  if (!workers.has_core_seconds() || !(workers.core_seconds() > 0)) return;
  const double core_seconds = workers.core_seconds();
  if (workflow.has_total_cpu_time_seconds()) {
    efficiency->set_core_efficiency_over_core_seconds_fraction(workflow.total_cpu_time_seconds() /
                                                               core_seconds);
  }
  if (workflow.has_total_events()) {
    efficiency->set_event_rate_core_seconds_khz(static_cast<double>(workflow.total_events()) /
                                                core_seconds / 1000);
  }
  if (efficiency->has_speedup_factor() && workers.has_avg_cores_over_window() &&
      workers.avg_cores_over_window() > 0) {
    efficiency->set_parallel_efficiency_fraction(efficiency->speedup_factor() /
                                                 workers.avg_cores_over_window());
  }
}

void AddTaskExecutionEfficiency(const google::protobuf::RepeatedPtrField<v1::Span>& spans,
                                const v1::WorkerMetrics& workers,
                                v1::EfficiencyMetrics* efficiency) {
  if (!workers.has_core_seconds() || !(workers.core_seconds() > 0)) return;
  std::optional<double> execute_core_seconds;
  for (const v1::Span& span : spans) {
    for (const v1::FineMetric& metric : span.metrics()) {
      if (metric.context() != "taskvine-run" || metric.activity() != "execute-core-seconds" ||
          metric.unit() != "core-seconds" || !metric.worker().empty()) {
        continue;
      }
      execute_core_seconds = std::max(execute_core_seconds.value_or(0.0), metric.value());
    }
  }
  if (!execute_core_seconds.has_value()) return;
  efficiency->set_task_execution_core_efficiency_fraction(*execute_core_seconds /
                                                          workers.core_seconds());
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
