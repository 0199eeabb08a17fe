#include "aggregation/fine_metrics.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "aggregation/distribution_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// A part of thread-noncpu (backends/threadpool): not extra thread time.
constexpr char kRunQueueWaitActivity[] = "thread-run-queue-wait";

bool IsProcessor(const std::string& prefix, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return true;
  for (const std::string& pattern : patterns) {
    if (MatchesTaskPattern(prefix, pattern)) return true;
  }
  return false;
}

}  // namespace

std::string ThreadTimeContext(absl::FunctionRef<bool(absl::string_view)> has_context) {
  for (const char* only : {"execute", "task-stream"}) {
    if (has_context(only)) return only;
  }
  return "";
}

namespace {

// A worker's thread time, each second once (ThreadTimeContext); "gather-dep" / "get-data" run on
// its event loop.
double WorkerThreadSeconds(const std::map<std::string, CompensatedAccumulator>& by_context) {
  const std::string only = ThreadTimeContext(
      [&by_context](absl::string_view context) { return by_context.count(std::string(context)); });
  if (!only.empty()) return by_context.at(only).Sum();
  CompensatedAccumulator all;
  for (const auto& [context, seconds] : by_context) all.Add(seconds.Sum());
  return all.Sum();
}

// (context, task prefix or worker, activity, unit).
using ActivityKey = std::tuple<std::string, std::string, std::string, std::string>;

// The sums of a run's fine metrics by (context, task prefix, activity, unit), by (context,
// worker, activity, unit), and each worker's "seconds" activities by context.
struct ActivitySums {
  std::map<ActivityKey, CompensatedAccumulator> by_prefix, by_worker;
  std::map<std::string, std::map<std::string, CompensatedAccumulator>> worker_seconds;
};

ActivitySums SumActivities(const google::protobuf::RepeatedPtrField<v1::Span>& spans,
                           bool any_cluster_total) {
  ActivitySums sums;
  for (const v1::Span& span : spans) {
    for (const v1::FineMetric& m : span.metrics()) {
      if (!m.worker().empty()) {
        sums.by_worker[{m.context(), m.worker(), m.activity(), m.unit()}].Add(m.value());
        // The run-queue wait is a part of thread-noncpu: counted once.
        if (m.unit() == "seconds" && m.activity() != kRunQueueWaitActivity) {
          sums.worker_seconds[m.worker()][m.context()].Add(m.value());
        }
      }
      // Cluster totals, or the per-worker metrics when the backend gave no totals.
      if (m.worker().empty() == any_cluster_total) {
        sums.by_prefix[{m.context(), m.task_prefix(), m.activity(), m.unit()}].Add(m.value());
      }
    }
  }
  return sums;
}

// The run's totals of the activities the summary names, split processor / overhead.
struct ActivityTotals {
  bool any_run_queue_wait = false;
  CompensatedAccumulator processor_run_queue_wait;
  CompensatedAccumulator processor_cpu, processor_io, overhead_cpu, overhead_io, memory_read,
      disk_read, disk_write, decompress, compress, deserialize, serialize;

  void Add(const std::string& activity, const std::string& unit, bool processor, double value) {
    if (activity == "thread-cpu") {
      (processor ? processor_cpu : overhead_cpu).Add(value);
    } else if (activity == "thread-noncpu") {
      (processor ? processor_io : overhead_io).Add(value);
    } else if (activity == kRunQueueWaitActivity) {
      if (processor) {
        any_run_queue_wait = true;
        processor_run_queue_wait.Add(value);
      }
    } else if (activity == "memory-read" && unit == "bytes") {
      memory_read.Add(value);
    } else if (activity == "disk-read" && unit == "bytes") {
      disk_read.Add(value);
    } else if (activity == "disk-write" && unit == "bytes") {
      disk_write.Add(value);
    } else if (activity == "decompress") {
      decompress.Add(value);
    } else if (activity == "compress") {
      compress.Add(value);
    } else if (activity == "deserialize") {
      deserialize.Add(value);
    } else if (activity == "serialize") {
      serialize.Add(value);
    }
  }

