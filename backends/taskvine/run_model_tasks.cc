// RunModel: the handlers of the tasks' transactions (CATEGORY, TASK states, LIBRARY records):
// attempts, their timings and outcomes, and library instances.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/run_model_internal.h"

namespace roastcoffea {
namespace taskvine {

using internal::Equals;
using internal::kBytesPerMebibyte;
using internal::RejectedSecondsText;
using internal::Seconds;

namespace {

// The allocation and commit times of a RUNNING record; all zero when an entry is malformed.
struct RunningPayload {
  double cores = 0, memory = 0, disk = 0, commit_start = 0, commit_end = 0, input_s = 0,
         input_mb = 0;
};

RunningPayload ParseRunningPayload(absl::string_view json) {
  RunningPayload p;
  if (json.empty()) return p;
  bool numbers_ok = true;
  absl::Status status = ForEachJsonEntry(json, [&](absl::string_view key, absl::string_view text) {
    double* target = nullptr;
    if (Equals(key, "cores"))
      target = &p.cores;
    else if (Equals(key, "memory"))
      target = &p.memory;
    else if (Equals(key, "disk"))
      target = &p.disk;
    else if (Equals(key, "time_commit_start"))
      target = &p.commit_start;
    else if (Equals(key, "time_commit_end"))
      target = &p.commit_end;
    else if (Equals(key, "time_input_mgr"))
      target = &p.input_s;
    else if (Equals(key, "size_input_mgr"))
      target = &p.input_mb;
    if (target != nullptr) numbers_ok = ParseJsonNumber(text, target) && numbers_ok;
  });
  if (!numbers_ok) status = absl::InvalidArgumentError("bad number");
  if (!status.ok()) p = RunningPayload();
  return p;
}

// The entries of a RETRIEVED (or DONE) payload used here; a malformed number reads as 0.
struct RetrievedPayload {
  double wq_input_mb = 0, wq_input_s = 0;
  double worker_start = 0, worker_end = 0, output_s = 0, output_mb = 0;
  double cpu = -1;  // -1: not measured
  double memory = 0, machine_load = 0, machine_cpus = 0;
};

RetrievedPayload ParseRetrievedPayload(absl::string_view json) {
  RetrievedPayload p;
  (void)ForEachJsonEntry(json, [&](absl::string_view key, absl::string_view text) {
    // Only the keys used here are parsed (a RETRIEVED payload has 15-30 of them).
    double* target = nullptr;
    if (Equals(key, "time_worker_start"))
      target = &p.worker_start;
    else if (Equals(key, "time_worker_end"))
      target = &p.worker_end;
    else if (Equals(key, "time_output_mgr") || Equals(key, "wq_output_time"))
      target = &p.output_s;
    else if (Equals(key, "size_output_mgr") || Equals(key, "wq_output_size"))
      target = &p.output_mb;
    else if (Equals(key, "wq_input_time"))
      target = &p.wq_input_s;
    else if (Equals(key, "wq_input_size"))
      target = &p.wq_input_mb;
    else if (Equals(key, "cpu_time"))
      target = &p.cpu;
    else if (Equals(key, "memory"))
      target = &p.memory;
    else if (Equals(key, "machine_load"))
      target = &p.machine_load;
    else if (Equals(key, "machine_cpus"))
      target = &p.machine_cpus;
    if (target != nullptr && !ParseJsonNumber(text, target)) *target = 0;
  });
  return p;
}

}  // namespace

void RunModel::ApplyCategory(const TxnRecord& r) { CategoryIndex(r.category); }

void RunModel::ApplyTaskReady(const TxnRecord& r) {
  if (libraries_.contains(r.task_id)) return;
  if (r.attempt == 0) work_queue_format_ = true;
  auto inserted = tasks_.try_emplace(r.task_id);
  Task& task = *inserted.first;
  if (inserted.second) {
    task.id = r.task_id;
    task.category = CategoryIndex(r.category);
  }
  if (!task.attempts.empty()) {
    Attempt& last = task.attempts.back();
    if (!last.dispatched()) {  // READY twice without a dispatch: keep one attempt
      last.ready_us = r.time_us;
      return;
    }
    if (last.end == AttemptEnd::kOpen && last.worker >= 0) {
      Worker& w = workers_[last.worker];
      if (last.end_us > 0) {
        last.end = AttemptEnd::kRetriedOnWorker;  // exhausted or forsaken on the worker
        WorkerStep(w, r.time_us, 0, -1);
      } else {
        last.end_us = r.time_us;  // re-queued without a WAITING_RETRIEVAL: lost
        last.end = AttemptEnd::kLost;
        WorkerStep(w, r.time_us, -1, -1);
      }
      RemoveFromWorker(w, r.task_id);
    }
  }
  Attempt attempt;
  attempt.number = r.attempt > 0 ? r.attempt : static_cast<int>(task.attempts.size()) + 1;
  attempt.ready_us = r.time_us;
  task.attempts.push_back(std::move(attempt));
  SetReady(r.time_us, ready_ + 1);
}

void RunModel::ApplyTaskRunning(const TxnRecord& r) {
  const int index = WorkerIndex(r.worker);
  if (index < 0) ++unknown_worker_records_;
  auto [cores, memory, disk, commit_start, commit_end, input_s, input_mb] =
      ParseRunningPayload(r.json);
  Evidence(index, r.time_us);
  const double run_so_far = RunSoFarSeconds(r.time_us);
  if (input_s < 0 || input_s > run_so_far) {
    Reject("time_input_mgr",
           absl::StrFormat("task %d RUNNING: %s, outside [0, %.3f] s (the run so far)", r.task_id,
                           RejectedSecondsText(input_s), run_so_far));
    input_s = 0;
  }
  if (commit_end > 0 && commit_start > 0 &&
      (commit_end < commit_start || commit_end - commit_start > run_so_far)) {
    Reject("time_commit_end - time_commit_start",
           absl::StrFormat("task %d RUNNING: %s, outside [0, %.3f] s (the run so far)", r.task_id,
                           RejectedSecondsText(commit_end - commit_start), run_so_far));
    commit_start = commit_end = 0;
  }
  Task* found = tasks_.find(r.task_id);
  if (found == nullptr) {
    // No READY: a library instance (serverless), not a task of the application.
    *libraries_.try_emplace(r.task_id).first = index;
    if (index >= 0) {
      workers_[index].library_cores = cores;
      ++workers_[index].dispatches;
    }
    return;
  }
  Task& task = *found;
  if (task.attempts.empty() || task.attempts.back().dispatched()) return;
  Attempt& a = task.attempts.back();
  a.running_us = r.time_us;
  a.worker = index;
  a.cores = static_cast<float>(cores);
  a.memory_mb = static_cast<float>(memory);
  a.disk_mb = static_cast<float>(disk);
  a.commit_seconds =
      static_cast<float>(input_s > 0 ? input_s : std::max(0.0, commit_end - commit_start));
  a.input_bytes = input_mb * kBytesPerMebibyte;
  a.commit_end_s = commit_end;
  SetReady(r.time_us, std::max(0, ready_ - 1));
  if (index >= 0) {
    Worker& w = workers_[index];
    ++w.dispatches;
    w.on_worker.push_back(r.task_id);
    WorkerStep(w, r.time_us, +1, +1);
  }
}

void RunModel::ApplyTaskWaitingRetrieval(const TxnRecord& r) {
  if (libraries_.contains(r.task_id)) {
    ++library_waiting_retrievals_;  // counted by the manager's tasks_done
    return;
  }
  Task* task = tasks_.find(r.task_id);
  if (task == nullptr || task->attempts.empty()) return;
  Attempt& a = task->attempts.back();
  if (!a.dispatched() || a.end_us != 0 || a.end != AttemptEnd::kOpen) return;
  Evidence(a.worker, r.time_us);
  a.end_us = r.time_us;
  a.finished_on_worker = true;
  if (a.worker >= 0) WorkerStep(workers_[a.worker], r.time_us, -1, 0);
}

// RETRIEVED, or DONE (which also closes the attempt when no RETRIEVED came first).
void RunModel::ApplyTaskRetrievedOrDone(const TxnRecord& r) {
  if (const int* library = libraries_.find(r.task_id)) {
    if (*library >= 0) {
      Worker& w = workers_[*library];
      if (w.library_end_us == 0) w.library_end_us = r.time_us;
    }
    return;
  }
  Task* found = tasks_.find(r.task_id);
  if (found == nullptr) return;
  Task& task = *found;
  if (r.kind == TxnKind::kTaskDone) {
    task.done = true;
    task.done_us = r.time_us;
    task.result = Intern(r.word);
    task.exit_code = r.exit_code;
  }
  if (task.attempts.empty()) return;
  Attempt& a = task.attempts.back();
  if (!a.dispatched() || a.end != AttemptEnd::kOpen) return;
  // DONE without RETRIEVED (7.5 / Work Queue variants) closes the attempt too.
  a.retrieved_us = r.time_us;
  a.result = Intern(r.word);
  a.exit_code = r.exit_code;
  if (!r.json2.empty()) ApplyRetrievedPayload(r, a);
  Evidence(a.worker, r.time_us);
  Worker* w = a.worker >= 0 ? &workers_[a.worker] : nullptr;
  if (a.end_us == 0) {
    a.end_us = r.time_us;
    if (w != nullptr) WorkerStep(*w, r.time_us, -1, 0);
  }
  a.end = AttemptEnd::kRetrieved;
  if (w != nullptr) {
    WorkerStep(*w, r.time_us, 0, -1);
    RemoveFromWorker(*w, r.task_id);
  }
}

// The worker times, output, resources measured and Work Queue commit of a RETRIEVED (or DONE)
// payload, the impossible ones rejected.
void RunModel::ApplyRetrievedPayload(const TxnRecord& r, Attempt& a) {
  auto [wq_input_mb, wq_input_s, worker_start, worker_end, output_s, output_mb, cpu, memory,
        machine_load, machine_cpus] = ParseRetrievedPayload(r.json2);
  // Durations longer than the run so far and worker times outside it are impossible
  // (seen: time_output_mgr = 1.8e13 s, an unsigned underflow, after a non-zero exit).
  const double run_so_far = RunSoFarSeconds(r.time_us);
  const double run_start_s = Seconds(start_us_ > 0 ? start_us_ : first_us_);
  const double record_s = Seconds(r.time_us);
  const auto impossible_duration = [&](const char* field, double* value) {
    if (*value >= 0 && *value <= run_so_far) return;
    Reject(field, absl::StrFormat("task %d %s %s: %s, outside [0, %.3f] s (the run so far)",
                                  r.task_id, r.kind == TxnKind::kTaskDone ? "DONE" : "RETRIEVED",
                                  r.word, RejectedSecondsText(*value), run_so_far));
    *value = 0;
  };
  impossible_duration("time_output_mgr", &output_s);
  impossible_duration("wq_input_time", &wq_input_s);
  // Worker clocks may be off by a little, not by minutes.
  constexpr double kClockSkewSeconds = 300;
  if (worker_start != 0 || worker_end != 0) {
    const bool inside = worker_start > run_start_s - kClockSkewSeconds &&
                        worker_end >= worker_start && worker_end < record_s + kClockSkewSeconds;
    if (!inside) {
      Reject("time_worker_start..time_worker_end",
             absl::StrFormat("task %d RETRIEVED: %.6f .. %.6f, not within the run (%.6f .. "
                             "%.6f, +- %.0f s); "
                             "execution taken from the log's RUNNING .. WAITING_RETRIEVAL",
                             r.task_id, worker_start, worker_end, run_start_s, record_s,
                             kClockSkewSeconds));
      worker_start = worker_end = 0;
    }
  }
  if (cpu > 0) {
    const double cores_bound = std::max(
        {1.0, static_cast<double>(a.cores), a.worker >= 0 ? workers_[a.worker].cores : 0.0});
    if (cpu > cores_bound * run_so_far) {
      Reject(
          "cpu_time",
          absl::StrFormat("task %d RETRIEVED: %s, more than %.0f cores x %.3f s (the run so far)",
                          r.task_id, RejectedSecondsText(cpu), cores_bound, run_so_far));
      cpu = -1;  // not measured
    }
  }
  a.worker_start_s = worker_start;
  a.worker_end_s = worker_end;
  a.output_seconds = static_cast<float>(output_s);
  a.output_bytes = output_mb * kBytesPerMebibyte;
  if (cpu >= 0) {  // measured by the resource monitor
    a.monitored = true;
    a.cpu_seconds = static_cast<float>(cpu);
    a.peak_memory_mb = static_cast<float>(memory);
  }
  if (machine_load >= 0 && machine_cpus > 0) {
    a.machine_load = static_cast<float>(machine_load);
    a.machine_cpus = static_cast<float>(machine_cpus);
  }
  if (a.commit_seconds == 0) a.commit_seconds = static_cast<float>(wq_input_s);
  if (a.input_bytes == 0) a.input_bytes = wq_input_mb * kBytesPerMebibyte;
}

void RunModel::ApplyLibrary(const TxnRecord& r) {
  const int index = WorkerIndex(r.worker);
  Evidence(index, r.time_us);
  if (r.word == "SENT" || r.word == "WAITING") {
    if (!libraries_.contains(r.task_id)) {
      // 7.5-era logs show a library as an ordinary task first: take it out of the tasks.
      Task* task = tasks_.find(r.task_id);
      if (task != nullptr) {
        for (Attempt& a : task->attempts) {
          if (a.dispatched() && a.end == AttemptEnd::kOpen && a.worker >= 0) {
            Worker& w = workers_[a.worker];
            WorkerStep(w, r.time_us, a.end_us == 0 ? -1 : 0, -1);
            RemoveFromWorker(w, r.task_id);
          } else if (!a.dispatched()) {
            SetReady(r.time_us, std::max(0, ready_ - 1));
          }
        }
        tasks_.erase(r.task_id);
      }
      *libraries_.try_emplace(r.task_id).first = index;
    }
    if (r.word == "SENT" && index >= 0 && workers_[index].library_sent_us == 0) {
      workers_[index].library_sent_us = r.time_us;
    }
  } else if (r.word == "STARTED" && index >= 0) {
    workers_[index].library_started_us = r.time_us;
  }
}

}  // namespace taskvine
}  // namespace roastcoffea
