// RunModel: the warnings (docs/taskvine-logs.md §8), one function per warning, each with its
// stable code, in the order CodedWarnings() reports them.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/run_model_internal.h"

namespace roastcoffea {
namespace taskvine {

using internal::Seconds;

namespace {

bool Disagree(double a, double b, double relative, double absolute) {
  return std::fabs(a - b) > std::max(absolute, relative * std::max(std::fabs(a), std::fabs(b)));
}

void Add(std::vector<CodedNote>* coded, const char* code, std::string message) {
  coded->push_back(CodedNote{code, std::move(message)});
}

}  // namespace

// What the execution-time warning and the cross-checks count over all attempts.
struct RunModel::AttemptCensus {
  int64_t fallbacks = 0, retrieved = 0, exhausted = 0, dispatched = 0;
  double exec_with_exhausted = 0;  // as the performance log's time_execute counts it
};

std::vector<std::string> RunModel::Warnings() const {
  std::vector<std::string> out;
  for (CodedNote& note : CodedWarnings()) out.push_back(std::move(note.message));
  return out;
}

std::vector<CodedNote> RunModel::CodedWarnings() const {
  std::vector<CodedNote> coded;
  ImpossibleValueWarning(&coded);
  EarlyEndWarning(&coded);
  TimeBackwardsWarning(&coded);
  SilentDeathWarnings(&coded);
  SilentBeforeDisconnectWarnings(&coded);
  MalformedLineWarning(&coded);
  LogWarnings(&coded);
  NoEndWarning(&coded);
  const AttemptCensus census = CountAttempts();
  ExecutionFallbackWarning(census, &coded);
  CrossCheckWarnings(census, &coded);
  return coded;
}

void RunModel::ImpossibleValueWarning(std::vector<CodedNote>* coded) const {
  if (rejected_count_ == 0) return;
  std::string text =
      absl::StrCat(rejected_count_, " impossible value", rejected_count_ > 1 ? "s" : "",
                   " rejected (kept out of every figure):");
  for (size_t i = 0; i < rejected_.size() && i < 5; ++i) {
    absl::StrAppend(&text, i ? ";" : "", " transactions line ", rejected_[i].line_number, " field ",
                    rejected_[i].field, ": ", rejected_[i].what);
  }
  if (rejected_count_ > 5) absl::StrAppend(&text, "; ...");
  Add(coded, "taskvine_impossible_value", std::move(text));
}

void RunModel::EarlyEndWarning(std::vector<CodedNote>* coded) const {
  if (!ended_ || end_us_ >= last_us_) return;
  Add(coded, "taskvine_early_end",
      absl::StrFormat(
          "transactions line %d field MANAGER END time: %d is %.6f s before the latest record; "
          "impossible, so the run ends at its latest record",
          end_line_, end_us_, Seconds(last_us_ - end_us_)));
}

void RunModel::TimeBackwardsWarning(std::vector<CodedNote>* coded) const {
  if (backwards_count_ == 0) return;
  Add(coded, "taskvine_time_backwards",
      absl::StrCat(backwards_count_, " record", backwards_count_ > 1 ? "s" : "",
                   " earlier than a record before them (times should never go back): ",
                   absl::StrJoin(backwards_, "; "), backwards_count_ > 5 ? "; ..." : ""));
}

// Named one by one up to kMaxSilentDeathsNamed; the rest in one note (a flood of idle
// connections that all went silent would otherwise give one warning per worker).
void RunModel::SilentDeathWarnings(std::vector<CodedNote>* coded) const {
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
    Add(coded, "taskvine_worker_silent_death",
        absl::StrFormat(
            "worker %s (%s) has no DISCONNECTION record and nothing from it for the last "
            "%.1f s of the run: it died silently; its lifetime, busy time and open attempts "
            "(lost) end at its last record, %.3f s after START",
            w.id, w.address, Seconds(EndUs() - w.disconnect_us),
            Seconds(w.disconnect_us - (start_us_ > 0 ? start_us_ : first_us_))));
  }
  if (silent_unnamed == 0) return;
  Add(coded, "taskvine_worker_silent_death",
      absl::StrFormat("%d more workers (%d in all; the first %d are named in their own "
                      "warnings) have no DISCONNECTION record and nothing from them for the "
                      "last %.1f to %.1f s of the run: they died silently; their lifetimes, "
                      "busy time and open attempts (lost) end at their last records",
                      silent_unnamed, silent, kMaxSilentDeathsNamed, least_silence, most_silence));
}

// Named one by one up to kMaxSilentDeathsNamed, the rest counted in one note.
void RunModel::SilentBeforeDisconnectWarnings(std::vector<CodedNote>* coded) const {
  int64_t silent_before = 0;
  double longest_silence = 0;
  for (const Worker& w : workers_) {
    if (w.silent_since_us == 0) continue;
    const double silence = Seconds(w.disconnect_us - w.silent_since_us);
    longest_silence = std::max(longest_silence, silence);
    if (++silent_before > kMaxSilentDeathsNamed) continue;
    Add(coded, "taskvine_worker_silent_before_disconnect",
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
                : ""));
  }
  if (silent_before <= kMaxSilentDeathsNamed) return;
  Add(coded, "taskvine_worker_silent_before_disconnect",
      absl::StrFormat("%d more workers (%d in all) were disconnected after a silence of up to "
                      "%.1f s: each counts as connected until its disconnection",
                      silent_before - kMaxSilentDeathsNamed, silent_before, longest_silence));
}

