#include "backends/taskvine/run_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/taskvine/run_model_internal.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using internal::kBytesPerMebibyte;
using internal::Seconds;

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

std::string internal::RejectedSecondsText(double seconds) {
  constexpr long double kTwoTo63 = 9223372036854775808.0L, kTwoTo64 = 18446744073709551616.0L;
  const long double us = static_cast<long double>(seconds) * 1e6L;
  // Up to 2^64 plus the rounding of the log's decimal seconds (10 ms).
  if (!(us >= kTwoTo63 && us < kTwoTo64 + 1e4L)) return absl::StrFormat("%.17g s", seconds);
  const uint64_t stored_us = static_cast<uint64_t>(std::min(std::round(us), kTwoTo64 - 1));
  const double negative_seconds = static_cast<double>((us - kTwoTo64) * 1e-6L);
  return absl::StrFormat(
      "%.16g s as logged, a negative duration stored as an unsigned 64-bit number: %d us "
      "(= %.3f s)",
      seconds, stored_us, negative_seconds);
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
  absl::Status status = ParseTransactionLine(line, &parsed_);
  if (!status.ok()) {
    Malformed("transactions", line_number, status.message());
    return;
  }
  if (parsed_.kind == TxnKind::kBlankOrComment) return;
  ++records_;
  line_ = line_number;
  Apply(parsed_);
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
  fresh.parsed_ = parsed_;  // the MANAGER START being applied, which called Reset
  *this = std::move(fresh);
}

absl::string_view RunModel::Intern(absl::string_view word) {
  // "SUCCESS" on nearly every task. (An empty word is looked up: its interned view is not null.)
  if (!last_interned_.empty() && word == last_interned_) return last_interned_;
  auto known = interned_->find(word);
  if (known == interned_->end()) known = interned_->try_emplace(std::string(word), true).first;
  return last_interned_ = known->first;
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
  } else {
    w.series.push_back({t_us, w.executing, w.active});
  }
  // The last record up to this step, kept apart when it is not the step's own instant.
  const int32_t step = static_cast<int32_t>(w.series.size() - 1);
  const bool apart = w.last_evidence_us != t_us;
  if (!w.step_evidence.empty() && w.step_evidence.back().step == step) {
    if (apart) {
      w.step_evidence.back().us = w.last_evidence_us;
    } else {
      w.step_evidence.pop_back();
    }
  } else if (apart) {
    w.step_evidence.push_back({step, w.last_evidence_us});
  }
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
      return ApplyManagerStart(r);
    case TxnKind::kManagerEnd:
      return ApplyManagerEnd(r);
    case TxnKind::kWorkerConnection:
      return ApplyWorkerConnection(r);
    case TxnKind::kWorkerDisconnection:
      return ApplyWorkerDisconnection(r);
    case TxnKind::kWorkerResources:
      return ApplyWorkerResources(r);
    case TxnKind::kWorkerTransfer:
      return ApplyWorkerTransfer(r);
    case TxnKind::kWorkerCacheUpdate:
      return ApplyWorkerCacheUpdate(r);
    case TxnKind::kCategory:
      return ApplyCategory(r);
    case TxnKind::kTaskReady:
      return ApplyTaskReady(r);
    case TxnKind::kTaskRunning:
      return ApplyTaskRunning(r);
    case TxnKind::kTaskWaitingRetrieval:
      return ApplyTaskWaitingRetrieval(r);
    case TxnKind::kTaskRetrieved:
    case TxnKind::kTaskDone:
      return ApplyTaskRetrievedOrDone(r);
    case TxnKind::kLibrary:
      return ApplyLibrary(r);
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

