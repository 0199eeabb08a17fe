#include "aggregation/cpu_metrics.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "aggregation/distribution_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Sum of one activity's seconds over every context and task prefix; nullopt when no entry has
// it (an engine that does not measure it is unknown, not 0).
std::optional<double> ActivitySeconds(const v1::FineMetricsSummary& fine,
                                      absl::string_view activity) {
  std::vector<double> values;
  for (const v1::ActivityTotal& total : fine.by_task_prefix()) {
    if (total.activity() == activity && total.unit() == "seconds") values.push_back(total.value());
  }
  if (values.empty()) return std::nullopt;
  return CompensatedSum(values);
}

void AddChunkSplit(const ChunkColumns& chunks, v1::CpuMetrics* cpu) {
  if (chunks.size() == 0) return;
  // The split is over the records that measured CPU: a record without (a task the resource
  // monitor did not follow, killed before it reported) would count all its wall time as off-CPU.
  bool any_cpu = false;
  for (double seconds : chunks.cpu_seconds) any_cpu = any_cpu || seconds > 0;
  // One pass with running compensated sums (the same operations, in the same order, as
  // CompensatedSum over vectors of the values, without the vectors).
  CompensatedAccumulator wall, thread_cpu, wait, blocked;
  int64_t records = 0, records_with_wait = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const double cpu_seconds = chunks.cpu_seconds[i];
    if (any_cpu && !(cpu_seconds > 0)) continue;
    ++records;
    const double duration = chunks.duration_seconds[i];
    wall.Add(duration);
    thread_cpu.Add(cpu_seconds);
    if (chunks.has(i, ChunkColumns::kHasRunQueueWait)) {
      ++records_with_wait;
      const double run_queue_wait = chunks.run_queue_wait_seconds[i];
      wait.Add(run_queue_wait);
      blocked.Add(std::max(0.0, duration - cpu_seconds - run_queue_wait));
    }
  }
  cpu->set_chunk_wall_seconds(wall.Sum());
  if (any_cpu) cpu->set_chunk_cpu_seconds(thread_cpu.Sum());
  // Waiting and blocked only when every record of the split measured its run-queue delay.
  if (records_with_wait > 0 && records_with_wait == records) {
    cpu->set_chunk_run_queue_wait_seconds(wait.Sum());
    cpu->set_chunk_blocked_seconds(blocked.Sum());
  }
}

}  // namespace

v1::CpuMetrics ComputeCpuMetrics(const CpuInputs& inputs) {
  v1::CpuMetrics cpu;
  if (inputs.chunks != nullptr) AddChunkSplit(*inputs.chunks, &cpu);

  if (inputs.fine != nullptr) {
    if (std::optional<double> seconds = ActivitySeconds(*inputs.fine, "thread-cpu")) {
      cpu.set_cpu_seconds(*seconds);
      cpu.set_cpu_source(inputs.in_process_workers
                             ? "worker threads' CPU clocks"
                             : "engine's thread-cpu accounting (fine metrics)");
    } else if (std::optional<double> monitored = ActivitySeconds(*inputs.fine, "cpu-time")) {
      cpu.set_cpu_seconds(*monitored);
      cpu.set_cpu_source("resource monitor's cpu_time of the tasks");
    }
  }
  if (!cpu.has_cpu_seconds() && cpu.has_chunk_cpu_seconds()) {
    cpu.set_cpu_seconds(cpu.chunk_cpu_seconds());
    cpu.set_cpu_source("chunk records' thread CPU (inside the processor only)");
  }
  if (!cpu.has_cpu_seconds()) {
    cpu.set_unknown_reason("no thread CPU, monitored cpu_time or chunk CPU was reported");
  }

  const double elapsed = inputs.elapsed_seconds;
  if (inputs.in_process_workers && inputs.workers != nullptr && inputs.workers->has_total_cores() &&
      inputs.workers->total_cores() > 0) {
    const double threads = inputs.workers->total_cores();
    if (inputs.usable_cpus.has_value() && *inputs.usable_cpus > 0) {
      const double cores = std::min(threads, *inputs.usable_cpus);
      cpu.set_core_seconds_available(elapsed * cores);
      cpu.set_capacity_source(absl::StrFormat("elapsed x min(%g worker threads, %g usable CPUs)",
                                              threads, *inputs.usable_cpus));
    } else {
      cpu.set_core_seconds_available(elapsed * threads);
      cpu.set_capacity_source(
          absl::StrFormat("elapsed x %g worker threads (usable CPUs not recorded)", threads));
    }
  } else if (inputs.workers != nullptr && inputs.workers->has_core_seconds()) {
    cpu.set_core_seconds_available(inputs.workers->core_seconds());
    cpu.set_capacity_source("workers' cores integrated over the run");
  }
  if (cpu.has_core_seconds_available() && elapsed > 0) {
    cpu.set_usable_cores(cpu.core_seconds_available() / elapsed);
  }
  if (cpu.has_cpu_seconds() && cpu.has_core_seconds_available() &&
      cpu.core_seconds_available() > 0) {
    cpu.set_cpu_efficiency_fraction(cpu.cpu_seconds() / cpu.core_seconds_available());
  }
  if (cpu.has_cpu_seconds() && cpu.cpu_seconds() > 0 && inputs.workflow != nullptr &&
      inputs.workflow->has_total_events()) {
    cpu.set_event_rate_per_cpu_second_khz(static_cast<double>(inputs.workflow->total_events()) /
                                          cpu.cpu_seconds() / 1000);
  }
  return cpu;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