void RunModel::MalformedLineWarning(std::vector<CodedNote>* coded) const {
  if (malformed_count_ == 0) return;
  std::string text = absl::StrCat(malformed_count_, " malformed log line",
                                  malformed_count_ > 1 ? "s" : "", " skipped:");
  for (size_t i = 0; i < malformed_.size() && i < 5; ++i) {
    absl::StrAppend(&text, i ? ";" : "", " ", malformed_[i].file, " line ",
                    malformed_[i].line_number, ": ", malformed_[i].reason);
  }
  if (malformed_count_ > 5) absl::StrAppend(&text, "; ...");
  Add(coded, "taskvine_malformed_line", std::move(text));
}

// One-off remarks (several manager runs, ...), records of unknown workers, no START.
void RunModel::LogWarnings(std::vector<CodedNote>* coded) const {
  for (const std::string& note : notes_) Add(coded, "taskvine_log", note);
  if (unknown_worker_records_ > 0) {
    Add(coded, "taskvine_log",
        absl::StrCat(unknown_worker_records_,
                     " records name a worker that never connected in this log (ignored)"));
  }
  if (start_us_ == 0 && records_ > 0) {
    Add(coded, "taskvine_log",
        "the transactions log has no MANAGER START record; the run starts at its first record");
  }
}

void RunModel::NoEndWarning(std::vector<CodedNote>* coded) const {
  if (ended_ || records_ == 0) return;
  Add(coded, "taskvine_no_end",
      "the transactions log has no MANAGER END record (run still going, or the manager "
      "crashed); the run ends at its last record, and the performance log (written "
      "periodically, so behind the transactions log) is not cross-checked against it");
}

RunModel::AttemptCensus RunModel::CountAttempts() const {
  AttemptCensus census;
  census.exec_with_exhausted = Figures().execute_seconds;
  for (const auto& [id, task] : tasks_) {
    for (const Attempt& a : task.attempts) {
      if (a.dispatched()) ++census.dispatched;
      if (a.end == AttemptEnd::kRetrieved) {
        ++census.retrieved;
        bool fallback = false;
        a.ExecutionSeconds(&fallback);
        if (fallback) ++census.fallbacks;
      }
      if (a.end == AttemptEnd::kRetriedOnWorker) {
        ++census.exhausted;
        census.exec_with_exhausted += a.ExecutionSeconds();
      }
      // Finished, then lost with its worker before retrieval: time_execute counts it.
      if (a.end == AttemptEnd::kLost && a.finished_on_worker)
        census.exec_with_exhausted += a.ExecutionSeconds();
    }
  }
  return census;
}

void RunModel::ExecutionFallbackWarning(const AttemptCensus& census,
                                        std::vector<CodedNote>* coded) const {
  if (census.fallbacks == 0) return;
  Add(coded, "taskvine_log",
      absl::StrCat(census.fallbacks,
                   " retrieved attempts have no worker start/end times; their "
                   "execution time is WAITING_RETRIEVAL - RUNNING (includes waiting at the "
                   "worker)"));
}

// Cross-checks of the two logs (docs/taskvine-logs.md §8), against the last performance row.
void RunModel::CrossCheckWarnings(const AttemptCensus& census,
                                  std::vector<CodedNote>* coded) const {
  // Without MANAGER END the performance log's last row lags the transactions log (a live run
  // or a crash): a disagreement would say nothing.
  if (perf_.empty() || !ended_) return;
  const PerfSample& last = perf_.back();
  auto check = [&](double perf_value, double txn_value, const char* what, const char* perf_column,
                   double relative, double absolute) {
    if (std::isnan(perf_value)) return;
    if (Disagree(perf_value, txn_value, relative, absolute)) {
      Add(coded, "taskvine_cross_check",
          absl::StrFormat("cross-check: %s from the transactions log is %.17g but the "
                          "performance log's %s is %.17g",
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
  if (census.fallbacks == 0) {
    check(last.time_execute_us * 1e-6, census.exec_with_exhausted, "the summed execution time (s)",
          "time_execute (s)", 1e-3, 1e-3);
  }
  check(last.workers_joined, static_cast<double>(workers_.size()),
        "the number of identified worker connections", "workers_joined", 0, 0.5);
  check(last.tasks_dispatched,
        static_cast<double>(census.dispatched + static_cast<int64_t>(libraries_.size())),
        "the number of dispatched attempts (library instances included)", "tasks_dispatched", 0,
        0.5);
  check(last.tasks_done,
        static_cast<double>(census.retrieved + census.exhausted + library_waiting_retrievals_),
        "the number of retrieved attempts (library instances that reported back included)",
        "tasks_done", 0, 0.5);
}

}  // namespace taskvine
}  // namespace roastcoffea
