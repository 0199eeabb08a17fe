#include "backends/taskvine/run_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace roastcoffea {
namespace taskvine {
namespace {

constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;

double Seconds(int64_t us) { return static_cast<double>(us) * 1e-6; }

// Accumulates one attempt into totals.
void AddAttempt(const Attempt& a, int64_t run_end_us, AttemptTotals* t) {
  ++t->attempts;
  if (!a.dispatched()) return;
  t->queue_wait_seconds += Seconds(a.running_us - a.ready_us);
  t->commit_seconds += a.commit_seconds;
  t->input_bytes += a.input_bytes;
  const int64_t end_us = a.end_us > 0 ? a.end_us : run_end_us;
  t->allocated_core_seconds += a.cores * Seconds(end_us - a.running_us);
  switch (a.end) {
    case AttemptEnd::kLost:
      ++t->lost;
      t->lost_seconds += Seconds(a.end_us - a.running_us);
      break;
    case AttemptEnd::kRetriedOnWorker:
      ++t->retried_on_worker;
      break;
    case AttemptEnd::kRetrieved: {
      ++t->retrieved;
      bool fallback = false;
      t->execute_seconds += a.ExecutionSeconds(&fallback);
      if (fallback) ++t->exec_fallbacks;
      if (a.worker_start_s > 0 && a.commit_end_s > 0) {
        t->worker_wait_seconds += std::max(0.0, a.worker_start_s - a.commit_end_s);
      }
      if (a.retrieved_us > 0 && a.end_us > 0)
        t->retrieval_seconds += Seconds(a.retrieved_us - a.end_us);
      t->output_seconds += a.output_seconds;
      t->output_bytes += a.output_bytes;
      if (a.monitored) {
        t->monitored = true;
        t->cpu_seconds += a.cpu_seconds;
        t->peak_memory_mb = std::max(t->peak_memory_mb, static_cast<double>(a.peak_memory_mb));
      }
      break;
    }
    case AttemptEnd::kOpen:
      break;
  }
}

bool Disagree(double a, double b, double relative, double absolute) {
  return std::fabs(a - b) > std::max(absolute, relative * std::max(std::fabs(a), std::fabs(b)));
}

}  // namespace

double Attempt::ExecutionSeconds(bool* fallback) const {
  // Worker times are epoch seconds: anything outside (0, year 2096) is not a time (0 = unset).
  if (worker_start_s > 0 && worker_end_s >= worker_start_s && worker_end_s < 4e9) {
    if (fallback != nullptr) *fallback = false;
    return worker_end_s - worker_start_s;
  }
  if (fallback != nullptr) *fallback = true;
  return end_us > running_us && running_us > 0 ? Seconds(end_us - running_us) : 0.0;
}

void RunModel::Reject(absl::string_view field, std::string what) {
  ++rejected_count_;
  if (rejected_.size() < kMaxMalformedKept) {
    rejected_.push_back(RejectedValue{line_, std::string(field), std::move(what)});
  }
}

void RunModel::Evidence(int worker, int64_t t_us) {
  if (worker < 0) return;
  Worker& w = workers_[worker];
  w.last_evidence_us = std::max(w.last_evidence_us, t_us);
}

double RunModel::RunSoFarSeconds(int64_t t_us) const {
  const int64_t start = start_us_ > 0 ? start_us_ : first_us_;
  return Seconds(std::max(t_us, last_us_) - start) + 1.0;
}

void RunModel::Malformed(absl::string_view file, int64_t line_number, absl::string_view reason) {
  ++malformed_count_;
  if (malformed_.size() < kMaxMalformedKept) {
    malformed_.push_back(MalformedLine{std::string(file), line_number, std::string(reason)});
  }
}

void RunModel::ConsumeTransactionLine(absl::string_view line, int64_t line_number) {
  TxnRecord record;
  absl::Status status = ParseTransactionLine(line, &record);
  if (!status.ok()) {
    Malformed("transactions", line_number, status.message());
    return;
  }
  if (record.kind == TxnKind::kBlankOrComment) return;
  ++records_;
  line_ = line_number;
  Apply(record);
}

void RunModel::ConsumePerformanceLine(absl::string_view line, int64_t line_number) {
  absl::string_view trimmed = line;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r'))
    trimmed.remove_suffix(1);
  if (trimmed.empty()) return;
  if (PerfHeader::IsHeader(trimmed)) {
    absl::StatusOr<PerfHeader> header = PerfHeader::Parse(trimmed);
    if (!header.ok()) {
      Malformed("performance", line_number, header.status().message());
      return;
    }
    if (perf_header_valid_ && !perf_.empty()) {
      notes_.push_back(
          absl::StrCat("the performance log holds several manager runs (new header at line ",
                       line_number, "); only the last one is used"));
      perf_.clear();
    }
    perf_header_ = *std::move(header);
    perf_header_valid_ = true;
    return;
  }
  if (trimmed.front() == '#') return;
  if (!perf_header_valid_) {
    Malformed("performance", line_number, "data row before the '# timestamp ...' header");
    return;
  }
  PerfSample sample;
  absl::Status status = perf_header_.ParseRow(trimmed, &sample);
  if (!status.ok()) {
    Malformed("performance", line_number, status.message());
    return;
  }
  perf_.push_back(sample);
}

void RunModel::ConsumePartialLastLine(absl::string_view file, absl::string_view line,
                                      int64_t line_number) {
  if (line.empty()) return;
  if (file == "performance") {
    PerfSample sample;
    if (perf_header_valid_ && perf_header_.ParseRow(line, &sample).ok()) {
      perf_.push_back(sample);
      return;
    }
  } else {
    TxnRecord record;
    if (ParseTransactionLine(line, &record).ok()) {
      if (record.kind != TxnKind::kBlankOrComment) {
        ++records_;
        line_ = line_number;
        Apply(record);
      }
      return;
    }
  }
  ++partial_last_lines_;
  notes_.push_back(absl::StrCat("the ", file, " log ends with a partial line (line ", line_number,
                                ", ", line.size(), " bytes without a newline): ignored"));
}

int RunModel::WorkerIndex(absl::string_view name) const {
  if (last_worker_ >= 0) {
    const Worker& last = workers_[last_worker_];
    if (last.id == name || last.address == name) return last_worker_;
  }
  auto it = worker_by_id_.find(name);
  if (it != worker_by_id_.end()) return last_worker_ = it->second;
  auto by_address = worker_by_address_.find(name);
  return by_address == worker_by_address_.end() ? -1 : last_worker_ = by_address->second;
}

int RunModel::CategoryIndex(absl::string_view name) {
  if (last_category_ >= 0 && categories_[last_category_] == name) return last_category_;
  auto it = category_by_name_.find(name);
  if (it != category_by_name_.end()) return last_category_ = it->second;
  const int index = static_cast<int>(categories_.size());
  categories_.emplace_back(name);
  category_by_name_.emplace(std::string(name), index);
  return last_category_ = index;
}

void RunModel::Reset() {
  RunModel fresh;
  fresh.malformed_count_ = malformed_count_;
  fresh.malformed_ = std::move(malformed_);
  fresh.notes_ = std::move(notes_);
  fresh.manager_runs_ = manager_runs_;
  fresh.records_ = records_;
  fresh.perf_header_valid_ = perf_header_valid_;
  fresh.perf_header_ = std::move(perf_header_);
  fresh.perf_ = std::move(perf_);
  fresh.rejected_count_ = rejected_count_;
  fresh.rejected_ = std::move(rejected_);
  fresh.backwards_count_ = backwards_count_;
  fresh.backwards_ = std::move(backwards_);
  *this = std::move(fresh);
}

absl::string_view RunModel::Intern(absl::string_view word) {
  auto known = interned_->find(word);
  if (known != interned_->end()) return known->first;
  return interned_->try_emplace(std::string(word), true).first->first;
}

void RunModel::WorkerStep(Worker& w, int64_t t_us, int executing_delta, int active_delta) {
  // Busy = at least one attempt executing (RUNNING .. WAITING_RETRIEVAL or loss),
  // docs/taskvine-logs.md §8: the steps of the series below with executing > 0
  // (PerWorkerInWindow sums them).
  w.executing = std::max(0, w.executing + executing_delta);
  w.active = std::max(0, w.active + active_delta);
  if (!w.series.empty() && w.series.back().us == t_us) {  // same instant: keep the last state
    w.series.back().executing = w.executing;
    w.series.back().active = w.active;
    w.series.back().last_evidence_us = w.last_evidence_us;
    return;
  }
  w.series.push_back({t_us, w.executing, w.active, w.last_evidence_us});
}

void RunModel::RemoveFromWorker(Worker& w, int64_t task_id) {
  auto it = std::find(w.on_worker.begin(), w.on_worker.end(), task_id);
  if (it != w.on_worker.end()) {
    *it = w.on_worker.back();
    w.on_worker.pop_back();
  }
}

void RunModel::RecordWorkerCount(int64_t t_us, int new_count) {
  count_us_.push_back(t_us);
  count_.push_back(connected_);
  queued_.push_back(ready_);
  connected_ = new_count;
  count_us_.push_back(t_us);
  count_.push_back(connected_);
  queued_.push_back(ready_);
}

void RunModel::SetReady(int64_t t_us, int new_ready) {
  if (new_ready == ready_) return;
  if (!count_us_.empty() && count_us_.back() == t_us) {
    queued_.back() = new_ready;  // the "after" entry of this instant: keep the last state
  } else {
    count_us_.insert(count_us_.end(), {t_us, t_us});
    count_.insert(count_.end(), {connected_, connected_});
    queued_.insert(queued_.end(), {ready_, new_ready});
  }
  ready_ = new_ready;
}

// An END earlier than records before it cannot end the run: the last record does.
int64_t RunModel::EndUs() const { return ended_ ? std::max(end_us_, last_us_) : last_us_; }

void RunModel::Apply(const TxnRecord& r) {
  if (first_us_ == 0) first_us_ = r.time_us;
  if (r.time_us < last_us_) {
    // The manager writes records in time order: a step back is a clock change or a bad line.
    ++backwards_count_;
    if (backwards_.size() < 5) {
      backwards_.push_back(absl::StrFormat("transactions line %d goes back %.6f s", line_,
                                           Seconds(last_us_ - r.time_us)));
    }
  }
  last_us_ = std::max(last_us_, r.time_us);
  switch (r.kind) {
    case TxnKind::kBlankOrComment:
    case TxnKind::kApplication:
    case TxnKind::kTaskOtherState:
      return;
    case TxnKind::kManagerStart:
      if (manager_runs_ > 0 && (!workers_.empty() || !tasks_.empty())) {
        notes_.push_back(absl::StrCat(
            "the transactions log holds several manager runs (manager pid ", manager_pid_, " then ",
            r.manager_pid, "); only the last one is measured"));
        Reset();
        first_us_ = r.time_us;
        last_us_ = r.time_us;
      }
      ++manager_runs_;
      manager_pid_ = r.manager_pid;
      start_us_ = r.time_us;
      return;
    case TxnKind::kManagerEnd:
      ended_ = true;
      end_us_ = r.time_us;
      end_line_ = line_;
      return;
    case TxnKind::kWorkerConnection: {
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
      return;
    }
    case TxnKind::kWorkerDisconnection: {
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
      return;
    }
    case TxnKind::kWorkerResources: {
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
      return;
    }
    case TxnKind::kWorkerTransfer: {
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
      return;
    }
    case TxnKind::kWorkerCacheUpdate: {
      ++cache_updates_;
      cache_update_bytes_ += r.bytes;
      const int index = WorkerIndex(r.worker);
      if (index >= 0) {
        ++workers_[index].cache_updates;
        Evidence(index, r.time_us);
      }
      return;
    }
    case TxnKind::kCategory:
      CategoryIndex(r.category);
      return;
    case TxnKind::kTaskReady: {
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
      return;
    }
    case TxnKind::kTaskRunning: {
      const int index = WorkerIndex(r.worker);
      if (index < 0) ++unknown_worker_records_;
      double cores = 0, memory = 0, disk = 0, commit_start = 0, commit_end = 0, input_s = 0,
             input_mb = 0;
      if (!r.json.empty()) {
        bool numbers_ok = true;
        absl::Status status =
            ForEachJsonEntry(r.json, [&](absl::string_view key, absl::string_view text) {
              double* target = nullptr;
              if (key == "cores")
                target = &cores;
              else if (key == "memory")
                target = &memory;
              else if (key == "disk")
                target = &disk;
              else if (key == "time_commit_start")
                target = &commit_start;
              else if (key == "time_commit_end")
                target = &commit_end;
              else if (key == "time_input_mgr")
                target = &input_s;
              else if (key == "size_input_mgr")
                target = &input_mb;
              if (target != nullptr) numbers_ok = ParseJsonNumber(text, target) && numbers_ok;
            });
        if (!numbers_ok) status = absl::InvalidArgumentError("bad number");
        if (!status.ok())
          cores = memory = disk = commit_start = commit_end = input_s = input_mb = 0;
      }
      Evidence(index, r.time_us);
      const double run_so_far = RunSoFarSeconds(r.time_us);
      if (input_s < 0 || input_s > run_so_far) {
        Reject("time_input_mgr",
               absl::StrFormat("task %d RUNNING: %.17g s, outside [0, %.3f] s (the run so far)",
                               r.task_id, input_s, run_so_far));
        input_s = 0;
      }
      if (commit_end > 0 && commit_start > 0 &&
          (commit_end < commit_start || commit_end - commit_start > run_so_far)) {
        Reject("time_commit_end - time_commit_start",
               absl::StrFormat("task %d RUNNING: %.17g s, outside [0, %.3f] s (the run so far)",
                               r.task_id, commit_end - commit_start, run_so_far));
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
      return;
    }
    case TxnKind::kTaskWaitingRetrieval: {
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
      return;
    }
    case TxnKind::kTaskRetrieved:
    case TxnKind::kTaskDone: {
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
      if (!r.json2.empty()) {
        double wq_input_mb = 0, wq_input_s = 0;
        double worker_start = 0, worker_end = 0, output_s = 0, output_mb = 0, cpu = -1, memory = 0;
        double machine_load = 0, machine_cpus = 0;
        (void)ForEachJsonEntry(r.json2, [&](absl::string_view key, absl::string_view text) {
          // Only the keys used here are parsed (a RETRIEVED payload has 15-30 of them).
          double* target = nullptr;
          if (key == "time_worker_start")
            target = &worker_start;
          else if (key == "time_worker_end")
            target = &worker_end;
          else if (key == "time_output_mgr" || key == "wq_output_time")
            target = &output_s;
          else if (key == "size_output_mgr" || key == "wq_output_size")
            target = &output_mb;
          else if (key == "wq_input_time")
            target = &wq_input_s;
          else if (key == "wq_input_size")
            target = &wq_input_mb;
          else if (key == "cpu_time")
            target = &cpu;
          else if (key == "memory")
            target = &memory;
          else if (key == "machine_load")
            target = &machine_load;
          else if (key == "machine_cpus")
            target = &machine_cpus;
          if (target != nullptr && !ParseJsonNumber(text, target)) *target = 0;
        });
        // Durations longer than the run so far and worker times outside it are impossible
        // (seen: time_output_mgr = 1.8e13 s, an unsigned underflow, after a non-zero exit).
        const double run_so_far = RunSoFarSeconds(r.time_us);
        const double run_start_s = Seconds(start_us_ > 0 ? start_us_ : first_us_);
        const double record_s = Seconds(r.time_us);
        const auto impossible_duration = [&](const char* field, double* value) {
          if (*value >= 0 && *value <= run_so_far) return;
          Reject(field,
                 absl::StrFormat("task %d %s %s: %.17g s, outside [0, %.3f] s (the run so far)",
                                 r.task_id, r.kind == TxnKind::kTaskDone ? "DONE" : "RETRIEVED",
                                 r.word, *value, run_so_far));
          *value = 0;
        };
        impossible_duration("time_output_mgr", &output_s);
        impossible_duration("wq_input_time", &wq_input_s);
        // Worker clocks may be off by a little, not by minutes.
        constexpr double kClockSkewSeconds = 300;
        if (worker_start != 0 || worker_end != 0) {
          const bool inside = worker_start > run_start_s - kClockSkewSeconds &&
                              worker_end >= worker_start &&
                              worker_end < record_s + kClockSkewSeconds;
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
            Reject("cpu_time",
                   absl::StrFormat(
                       "task %d RETRIEVED: %.17g s, more than %.0f cores x %.3f s (the run so far)",
                       r.task_id, cpu, cores_bound, run_so_far));
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
      return;
    }
    case TxnKind::kLibrary: {
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
      return;
    }
  }
}

void RunModel::MarkLogComplete() {
  if (log_complete_) return;
  log_complete_ = true;
  const int64_t end = EndUs();
  double longest_execution = 0;
  for (const auto& [id, task] : tasks_) {
    for (const Attempt& a : task.attempts) {
      if (a.end == AttemptEnd::kRetrieved)
        longest_execution = std::max(longest_execution, a.ExecutionSeconds());
    }
  }
  const double busy_limit =
      std::max(kSilentBusyMinSeconds, kSilentBusyExecutionFactor * longest_execution);
  std::vector<int64_t> deaths;  // the last evidence of each worker that died silently
  for (size_t index = 0; index < workers_.size(); ++index) {
    Worker& w = workers_[index];
    if (w.disconnect_us != 0) continue;
    // Its own step changes are evidence too (a re-queue of its attempt is a manager record).
    const int64_t last = std::max(w.last_evidence_us, w.series.empty() ? 0 : w.series.back().us);
    const double silence = Seconds(end - last);
    if (silence <= kSilentIdleSeconds && !(w.executing > 0 && silence > busy_limit)) continue;
    // Attempts still on it end with it: lost, as with a logged disconnection.
    for (int64_t task_id : w.on_worker) {
      Task* task = tasks_.find(task_id);
      if (task == nullptr || task->attempts.empty()) continue;
      Attempt& a = task->attempts.back();
      if (a.worker != static_cast<int>(index) || a.end != AttemptEnd::kOpen) continue;
      if (a.end_us == 0) a.end_us = last;
      a.end = AttemptEnd::kLost;
    }
    w.on_worker.clear();
    WorkerStep(w, last, -w.executing, -w.active);
    w.disconnect_us = last;
    w.silent_death = true;
    w.reason = Intern("SILENT");
    deaths.push_back(last);
  }
  // One fewer connected worker from each death on: a step (before, before - 1) inserted after
  // every change at or before it, and what follows lowered by one. All deaths in one merge
  // (a flood of connections that all went silent must stay linear, not one insert each).
  if (deaths.empty()) return;
  std::stable_sort(deaths.begin(), deaths.end());
  std::vector<int64_t> count_us;
  std::vector<int32_t> count, queued;
  const size_t total = count_us_.size() + 2 * deaths.size();
  count_us.reserve(total);
  count.reserve(total);
  queued.reserve(total);
  int dead = 0;
  size_t next = 0;
  const auto add_death = [&](int64_t t) {
    const int before = count.empty() ? std::max(0, connected_ - dead) : count.back();
    const int waiting = queued.empty() ? ready_ : queued.back();
    count_us.insert(count_us.end(), {t, t});
    count.insert(count.end(), {before, std::max(0, before - 1)});
    queued.insert(queued.end(), {waiting, waiting});
    ++dead;
  };
  for (size_t k = 0; k < count_us_.size(); ++k) {
    while (next < deaths.size() && deaths[next] < count_us_[k]) add_death(deaths[next++]);
    count_us.push_back(count_us_[k]);
    count.push_back(std::max(0, count_[k] - dead));
    queued.push_back(queued_[k]);
  }
  while (next < deaths.size()) add_death(deaths[next++]);
  count_us_ = std::move(count_us);
  count_ = std::move(count);
  queued_ = std::move(queued);
  connected_ = std::max(0, connected_ - dead);
}

RunFigures RunModel::Figures() const {
  RunFigures f;
  f.start_us = start_us_ > 0 ? start_us_ : first_us_;
  f.end_us = EndUs();
  f.ended = ended_;
  f.workers_joined = static_cast<int>(workers_.size());
  for (const Worker& w : workers_) {
    const int64_t until = w.disconnect_us > 0 ? w.disconnect_us : f.end_us;
    const double lifetime = Seconds(std::max<int64_t>(0, until - w.connect_us));
    f.worker_seconds += lifetime;
    f.core_seconds_available += w.cores * lifetime;
    if (w.library_started_us > 0) {
      const int64_t library_end = w.library_end_us > 0 ? w.library_end_us : until;
      f.function_slot_seconds += w.library_cores * Seconds(library_end - w.library_started_us);
    }
  }
  f.libraries = static_cast<int>(libraries_.size());
  for (const auto& [id, task] : tasks_) {
    ++f.tasks;
    if (task.done) ++f.tasks_done;
    if (task.Failed()) ++f.tasks_failed;
    for (const Attempt& a : task.attempts) {
      if (!a.dispatched()) continue;
      ++f.attempts;
      const int64_t end_us = a.end_us > 0 ? a.end_us : f.end_us;
      f.allocated_core_seconds += a.cores * Seconds(end_us - a.running_us);
      if (a.end == AttemptEnd::kLost) f.lost_seconds += Seconds(a.end_us - a.running_us);
      if (a.end == AttemptEnd::kRetrieved) {
        const double exec = a.ExecutionSeconds();
        f.execute_seconds += exec;
        f.weighted_execute_seconds += exec * (a.cores > 0 ? a.cores : 1.0);
      }
    }
  }
  f.transfers_in = transfers_in_;
  f.transfers_out = transfers_out_;
  f.cache_updates = cache_updates_;
  f.bytes_in = bytes_in_;
  f.bytes_out = bytes_out_;
  f.cache_update_bytes = cache_update_bytes_;
  return f;
}

namespace {
// Utilisation and busy fraction of each worker from its (whole-run or windowed) figures.
void SetFractions(std::vector<WorkerFigures>& figures) {
  for (WorkerFigures& f : figures) {
    f.utilisation_fraction = f.core_seconds_available > 0
                                 ? f.totals.allocated_core_seconds / f.core_seconds_available
                                 : 0;
    f.busy_fraction = f.lifetime_seconds > 0 ? f.busy_seconds / f.lifetime_seconds : 0;
  }
}
}  // namespace

std::vector<WorkerFigures> RunModel::PerWorker(bool skip_idle) const {
  return PerWorkerInWindow(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                           skip_idle);
}

std::vector<WorkerFigures> RunModel::PerWorkerInWindow(int64_t from_us, int64_t to_us,
                                                       bool skip_idle) const {
  const int64_t end = EndUs();
  const auto overlap_us = [&](int64_t a, int64_t b) {
    return std::max<int64_t>(0, std::min(b, to_us) - std::max(a, from_us));
  };
  // Index into `out` of each worker's figures; -1 for the idle ones skipped.
  std::vector<int32_t> slot(workers_.size(), -1);
  int32_t kept = 0;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!skip_idle || !workers_[i].Idle()) slot[i] = kept++;
  }
  std::vector<WorkerFigures> out(kept);
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (slot[i] < 0) continue;
    const Worker& w = workers_[i];
    WorkerFigures& f = out[slot[i]];
    f.worker = w.id;
    const int64_t until = w.disconnect_us > 0 ? w.disconnect_us : end;
    f.lifetime_seconds = Seconds(overlap_us(w.connect_us, until));
    // Busy: the steps of the executing series with something executing, clipped.
    int64_t busy_us = 0;
    for (size_t k = 0; k < w.series.size(); ++k) {
      if (w.series[k].executing <= 0) continue;
      const int64_t step_end = k + 1 < w.series.size() ? w.series[k + 1].us : until;
      busy_us += overlap_us(w.series[k].us, step_end);
    }
    f.busy_seconds = Seconds(busy_us);
    f.core_seconds_available = w.cores * f.lifetime_seconds;
  }
  std::vector<double> allocated(out.size(), 0.0);
  for (const auto& [id, task] : tasks_) {
    for (const Attempt& a : task.attempts) {
      if (a.worker < 0 || !a.dispatched() || slot[a.worker] < 0) continue;
      const int32_t k = slot[a.worker];
      const int64_t attempt_end = a.end_us > 0 ? a.end_us : end;
      allocated[k] += a.cores * Seconds(overlap_us(a.running_us, attempt_end));
      // Attempts that end in the window, as TotalsInWindow counts them.
      const int64_t at = a.end_us > 0 ? a.end_us : a.running_us;
      if (at >= from_us && at <= to_us) AddAttempt(a, end, &out[k].totals);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].totals.allocated_core_seconds = allocated[i];
  SetFractions(out);
  return out;
}

std::map<std::string, AttemptTotals> RunModel::PerCategory() const {
  std::map<std::string, AttemptTotals> out;
  const int64_t end = EndUs();
  for (const auto& [id, task] : tasks_) {
    AttemptTotals& totals = out[categories_[task.category]];
    for (const Attempt& a : task.attempts) AddAttempt(a, end, &totals);
  }
  return out;
}

AttemptTotals RunModel::TotalsInWindow(int64_t from_us, int64_t to_us, absl::string_view category,
                                       int worker) const {
  AttemptTotals totals;
  const int64_t end = EndUs();
  for (const auto& [id, task] : tasks_) {
    if (!category.empty() && categories_[task.category] != category) continue;
    for (const Attempt& a : task.attempts) {
      if (!a.dispatched()) continue;
      if (worker >= 0 && a.worker != worker) continue;
      const int64_t at = a.end_us > 0 ? a.end_us : a.running_us;
      if (at < from_us || at > to_us) continue;
      AddAttempt(a, end, &totals);
    }
  }
  return totals;
}

v1::TrackingData RunModel::Tracking() const {
  v1::TrackingData tracking;
  tracking.set_backend("taskvine");
  const int64_t start = start_us_ > 0 ? start_us_ : first_us_;
  const int64_t end = EndUs();
  if (start == 0) return tracking;
  auto add_count = [&](int64_t us, int count, int queued) {
    tracking.add_worker_count_time_unix_ns(us * 1000);
    tracking.add_worker_count(count);
    tracking.add_queued_chunks(queued);
  };
  // Log records are exact change points: every series here is a step function, with the
  // state before and after each change stored at its instant, in that order.
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  const int counts = static_cast<int>(count_us_.size()) + 2;  // START, the changes, the end
  tracking.mutable_worker_count_time_unix_ns()->Reserve(counts);
  tracking.mutable_worker_count()->Reserve(counts);
  tracking.mutable_queued_chunks()->Reserve(counts);
  // The state at START, unless a change came before it (it would then hold after them).
  if (count_us_.empty() || count_us_.front() >= start) {
    add_count(start, count_.empty() ? connected_ : count_.front(),
              queued_.empty() ? ready_ : queued_.front());
  }
  for (size_t i = 0; i < count_us_.size(); ++i) add_count(count_us_[i], count_[i], queued_[i]);
  add_count(std::max(end, start), connected_, ready_);
  for (const Worker& w : workers_) {
    v1::WorkerSeries* series = tracking.add_workers();
    series->set_worker(w.id);
    series->set_host(w.address.substr(0, w.address.rfind(':')));
    series->set_kind(v1::SERIES_KIND_STEP);
    // Exactly the points below (a pair per change after the first, then the end): no growth
    // slack in six columns of a worker that ran many tasks.
    const int points = 2 * static_cast<int>(w.series.size());
    series->mutable_time_unix_ns()->Reserve(points);
    series->mutable_cores()->Reserve(points);
    series->mutable_memory_limit_bytes()->Reserve(points);
    series->mutable_disk_limit_bytes()->Reserve(points);
    series->mutable_executing_tasks()->Reserve(points);
    series->mutable_active_tasks()->Reserve(points);
    auto add_point = [&](int64_t us, int executing, int active) {
      series->add_time_unix_ns(us * 1000);
      series->add_cores(w.cores);
      series->add_memory_limit_bytes(w.memory_mb * kBytesPerMebibyte);
      series->add_disk_limit_bytes(w.disk_mb * kBytesPerMebibyte);
      series->add_executing_tasks(executing);
      series->add_active_tasks(active);
    };
    series->mutable_last_seen_unix_seconds()->Reserve(points);
    const auto last_seen = [&](int64_t evidence_us) {
      series->add_last_seen_unix_seconds(std::max(evidence_us, w.connect_us) * 1e-6);
    };
    for (size_t i = 0; i < w.series.size(); ++i) {
      // A step: the previous state up to this instant, then the new one.
      if (i > 0) {
        add_point(w.series[i].us, w.series[i - 1].executing, w.series[i - 1].active);
        last_seen(w.series[i].last_evidence_us);
      }
      add_point(w.series[i].us, w.series[i].executing, w.series[i].active);
      last_seen(w.series[i].last_evidence_us);
    }
    const int64_t until = w.disconnect_us > 0 ? w.disconnect_us : std::max(end, w.connect_us);
    add_point(until, w.executing, w.active);
    last_seen(std::min(w.last_evidence_us, until));
  }
  if (!perf_.empty()) {
    v1::ManagerSeries* manager = tracking.mutable_manager();
    // Rows written every few seconds: samples of the manager's state, not its changes.
    manager->set_kind(v1::SERIES_KIND_SAMPLED);
    for (const PerfSample& s : perf_) {
      auto value = [](double v) { return std::isnan(v) ? 0.0 : v; };
      manager->add_time_unix_ns(s.time_us * 1000);
      manager->add_workers_connected(value(s.workers_connected));
      manager->add_tasks_waiting(value(s.tasks_waiting));
      manager->add_tasks_running(value(s.tasks_running));
      manager->add_tasks_with_results(value(s.tasks_with_results));
      manager->add_bytes_sent(value(s.bytes_sent));
      manager->add_bytes_received(value(s.bytes_received));
    }
  }
  return tracking;
}

std::vector<v1::ChunkRecord> RunModel::ChunkRecords(absl::string_view category) const {
  std::vector<const Task*> chosen;
  for (const auto& [id, task] : tasks_) {
    if (task.done && categories_[task.category] == category) chosen.push_back(&task);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Task* a, const Task* b) { return a->id < b->id; });
  std::vector<v1::ChunkRecord> records;
  records.reserve(chosen.size());
  for (const Task* task : chosen) {
    // The attempt that decided the outcome: the last dispatched one.
    const Attempt* final_attempt = nullptr;
    int lost = 0;
    for (const Attempt& a : task->attempts) {
      if (a.dispatched()) final_attempt = &a;
      if (a.end == AttemptEnd::kLost) ++lost;
    }
    v1::ChunkRecord record;
    record.set_uuid(absl::StrCat("taskvine-task-", task->id));
    if (!task->attempts.empty() && task->attempts.front().ready_us > 0) {
      record.set_ready_unix_ns(task->attempts.front().ready_us * 1000);
    }
    record.set_task_id(absl::StrCat(task->id));
    record.set_attempt(task->attempts.empty() ? 0
                                              : static_cast<uint32_t>(task->attempts.size() - 1));
    if (final_attempt != nullptr) {
      if (final_attempt->worker >= 0) record.set_worker(workers_[final_attempt->worker].id);
      bool fallback = false;
      const double exec = final_attempt->ExecutionSeconds(&fallback);
      int64_t start_ns, end_ns;
      if (!fallback) {
        start_ns = static_cast<int64_t>(std::llround(final_attempt->worker_start_s * 1e6)) * 1000;
        end_ns = static_cast<int64_t>(std::llround(final_attempt->worker_end_s * 1e6)) * 1000;
      } else {
        start_ns = final_attempt->running_us * 1000;
        end_ns =
            (final_attempt->end_us > 0 ? final_attempt->end_us : final_attempt->running_us) * 1000;
      }
      record.set_start_unix_ns(start_ns);
      record.set_end_unix_ns(end_ns);
      record.set_duration_seconds(exec);
      if (final_attempt->monitored) {
        record.set_cpu_seconds(final_attempt->cpu_seconds);
        record.set_memory_peak_bytes(
            static_cast<int64_t>(final_attempt->peak_memory_mb * kBytesPerMebibyte));
      }
      if (final_attempt->machine_cpus > 0) {
        record.set_machine_load(final_attempt->machine_load);
        record.set_machine_cpus(final_attempt->machine_cpus);
      }
    }
    const bool failed = task->Failed();
    record.set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    std::string error;
    if (failed) {
      error = absl::StrCat("TaskVine task ", task->id, " ended with result ", task->result,
                           ", exit code ", task->exit_code);
    }
    if (lost > 0) {
      absl::StrAppend(&error, error.empty() ? "" : "; ", lost, " earlier attempt",
                      lost > 1 ? "s" : "", " lost with a disconnected worker");
    }
    record.set_error_text(error);
    records.push_back(std::move(record));
  }
  AssignSlots(records);
  return records;
}

void AssignSlots(std::vector<v1::ChunkRecord>& records) {
  std::map<std::string, std::vector<v1::ChunkRecord*>> by_worker;
  for (v1::ChunkRecord& record : records) {
    if (!record.worker().empty()) by_worker[record.worker()].push_back(&record);
  }
  for (auto& [worker, chunks] : by_worker) {
    std::sort(chunks.begin(), chunks.end(), [](const v1::ChunkRecord* a, const v1::ChunkRecord* b) {
      return std::make_pair(a->start_unix_ns(), a->end_unix_ns()) <
             std::make_pair(b->start_unix_ns(), b->end_unix_ns());
    });
    std::vector<int64_t> slot_free_at;  // end of the last chunk in each slot
    for (v1::ChunkRecord* chunk : chunks) {
      size_t slot = 0;
      while (slot < slot_free_at.size() && slot_free_at[slot] > chunk->start_unix_ns()) ++slot;
      if (slot == slot_free_at.size()) slot_free_at.push_back(0);
      slot_free_at[slot] = chunk->end_unix_ns();
      chunk->set_thread_index(static_cast<int64_t>(slot));
    }
  }
}

std::vector<std::string> RunModel::Warnings() const {
  std::vector<std::string> out;
  for (CodedNote& note : CodedWarnings()) out.push_back(std::move(note.message));
  return out;
}

std::vector<CodedNote> RunModel::CodedWarnings() const {
  std::vector<CodedNote> coded;
  // Collects the plain sentences below under one code at a time.
  std::vector<std::string> warnings;
  const auto flush = [&](const char* code) {
    for (std::string& w : warnings) coded.push_back(CodedNote{code, std::move(w)});
    warnings.clear();
  };
  if (rejected_count_ > 0) {
    std::string text =
        absl::StrCat(rejected_count_, " impossible value", rejected_count_ > 1 ? "s" : "",
                     " rejected (kept out of every figure):");
    for (size_t i = 0; i < rejected_.size() && i < 5; ++i) {
      absl::StrAppend(&text, i ? ";" : "", " transactions line ", rejected_[i].line_number,
                      " field ", rejected_[i].field, ": ", rejected_[i].what);
    }
    if (rejected_count_ > 5) absl::StrAppend(&text, "; ...");
    coded.push_back(CodedNote{"taskvine_impossible_value", std::move(text)});
  }
  if (ended_ && end_us_ < last_us_) {
    coded.push_back(CodedNote{
        "taskvine_early_end",
        absl::StrFormat(
            "transactions line %d field MANAGER END time: %d is %.6f s before the latest record; "
            "impossible, so the run ends at its latest record",
            end_line_, end_us_, Seconds(last_us_ - end_us_))});
  }
  if (backwards_count_ > 0) {
    coded.push_back(CodedNote{
        "taskvine_time_backwards",
        absl::StrCat(backwards_count_, " record", backwards_count_ > 1 ? "s" : "",
                     " earlier than a record before them (times should never go back): ",
                     absl::StrJoin(backwards_, "; "), backwards_count_ > 5 ? "; ..." : "")});
  }
  // Named one by one up to kMaxSilentDeathsNamed; the rest in one note (a flood of idle
  // connections that all went silent would otherwise give one warning per worker).
  int64_t silent = 0, silent_unnamed = 0;
  double least_silence = 0, most_silence = 0;
  for (const Worker& w : workers_) {
    if (!w.silent_death) continue;
    if (++silent > kMaxSilentDeathsNamed) {
      const double silence = Seconds(EndUs() - w.disconnect_us);
      least_silence = silent_unnamed == 0 ? silence : std::min(least_silence, silence);
      most_silence = silent_unnamed == 0 ? silence : std::max(most_silence, silence);
      ++silent_unnamed;
      continue;
    }
    coded.push_back(CodedNote{
        "taskvine_worker_silent_death",
        absl::StrFormat(
            "worker %s (%s) has no DISCONNECTION record and nothing from it for the last "
            "%.1f s of the run: it died silently; its lifetime, busy time and open attempts "
            "(lost) end at its last record, %.3f s after START",
            w.id, w.address, Seconds(EndUs() - w.disconnect_us),
            Seconds(w.disconnect_us - (start_us_ > 0 ? start_us_ : first_us_)))});
  }
  if (silent_unnamed > 0) {
    coded.push_back(CodedNote{
        "taskvine_worker_silent_death",
        absl::StrFormat("%d more workers (%d in all; the first %d are named in their own "
                        "warnings) have no DISCONNECTION record and nothing from them for the "
                        "last %.1f to %.1f s of the run: they died silently; their lifetimes, "
                        "busy time and open attempts (lost) end at their last records",
                        silent_unnamed, silent, kMaxSilentDeathsNamed, least_silence,
                        most_silence)});
  }
  // Named one by one up to kMaxSilentDeathsNamed, the rest counted in one note.
  int64_t silent_before = 0;
  double longest_silence = 0;
  for (const Worker& w : workers_) {
    if (w.silent_since_us == 0) continue;
    const double silence = Seconds(w.disconnect_us - w.silent_since_us);
    longest_silence = std::max(longest_silence, silence);
    if (++silent_before > kMaxSilentDeathsNamed) continue;
    coded.push_back(CodedNote{
        "taskvine_worker_silent_before_disconnect",
        absl::StrFormat(
            "worker %s (%s) was silent since %.3f s after START (its last record) and was "
            "disconnected with %s %.1f s later: it may have died up to then (killed without its "
            "process group, its children holding the connection), yet counts as connected%s "
            "until the disconnection",
            w.id, w.address, Seconds(w.silent_since_us - (start_us_ > 0 ? start_us_ : first_us_)),
            w.reason, silence,
            w.executing_when_disconnected > 0
                ? absl::StrFormat(" and busy (%d attempt%s on it, lost)",
                                  w.executing_when_disconnected,
                                  w.executing_when_disconnected > 1 ? "s" : "")
                : "")});
  }
  if (silent_before > kMaxSilentDeathsNamed) {
    coded.push_back(CodedNote{
        "taskvine_worker_silent_before_disconnect",
        absl::StrFormat("%d more workers (%d in all) were disconnected after a silence of up to "
                        "%.1f s: each counts as connected until its disconnection",
                        silent_before - kMaxSilentDeathsNamed, silent_before, longest_silence)});
  }
  if (malformed_count_ > 0) {
    std::string text = absl::StrCat(malformed_count_, " malformed log line",
                                    malformed_count_ > 1 ? "s" : "", " skipped:");
    for (size_t i = 0; i < malformed_.size() && i < 5; ++i) {
      absl::StrAppend(&text, i ? ";" : "", " ", malformed_[i].file, " line ",
                      malformed_[i].line_number, ": ", malformed_[i].reason);
    }
    if (malformed_count_ > 5) absl::StrAppend(&text, "; ...");
    warnings.push_back(std::move(text));
  }
  flush("taskvine_malformed_line");
  for (const std::string& note : notes_) warnings.push_back(note);
  if (unknown_worker_records_ > 0) {
    warnings.push_back(
        absl::StrCat(unknown_worker_records_,
                     " records name a worker that never connected in this log (ignored)"));
  }
  if (start_us_ == 0 && records_ > 0) {
    warnings.push_back(
        "the transactions log has no MANAGER START record; the run starts at its first record");
  }
  flush("taskvine_log");
  if (!ended_ && records_ > 0) {
    warnings.push_back(
        "the transactions log has no MANAGER END record (run still going, or the manager "
        "crashed); the run ends at its last record, and the performance log (written "
        "periodically, so behind the transactions log) is not cross-checked against it");
  }
  flush("taskvine_no_end");
  const RunFigures figures = Figures();
  int64_t fallbacks = 0, retrieved = 0, exhausted = 0, dispatched = 0;
  double exec_with_exhausted = figures.execute_seconds;
  for (const auto& [id, task] : tasks_) {
    for (const Attempt& a : task.attempts) {
      if (a.dispatched()) ++dispatched;
      if (a.end == AttemptEnd::kRetrieved) {
        ++retrieved;
        bool fallback = false;
        a.ExecutionSeconds(&fallback);
        if (fallback) ++fallbacks;
      }
      if (a.end == AttemptEnd::kRetriedOnWorker) {
        ++exhausted;
        exec_with_exhausted += a.ExecutionSeconds();
      }
      // Finished, then lost with its worker before retrieval: time_execute counts it.
      if (a.end == AttemptEnd::kLost && a.finished_on_worker)
        exec_with_exhausted += a.ExecutionSeconds();
    }
  }
  if (fallbacks > 0) {
    warnings.push_back(absl::StrCat(
        fallbacks,
        " retrieved attempts have no worker start/end times; their "
        "execution time is WAITING_RETRIEVAL - RUNNING (includes waiting at the worker)"));
  }
  flush("taskvine_log");
  // Without MANAGER END the performance log's last row lags the transactions log (a live run
  // or a crash): a disagreement would say nothing.
  if (perf_.empty() || !ended_) return coded;
  // Cross-checks of the two logs (docs/taskvine-logs.md §8), against the last performance row.
  const PerfSample& last = perf_.back();
  auto check = [&](double perf_value, double txn_value, const char* what, const char* perf_column,
                   double relative, double absolute) {
    if (std::isnan(perf_value)) return;
    if (Disagree(perf_value, txn_value, relative, absolute)) {
      warnings.push_back(
          absl::StrFormat("cross-check: %s from the transactions log is %.17g but the performance "
                          "log's %s is %.17g",
                          what, txn_value, perf_column, perf_value));
    }
  };
  const double wq_tolerance = work_queue_format_ ? 1e-3 : 0;  // WQ logs sizes as rounded MB
  // Versions without TRANSFER records (Work Queue 2021) or without worker times cannot be compared.
  if (transfers_in_ + transfers_out_ > 0) {
    check(last.bytes_sent, bytes_in_, "the sum of TRANSFER INPUT bytes", "bytes_sent", wq_tolerance,
          0.5);
    check(last.bytes_received, bytes_out_, "the sum of TRANSFER OUTPUT bytes", "bytes_received",
          wq_tolerance, 0.5);
  }
  if (fallbacks == 0) {
    check(last.time_execute_us * 1e-6, exec_with_exhausted, "the summed execution time (s)",
          "time_execute (s)", 1e-3, 1e-3);
  }
  check(last.workers_joined, static_cast<double>(workers_.size()),
        "the number of identified worker connections", "workers_joined", 0, 0.5);
  check(last.tasks_dispatched,
        static_cast<double>(dispatched + static_cast<int64_t>(libraries_.size())),
        "the number of dispatched attempts (library instances included)", "tasks_dispatched", 0,
        0.5);
  check(last.tasks_done, static_cast<double>(retrieved + exhausted + library_waiting_retrievals_),
        "the number of retrieved attempts (library instances that reported back included)",
        "tasks_done", 0, 0.5);
  flush("taskvine_cross_check");
  return coded;
}

}  // namespace taskvine
}  // namespace roastcoffea
