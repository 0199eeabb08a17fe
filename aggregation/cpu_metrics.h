// Measured CPU against the capacity the workers had (internal to //aggregation): the one place
// where CPU efficiency and the chunks' CPU / run-queue / blocked split are defined.
#ifndef ROASTCOFFEA_AGGREGATION_CPU_METRICS_H_
#define ROASTCOFFEA_AGGREGATION_CPU_METRICS_H_

#include <optional>

#include "aggregation/chunk_columns.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

struct CpuInputs {
  // The run's monotonic elapsed time (validated, >= 0).
  double elapsed_seconds = 0;
  // Null where absent.
  const v1::WorkflowMetrics* workflow = nullptr;
  const v1::WorkerMetrics* workers = nullptr;
  const v1::FineMetricsSummary* fine = nullptr;
  const ChunkColumns* chunks = nullptr;  // the chunk records' columns
  // The workers are threads of this process (TrackingData.workers_share_process).
  bool in_process_workers = false;
  // CPUs this process may use (HostFacts.usable_cpus), when known.
  std::optional<double> usable_cpus;
};

// CpuMetrics (schema comments give the meaning of each field):
//   cpu_seconds, first source that has it:
//     1. fine metrics, activity "thread-cpu" (unit seconds, every context and prefix): the
//        threadpool's worker-thread CPU clocks, Dask's thread-cpu digests;
//     2. fine metrics, activity "cpu-time" (TaskVine / Work Queue resource monitor);
//     3. the chunk records' cpu_seconds summed, when any is > 0 (thread CPU clock inside the
//        processor only);
//   core_seconds_available:
//     in-process workers: elapsed x min(worker threads, usable_cpus) (worker threads = the
//       tracked total cores, each thread one core; usable_cpus unknown: the threads alone);
//     engines: WorkerMetrics.core_seconds (their workers' cores integrated over the run);
//   cpu_efficiency_fraction = cpu_seconds / core_seconds_available (both known, capacity > 0);
//   usable_cores = core_seconds_available / elapsed (elapsed > 0);
//   event_rate_per_cpu_second_khz = events / cpu_seconds / 1000 (events known, cpu > 0);
//   chunk split, over the records that measured CPU (cpu_seconds > 0; every record when none
//     did): chunk_wall_seconds = sum of their durations, chunk_cpu_seconds = sum of their
//     cpu_seconds (when any > 0); when every one of them has run_queue_wait_seconds: that sum,
//     and chunk_blocked_seconds = sum of max(0, duration - cpu - run-queue wait).
// Unknown values stay absent; unknown_reason says why cpu_seconds is. Cost: O(chunks + fine).
v1::CpuMetrics ComputeCpuMetrics(const CpuInputs& inputs);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CPU_METRICS_H_
