// RunModel: the handlers of the manager's and the workers' transactions (MANAGER, WORKER,
// TRANSFER, CACHE_UPDATE records).
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/run_model_internal.h"

namespace roastcoffea {
namespace taskvine {

using internal::Seconds;

void RunModel::ApplyManagerStart(const TxnRecord& r) {
  if (manager_runs_ > 0 && (!workers_.empty() || !tasks_.empty())) {
    notes_.push_back(absl::StrCat("the transactions log holds several manager runs (manager pid ",
                                  manager_pid_, " then ", r.manager_pid,
                                  "); only the last one is measured"));
    Reset();
    first_us_ = r.time_us;
    last_us_ = r.time_us;
  }
  ++manager_runs_;
  manager_pid_ = r.manager_pid;
  start_us_ = r.time_us;
}

void RunModel::ApplyManagerEnd(const TxnRecord& r) {
  ended_ = true;
  end_us_ = r.time_us;
  end_line_ = line_;
}

void RunModel::ApplyWorkerConnection(const TxnRecord& r) {
  const int index = static_cast<int>(workers_.size());
  last_worker_ = -1;  // a reconnecting id now means the new worker
  workers_.emplace_back();
  Worker& w = workers_.back();
  w.id = std::string(r.worker);
  w.address = std::string(r.address);
  w.connect_us = r.time_us;
  w.last_evidence_us = r.time_us;
  w.series.push_back({r.time_us, 0, 0});
  worker_by_id_[w.id] = index;
  worker_by_address_[w.address] = index;
  RecordWorkerCount(r.time_us, connected_ + 1);
}

void RunModel::ApplyWorkerDisconnection(const TxnRecord& r) {
  if (r.worker == "(null)") {
    ++null_disconnections_;
    return;
  }
  const int index = WorkerIndex(r.worker);
  if (index < 0) {
    ++unknown_worker_records_;
    return;
  }
  Worker& w = workers_[index];
  if (w.disconnect_us != 0) return;
  // Attempts still on the worker are lost with it.
  for (int64_t task_id : w.on_worker) {
    Task* task = tasks_.find(task_id);
    if (task == nullptr || task->attempts.empty()) continue;
    Attempt& a = task->attempts.back();
    if (a.worker != index || a.end != AttemptEnd::kOpen) continue;
    if (a.end_us == 0) a.end_us = r.time_us;
    a.end = AttemptEnd::kLost;
  }
  w.on_worker.clear();
  const int32_t executing = w.executing;
  WorkerStep(w, r.time_us, -w.executing, -w.active);
  w.disconnect_us = r.time_us;
  w.reason = Intern(r.word);
  // Disconnected by the manager after a silence: the worker may have died long before
  // (killed without its process group, its children holding the socket).
  const int64_t last = std::max(w.last_evidence_us, w.connect_us);
  if (w.reason == "FAILURE" && Seconds(r.time_us - last) >= kSilentBeforeDisconnectSeconds) {
    w.silent_since_us = last;
    w.executing_when_disconnected = executing;
  }
  RecordWorkerCount(r.time_us, connected_ - 1);
}

void RunModel::ApplyWorkerResources(const TxnRecord& r) {
  const int index = WorkerIndex(r.worker);
  if (index < 0) {
    ++unknown_worker_records_;
    return;
  }
  Evidence(index, r.time_us);
  Worker& w = workers_[index];
  if (w.has_resources) return;
  double cores = 0, memory = 0, disk = 0;
  absl::Status status = ForEachJsonNumber(r.json, [&](absl::string_view key, double value) {
    if (key == "cores") cores = value;
    if (key == "memory") memory = value;
    if (key == "disk") disk = value;
  });
  if (!status.ok()) return;
  w.has_resources = true;
  w.cores = cores;
  w.memory_mb = memory;
  w.disk_mb = disk;
}

void RunModel::ApplyWorkerTransfer(const TxnRecord& r) {
  int index = -1;
  if (!r.worker.empty()) {
    index = WorkerIndex(r.worker);
  } else {
    // Work Queue: attributed to the worker of the task's current attempt.
    work_queue_format_ = true;
    const Task* task = tasks_.find(r.task_id);
    if (task != nullptr && !task->attempts.empty()) index = task->attempts.back().worker;
  }
  const bool input = r.word == "INPUT";
  (input ? bytes_in_ : bytes_out_) += r.bytes;
  ++(input ? transfers_in_ : transfers_out_);
  if (index >= 0) {
    Evidence(index, r.time_us);
    Worker& w = workers_[index];
    (input ? w.bytes_in : w.bytes_out) += r.bytes;
    ++(input ? w.transfers_in : w.transfers_out);
  }
}

void RunModel::ApplyWorkerCacheUpdate(const TxnRecord& r) {
  ++cache_updates_;
  cache_update_bytes_ += r.bytes;
  const int index = WorkerIndex(r.worker);
  if (index >= 0) {
    ++workers_[index].cache_updates;
    Evidence(index, r.time_us);
  }
}

}  // namespace taskvine
}  // namespace roastcoffea