  void SetSummary(v1::FineMetricsSummary* fine) const {
    const double cpu = processor_cpu.Sum();
    const double io = processor_io.Sum();
    fine->set_processor_cpu_time_seconds(cpu);
    fine->set_processor_io_wait_time_seconds(io);
    fine->set_processor_cpu_percent(cpu + io > 0 ? 100 * cpu / (cpu + io) : 0.0);
    fine->set_processor_io_wait_percent(cpu + io > 0 ? 100 * io / (cpu + io) : 0.0);
    if (any_run_queue_wait) {
      fine->set_processor_run_queue_wait_seconds(std::min(io, processor_run_queue_wait.Sum()));
    }
    fine->set_overhead_cpu_time_seconds(overhead_cpu.Sum());
    fine->set_overhead_io_wait_time_seconds(overhead_io.Sum());
    fine->set_total_bytes_memory_read(memory_read.Sum());
    fine->set_disk_read_bytes(disk_read.Sum());
    fine->set_disk_write_bytes(disk_write.Sum());
    fine->set_decompression_time_seconds(decompress.Sum());
    fine->set_compression_time_seconds(compress.Sum());
    fine->set_total_compression_overhead_seconds(decompress.Sum() + compress.Sum());
    fine->set_deserialization_time_seconds(deserialize.Sum());
    fine->set_serialization_time_seconds(serialize.Sum());
    fine->set_total_serialization_overhead_seconds(deserialize.Sum() + serialize.Sum());
  }
};

// The per-worker rows: a worker whose every total is zero did nothing the metrics saw (an idle
// connection): its rows would only repeat zeros, so it gets none.
void AddWorkerRows(const ActivitySums& sums,
                   const absl::flat_hash_map<std::string, double>* core_seconds_by_worker,
                   v1::FineMetricsSummary* fine) {
  absl::flat_hash_set<std::string> active_workers;
  for (const auto& [key, total] : sums.by_worker) {
    if (total.Sum() != 0) active_workers.insert(std::get<1>(key));
  }
  for (const auto& [key, total] : sums.by_worker) {
    const auto& [context, worker, activity, unit] = key;
    if (!active_workers.contains(worker)) continue;
    v1::ActivityTotal* out = fine->add_by_worker();
    out->set_context(context);
    out->set_worker(worker);
    out->set_activity(activity);
    out->set_unit(unit);
    out->set_value(total.Sum());
  }
  for (const auto& [worker, contexts] : sums.worker_seconds) {
    if (!active_workers.contains(worker)) continue;
    v1::WorkerActivitySeconds* out = fine->add_worker_seconds();
    out->set_worker(worker);
    out->set_total_seconds(WorkerThreadSeconds(contexts));
    if (core_seconds_by_worker != nullptr) {
      if (auto it = core_seconds_by_worker->find(worker); it != core_seconds_by_worker->end()) {
        out->set_core_seconds(it->second);
      }
    }
  }
}

}  // namespace

bool MatchesTaskPattern(absl::string_view text, absl::string_view pattern) {
  // Iterative glob match with backtracking to the last '*'.
  size_t t = 0, p = 0, star = absl::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++t;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<v1::FineMetricsSummary> ComputeFineMetrics(
    const google::protobuf::RepeatedPtrField<v1::Span>& spans,
    const std::vector<std::string>& processor_patterns,
    const absl::flat_hash_map<std::string, double>* core_seconds_by_worker) {
  bool any = false;
  bool any_cluster_total = false;
  for (const v1::Span& span : spans) {
    for (const v1::FineMetric& metric : span.metrics()) {
      any = true;
      any_cluster_total |= metric.worker().empty();
    }
  }
  if (!any) return std::nullopt;

  const ActivitySums sums = SumActivities(spans, any_cluster_total);
  ActivityTotals totals;
  v1::FineMetricsSummary fine;
  for (const auto& [key, total] : sums.by_prefix) {
    const auto& [context, prefix, activity, unit] = key;
    const double value = total.Sum();
    const bool processor = IsProcessor(prefix, processor_patterns);
    totals.Add(activity, unit, processor, value);
    v1::ActivityTotal* out = fine.add_by_task_prefix();
    out->set_context(context);
    out->set_task_prefix(prefix);
    out->set_activity(activity);
    out->set_unit(unit);
    out->set_value(value);
    out->set_is_processor(processor);
  }
  AddWorkerRows(sums, core_seconds_by_worker, &fine);
  totals.SetSummary(&fine);
  return fine;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