namespace {

// `n` new elements at the end of `field` (allocated exactly, no growth slack), for the caller
// to write.
template <typename T>
T* Grow(google::protobuf::RepeatedField<T>* field, int n) {
  field->Reserve(field->size() + n);
  return field->AddNAlreadyReserved(n);
}

// A worker's series from CONNECTION to DISCONNECTION (or `end`): SERIES_KIND_STEP, see Tracking().
// Only its points [from, to) when given (TrackingSince); the series is added only if it has any.
// With `limits_once` its cores and limits, one value for the whole series, are stored once
// (schema/worker_series_columns.h); a piece for a checkpoint repeats them at each point, as the
// joining of pieces (store/tracking_segments.h) appends columns point by point.
void AddWorkerSeries(const Worker& w, int64_t end, v1::TrackingData* tracking, bool limits_once,
                     int from = 0, int to = std::numeric_limits<int>::max()) {
  // Exactly the points below (one per change, then the end): no growth slack in seven columns
  // of a worker that ran many tasks.
  const int steps = static_cast<int>(w.series.size());
  if (steps == 0) return;  // its steps were released (ReleaseSteps, TakeTracking)
  to = std::min(to, steps + 1);
  if (from >= to) return;
  const int points = to - from;
  v1::WorkerSeries* series = tracking->add_workers();
  series->set_worker(w.id);
  series->set_host(w.address.substr(0, w.address.rfind(':')));
  series->set_kind(v1::SERIES_KIND_STEP);
  // Written in place into columns sized once: per-element Add() kept a capacity check and a
  // call per value, which cost ~0.4 s on 6 x 10^6 points (#25).
  auto* time_ns = Grow(series->mutable_time_unix_ns(), points);
  auto* executing_tasks = Grow(series->mutable_executing_tasks(), points);
  auto* active_tasks = Grow(series->mutable_active_tasks(), points);
  auto* last_seen = Grow(series->mutable_last_seen_unix_seconds(), points);
  // A worker's limits are one value for its whole series: 24 B a point when repeated.
  const int limit_points = limits_once ? 1 : points;
  std::fill_n(Grow(series->mutable_cores(), limit_points), limit_points, w.cores);
  std::fill_n(Grow(series->mutable_memory_limit_bytes(), limit_points), limit_points,
              w.memory_mb * kBytesPerMebibyte);
  std::fill_n(Grow(series->mutable_disk_limit_bytes(), limit_points), limit_points,
              w.disk_mb * kBytesPerMebibyte);
  // Point i is step i's state from its instant on (a step series needs no point repeating the
  // state before a change: that state holds up to the change's instant anyway); point `steps`
  // ends the series. The steps' last records kept apart are read in step order alongside.
  const int last_step = std::min(to, steps);
  auto apart =
      std::lower_bound(w.step_evidence.begin(), w.step_evidence.end(), from,
                       [](const Worker::EvidenceAt& e, int step) { return e.step < step; });
  for (int i = from; i < last_step; ++i) {
    const Worker::Step& step = w.series[static_cast<size_t>(i)];
    int64_t evidence_us = step.us;
    if (apart != w.step_evidence.end() && apart->step == i) evidence_us = (apart++)->us;
    const int k = i - from;
    time_ns[k] = step.us * 1000;
    executing_tasks[k] = step.executing;
    active_tasks[k] = step.active;
    last_seen[k] = std::max(evidence_us, w.connect_us) * 1e-6;
  }
  if (to == steps + 1) {
    const int64_t until = w.disconnect_us > 0 ? w.disconnect_us : std::max(end, w.connect_us);
    const int k = steps - from;
    time_ns[k] = until * 1000;
    executing_tasks[k] = w.executing;
    active_tasks[k] = w.active;
    last_seen[k] = std::max(std::min(w.last_evidence_us, until), w.connect_us) * 1e-6;
  }
}

// The performance log's rows.
void AddManagerSeries(const std::vector<PerfSample>& perf, v1::TrackingData* tracking) {
  v1::ManagerSeries* manager = tracking->mutable_manager();
  // Rows written every few seconds: samples of the manager's state, not its changes.
  manager->set_kind(v1::SERIES_KIND_SAMPLED);
  for (const PerfSample& s : perf) {
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

}  // namespace

v1::TrackingData RunModel::Tracking() const { return TrackingPoints(nullptr); }

v1::TrackingData RunModel::TrackingSince(TrackingCursor* cursor) const {
  return TrackingPoints(cursor);
}

v1::TrackingData RunModel::TakeTracking() {
  v1::TrackingData tracking = TrackingPoints(nullptr, &workers_);
  std::vector<int64_t>().swap(count_us_);
  std::vector<int32_t>().swap(count_);
  std::vector<int32_t>().swap(queued_);
  return tracking;
}

void RunModel::ReleaseSteps() {
  for (Worker& w : workers_) {
    std::vector<Worker::Step>().swap(w.series);
    std::vector<Worker::EvidenceAt>().swap(w.step_evidence);
  }
}

void RunModel::ReleaseTasks() {
  tasks_ = TaskTable<Task>();  // the blocks and the sparse map are freed
  for (Worker& w : workers_) std::vector<int64_t>().swap(w.on_worker);
}

v1::TrackingData RunModel::TrackingPoints(TrackingCursor* cursor,
                                          std::vector<Worker>* take_steps_from) const {
  v1::TrackingData tracking;
  tracking.set_backend("taskvine");
  const int64_t start = start_us_ > 0 ? start_us_ : first_us_;
  const int64_t end = EndUs();
  if (start == 0) return tracking;
  // With a cursor: only the points after those it counts, and not the last point of the count
  // or of a connected worker (it stands at the log's last record and moves with it).
  const int count_from = cursor != nullptr ? cursor->count_points : 0;
  int count_index = 0;
  auto add_count = [&](int64_t us, int count, int queued) {
    if (count_index++ < count_from) return;
    tracking.add_worker_count_time_unix_ns(us * 1000);
    tracking.add_worker_count(count);
    tracking.add_queued_chunks(queued);
  };
  // Log records are exact change points: every series here is a step function. The count
  // stores the state before and after each change at its instant, in that order; a worker
  // series one point per change (see AddWorkerSeries).
  tracking.set_worker_count_kind(v1::SERIES_KIND_STEP);
  const int counts = static_cast<int>(count_us_.size()) + 2;  // START, the changes, the end
  tracking.mutable_worker_count_time_unix_ns()->Reserve(std::max(0, counts - count_from));
  tracking.mutable_worker_count()->Reserve(std::max(0, counts - count_from));
  tracking.mutable_queued_chunks()->Reserve(std::max(0, counts - count_from));
  // The state at START, unless a change came before it (it would then hold after them).
  if (count_us_.empty() || count_us_.front() >= start) {
    add_count(start, count_.empty() ? connected_ : count_.front(),
              queued_.empty() ? ready_ : queued_.front());
  }
  for (size_t i = 0; i < count_us_.size(); ++i) add_count(count_us_[i], count_[i], queued_[i]);
  if (cursor == nullptr) {
    add_count(std::max(end, start), connected_, ready_);
  } else {
    cursor->count_points = std::max(count_from, count_index);
  }
  if (cursor != nullptr && cursor->worker_points.size() < workers_.size()) {
    cursor->worker_points.resize(workers_.size(), 0);
  }
  for (size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    if (cursor == nullptr) {
      AddWorkerSeries(w, end, &tracking, /*limits_once=*/true);
      if (take_steps_from != nullptr) {
        std::vector<Worker::Step>().swap((*take_steps_from)[i].series);
        std::vector<Worker::EvidenceAt>().swap((*take_steps_from)[i].step_evidence);
      }
      continue;
    }
    const int all_points = static_cast<int>(w.series.size()) + 1;  // the steps and the end
    const int final_points = w.disconnect_us > 0 ? all_points : all_points - 1;
    int& from = cursor->worker_points[i];
    if (final_points <= from) continue;
    AddWorkerSeries(w, end, &tracking, /*limits_once=*/false, from, final_points);
    from = final_points;
  }
  if (!perf_.empty() && cursor == nullptr) AddManagerSeries(perf_, &tracking);
  return tracking;
}

}  // namespace taskvine
}  // namespace roastcoffea
