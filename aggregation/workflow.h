// Workflow metrics: totals and rates from the executor's report (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_WORKFLOW_H_
#define ROASTCOFFEA_AGGREGATION_WORKFLOW_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's aggregate_workflow_metrics (docs/reference.md §2.1), E = elapsed_seconds, with
// unknown values left absent instead of 0 (a null `report` means the executor reported nothing):
//   totals: from report.datasets summed when there are any, else from the report itself
//           (events; compressed and uncompressed bytes when the report has them; process time);
//   total_cpu_time_seconds = summed_chunk_wall_seconds = process time, when reported (the
//           original's stand-in E is not used: it made speedup 1 and efficiency 1/cores);
//   data_rate_gbps = bytes*8/1e9/E, data_rate_mbytes_per_second = bytes/1e6/E (bytes known,
//           E > 0); event_rate_elapsed_khz = events/E/1000 (events known, E > 0);
//   event_rate_cpu_total_khz = events/total_cpu_time/1000 (both known, that time > 0);
//   avg_cpu_time_per_chunk_seconds = total_cpu_time/report.chunks (known, chunks > 0);
//   compression_factor = uncompressed/compressed, set only when both are > 0.
// `elapsed_seconds` must already be validated (finite, >= 0). Cost: O(datasets).
v1::WorkflowMetrics ComputeWorkflowMetrics(const v1::WorkflowReport* report,
                                           double elapsed_seconds);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_WORKFLOW_H_
