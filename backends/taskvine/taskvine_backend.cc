#include "backends/taskvine/taskvine_backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace roastcoffea {
namespace {

void Add(v1::Span& span, const std::string& context, const std::string& prefix,
         const char* activity, const char* unit, double value, const std::string& worker = "") {
  v1::FineMetric* metric = span.add_metrics();
  metric->set_context(context);
  metric->set_task_prefix(prefix);
  metric->set_activity(activity);
  metric->set_unit(unit);
  metric->set_value(value);
  metric->set_worker(worker);
}

constexpr double kBytesPerMebibyte = 1024.0 * 1024.0;

// The run directory of `run_info_root` that was going on when tracking began, or "": the one
// most-recent points to (else the newest), when its transactions log has no MANAGER END and one
// of its logs was written within kLiveRunQuietTime (a run that crashed long ago is not live).
constexpr absl::Duration kLiveRunQuietTime = absl::Minutes(10);
std::string LiveRunAt(const std::string& run_info_root) {
  std::error_code error;
  std::vector<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(run_info_root, error)) {
    const std::string name = entry.path().filename().string();
    if (name == "most-recent" || !entry.is_directory(error)) continue;
    if (!std::filesystem::exists(entry.path() / "vine-logs" / "transactions", error)) continue;
    runs.push_back(name);
  }
  if (runs.empty()) return "";
  std::sort(runs.begin(), runs.end());
  std::string chosen = runs.back();
  const std::filesystem::path recent =
      std::filesystem::canonical(std::filesystem::path(run_info_root) / "most-recent", error);
  if (!error && std::find(runs.begin(), runs.end(), recent.filename().string()) != runs.end()) {
    chosen = recent.filename().string();
  }
  const std::string logs = absl::StrCat(run_info_root, "/", chosen, "/vine-logs/");
  if (taskvine::TransactionsLogHasEnded(logs + "transactions")) return "";
  absl::Time written = absl::InfinitePast();
  for (const char* log : {"transactions", "performance"}) {
    struct stat info;
    if (stat((logs + log).c_str(), &info) == 0) {
      written = std::max(written, absl::TimeFromTimespec(info.st_mtim));
    }
  }
  return absl::Now() - written <= kLiveRunQuietTime ? chosen : "";
}

}  // namespace

namespace {
TaskVineBackendOptions WithAClock(TaskVineBackendOptions options) {
  if (options.clock == nullptr) options.clock = Clock::Real();
  return options;
}
}  // namespace

TaskVineMetricsBackend::TaskVineMetricsBackend(TaskVineBackendOptions options)
    : options_(WithAClock(std::move(options))) {}

TaskVineMetricsBackend::~TaskVineMetricsBackend() { follower_.Stop(); }

absl::StatusOr<taskvine::LogPaths> TaskVineMetricsBackend::FindLogs() const {
  if (run_info_root_.empty()) return taskvine::ResolveLogPaths(options_.logs);
  // The run the command starts: a run directory that did not exist when tracking began. Prefer
  // the one most-recent points to; else the newest (their names are timestamps).
  std::vector<std::string> fresh;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(run_info_root_, error)) {
    const std::string name = entry.path().filename().string();
    if (name == "most-recent" || !entry.is_directory(error)) continue;
    if (std::find(old_runs_.begin(), old_runs_.end(), name) != old_runs_.end()) continue;
    if (!std::filesystem::exists(entry.path() / "vine-logs" / "transactions", error)) continue;
    fresh.push_back(name);
  }
  if (fresh.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no run in ", run_info_root_, " newer than the tracking (", old_runs_.size(),
                     " earlier run", old_runs_.size() == 1 ? "" : "s", " ignored)"));
  }
  std::sort(fresh.begin(), fresh.end());
  std::string chosen = fresh.back();
  const std::filesystem::path recent =
      std::filesystem::canonical(std::filesystem::path(run_info_root_) / "most-recent", error);
  if (!error && std::find(fresh.begin(), fresh.end(), recent.filename().string()) != fresh.end()) {
    chosen = recent.filename().string();
  }
  return taskvine::ResolveLogPaths(absl::StrCat(run_info_root_, "/", chosen));
}

absl::Status TaskVineMetricsBackend::OpenTailersLocked() {
  if (!have_paths_) {
    absl::StatusOr<taskvine::LogPaths> paths = FindLogs();
    if (!paths.ok()) return paths.status();
    paths_ = *std::move(paths);
    have_paths_ = true;
    txn_tailer_ = std::make_unique<taskvine::LineTailer>(
        paths_.transactions, taskvine::LineTailer::kDefaultBlockBytes, options_.max_bytes_per_poll);
  }
  if (perf_tailer_ == nullptr) {
    if (paths_.performance.empty()) {
      // A followed TaskVine run creates its performance log next to the transactions log.
      absl::StatusOr<taskvine::LogPaths> again = taskvine::ResolveLogPaths(paths_.transactions);
      if (again.ok() && !again->performance.empty() && again->transactions == paths_.transactions) {
        paths_.performance = again->performance;
      }
    }
    if (!paths_.performance.empty()) {
      perf_tailer_ = std::make_unique<taskvine::LineTailer>(
          paths_.performance, taskvine::LineTailer::kDefaultBlockBytes,
          options_.max_bytes_per_poll);
    }
  }
  return absl::OkStatus();
}

void TaskVineMetricsBackend::NoteFoundLocked() {
  found_ = true;
  ended_when_found_ = model_.ended();
  const int64_t start_us = model_.Figures().start_us;
  if (!options_.follow || !log_was_there_at_start_ || ended_when_found_ || start_us <= 0 ||
      absl::FromUnixMicros(start_us) >= tracking_started_) {
    return;
  }
  notes_.push_back(taskvine::CodedNote{
      "taskvine_attached_late",
      absl::StrCat("--follow attached to a run already going (", paths_.transactions, ", started ",
                   absl::FormatTime("%Y-%m-%d %H:%M:%E3S UTC", absl::FromUnixMicros(start_us),
                                    absl::UTCTimeZone()),
                   ", ",
                   absl::StrFormat("%.1f", absl::ToDoubleSeconds(tracking_started_ -
                                                                 absl::FromUnixMicros(start_us))),
                   " s before tracking began): it was read from its start, and every figure "
                   "is framed by the run's own record")});
}

void TaskVineMetricsBackend::NoteTailerChangesLocked(const taskvine::LineTailer& tailer,
                                                     int64_t* restarts_seen,
                                                     int64_t* replacements_seen) {
  if (tailer.restarts() != *restarts_seen) {
    *restarts_seen = tailer.restarts();
    notes_.push_back(taskvine::CodedNote{
        "taskvine_log_restarted",
        absl::StrCat("the log ", tailer.path(), " was ", tailer.restart_reason(),
                     " while it was followed; what it holds now was read from its start")});
  }
  if (tailer.replacements() != *replacements_seen) {
    *replacements_seen = tailer.replacements();
    notes_.push_back(taskvine::CodedNote{
        "taskvine_log_replaced",
        absl::StrCat("the log ", tailer.path(), " was replaced by ", tailer.replacement_problem(),
                     " while it was followed; it is not read as a log, so the measurement holds "
                     "what the log held until then (",
                     tailer.bytes_read(), " bytes)")});
  }
}

// Only at the end: a rotation leaves the path empty for a moment before the new file appears.
void TaskVineMetricsBackend::NoteDeletedLogsLocked() {
  for (const taskvine::LineTailer* tailer : {txn_tailer_.get(), perf_tailer_.get()}) {
    if (tailer == nullptr || !tailer->path_missing()) continue;
    notes_.push_back(taskvine::CodedNote{
        "taskvine_log_deleted",
        absl::StrCat("the log ", tailer->path(),
                     " was deleted (or moved away with nothing in its place) while it was "
                     "followed; the measurement holds what that file held (",
                     tailer->bytes_read(),
                     " bytes, read through the handle still open on it): whatever the run "
                     "wrote elsewhere since is not in it")});
  }
}

absl::Status TaskVineMetricsBackend::PollLogs() {
  std::lock_guard<std::mutex> lock(mu_);
  last_poll_bytes_ = 0;
  if (absl::Status opened = OpenTailersLocked(); !opened.ok()) return opened;
  absl::StatusOr<int64_t> read = txn_tailer_->Poll([this](absl::string_view line, int64_t number) {
    model_.ConsumeTransactionLine(line, number);
  });
  if (!read.ok()) return read.status();
  last_poll_bytes_ += *read;
  if (*read > 0 && !found_) NoteFoundLocked();
  NoteTailerChangesLocked(*txn_tailer_, &txn_restarts_seen_, &txn_replacements_seen_);
  last_more_pending_ = txn_tailer_->more_pending();
  if (perf_tailer_ != nullptr) {
    absl::StatusOr<int64_t> perf_read =
        perf_tailer_->Poll([this](absl::string_view line, int64_t number) {
          model_.ConsumePerformanceLine(line, number);
        });
    if (!perf_read.ok() && perf_read.status().code() != absl::StatusCode::kNotFound)
      return perf_read.status();
    if (perf_read.ok()) last_poll_bytes_ += *perf_read;
    NoteTailerChangesLocked(*perf_tailer_, &perf_restarts_seen_, &perf_replacements_seen_);
    last_more_pending_ = last_more_pending_ || perf_tailer_->more_pending();
  }
  return absl::OkStatus();
}

absl::Status TaskVineMetricsBackend::ReadFinishedLogs() {
  while (true) {
    if (absl::Status status = PollLogs(); !status.ok()) return status;
    std::lock_guard<std::mutex> lock(mu_);
    if (!last_more_pending_) return absl::OkStatus();
  }
}

void TaskVineMetricsBackend::NoteReadingCutShort() {
  std::lock_guard<std::mutex> lock(mu_);
  if (cut_short_noted_ || txn_tailer_ == nullptr) return;
  cut_short_noted_ = true;
  notes_.push_back(taskvine::CodedNote{
      "taskvine_log_cut_short",
      absl::StrCat("the log ", txn_tailer_->path(),
                   " was still growing faster than it was read "
                   "when the run ended; it was read up to byte ",
                   txn_tailer_->bytes_read(), " (", absl::FormatDuration(kDrainMaxTime),
                   " after the end) and the rest is not in the measurement")});
}

void TaskVineMetricsBackend::FinishReadingLocked() {
  if (finished_ || txn_tailer_ == nullptr) return;
  finished_ = true;
  model_.ConsumePartialLastLine("transactions", txn_tailer_->pending_line(),
                                txn_tailer_->pending_line_number());
  if (perf_tailer_ != nullptr) {
    model_.ConsumePartialLastLine("performance", perf_tailer_->pending_line(),
                                  perf_tailer_->pending_line_number());
  }
  model_.MarkLogComplete();
}

void TaskVineMetricsBackend::ReadToEnd() {
  if (options_.follow) {
    // The manager may still be writing its last records when the command returns.
    Clock& clock = *options_.clock;
    const absl::Duration deadline = clock.Monotonic() + kDrainMaxTime;
    absl::Duration last_growth = clock.Monotonic();
    while (true) {
      const absl::Status status = PollLogs();
      bool ended = false, grew = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ended = model_.ended();
        grew = last_poll_bytes_ > 0;
      }
      const absl::Duration now = clock.Monotonic();
      if (grew) last_growth = now;
      if (!status.ok() || ended || now - last_growth >= kDrainQuietTime) break;
      if (now >= deadline) {
        NoteReadingCutShort();
        break;
      }
      clock.SleepFor(absl::Milliseconds(50));
    }
  } else {
    (void)ReadFinishedLogs();
  }
  std::lock_guard<std::mutex> lock(mu_);
  FinishReadingLocked();
}

absl::Status TaskVineMetricsBackend::CheckFollowedRunIsNew() const {
  if (!options_.follow) return absl::OkStatus();
  const taskvine::RunFigures run = model_.Figures();
  // Whole (MANAGER END) at its first read and older than the tracking: not the command's run.
  // (A log replayed into place has old times, but is not whole when first read.)
  if (!ended_when_found_ || absl::FromUnixMicros(run.end_us) >= tracking_started_)
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "--follow: ", paths_.transactions, " holds a run that had already ended (MANAGER END at ",
      absl::FormatTime(absl::FromUnixMicros(run.end_us)), ", ",
      absl::StrFormat("%.1f",
                      absl::ToDoubleSeconds(tracking_started_ - absl::FromUnixMicros(run.end_us))),
      " s before tracking began), not the command's run; name vine-run-info (or most-recent) to "
      "wait for the "
      "next run, or measure that finished run without --follow"));
}

void TaskVineMetricsBackend::FollowTick() {
  absl::Status status = PollLogs();
  // NotFound: the logs have not appeared yet.
  if (status.ok() || status.code() == absl::StatusCode::kNotFound) return;
  const std::string text(status.message());
  if (text != last_follow_error_) {
    std::lock_guard<std::mutex> lock(mu_);
    poll_errors_.push_back(text);
  }
  last_follow_error_ = text;
}

absl::Status TaskVineMetricsBackend::StartTracking(absl::Duration interval) {
  if (absl::Status valid = backends_internal::CheckPeriod(interval, "tracking interval");
      !valid.ok()) {
    return valid;
  }
  if (tracking_) return absl::FailedPreconditionError("TaskVine backend is already tracking");
  if (!options_.follow) {
    if (absl::Status status = ReadFinishedLogs(); !status.ok()) return status;
    std::lock_guard<std::mutex> lock(mu_);
    FinishReadingLocked();  // a finished run: nothing more will come
  } else {
    tracking_started_ = options_.clock->Now();
    // vine-run-info or vine-run-info/most-recent: follow the run created from now on, never
    // one that was already there.
    std::string spec(absl::StripAsciiWhitespace(options_.logs));
    while (spec.size() > 1 && spec.back() == '/') spec.pop_back();
    const std::filesystem::path path(spec);
    std::error_code error;
    if (path.filename() == "most-recent") {
      run_info_root_ = path.parent_path().empty() ? "." : path.parent_path().string();
    } else if (path.filename() == "vine-run-info" ||
               std::filesystem::exists(path / "most-recent", error)) {
      run_info_root_ = spec;
    }
    if (!run_info_root_.empty()) {
      // Collect may attach to a run already going: that one is followed (from its start);
      // the other run directories are earlier runs.
      live_run_at_start_ = LiveRunAt(run_info_root_);
      for (const auto& entry : std::filesystem::directory_iterator(run_info_root_, error)) {
        const std::string name = entry.path().filename().string();
        if (name == "most-recent" || name == live_run_at_start_ ||
            !std::filesystem::exists(entry.path() / "vine-logs" / "transactions", error)) {
          continue;
        }
        old_runs_.push_back(name);
      }
    }
    if (run_info_root_.empty()) {
      const absl::StatusOr<taskvine::LogPaths> paths = taskvine::ResolveLogPaths(options_.logs);
      struct stat info;
      log_was_there_at_start_ = paths.ok() && stat(paths->transactions.c_str(), &info) == 0 &&
                                S_ISREG(info.st_mode) && info.st_size > 0;
    } else {
      log_was_there_at_start_ = !live_run_at_start_.empty();
    }
    // Poll at most every 0.5 s so a live view stays fresh even with a long interval.
    last_follow_error_.clear();
    backends_internal::PeriodicThreadOptions follow;
    follow.period = std::min(interval, absl::Milliseconds(500));
    follow.tick_at_start = true;
    follow.clock = options_.clock;
    absl::Status started = follower_.Start(follow, [this] { FollowTick(); });
    if (!started.ok()) return started;
  }
  tracking_ = true;
  interval_seconds_ = absl::ToDoubleSeconds(interval);
  return absl::OkStatus();
}

absl::StatusOr<v1::TrackingData> TaskVineMetricsBackend::StopTracking() {
  if (!tracking_) return absl::FailedPreconditionError("TaskVine backend is not tracking");
  tracking_ = false;
  follower_.Stop();  // returns within one poll: no poll blocks, and each reads a bounded amount
  absl::Status status = PollLogs();
  // What was appended since the last poll, within kDrainMaxTime: a log that keeps growing
  // faster than it is read cannot hold the end of the run.
  const absl::Duration deadline = options_.clock->Monotonic() + kDrainMaxTime;
  // (Not again when EndSpan's read was already cut short: one 10 s wait per run.)
  while (status.ok() && options_.follow && last_more_pending_ && !cut_short_noted_) {
    if (options_.clock->Monotonic() >= deadline) {
      NoteReadingCutShort();
      break;
    }
    status = PollLogs();
  }
  if (!status.ok() && options_.follow && found_ && !absl::IsNotFound(status)) {
    // The run read so far is kept: the error becomes a warning.
    std::lock_guard<std::mutex> lock(mu_);
    poll_errors_.push_back(std::string(status.message()));
    status = absl::OkStatus();
  }
  if (!status.ok()) {
    if (status.code() == absl::StatusCode::kNotFound && options_.follow) {
      return absl::NotFoundError(
          absl::StrCat("the TaskVine logs never appeared: ", status.message()));
    }
    return status;
  }
  std::lock_guard<std::mutex> lock(mu_);
  NoteDeletedLogsLocked();
  FinishReadingLocked();
  if (absl::Status old = CheckFollowedRunIsNew(); !old.ok()) return old;
  // Handed over (Contribute): nothing reads the steps after this last series.
  v1::TrackingData tracking = handed_over_ ? model_.TakeTracking() : model_.Tracking();
  tracking.set_interval_seconds(interval_seconds_);
  return tracking;
}

std::optional<v1::TrackingData> TaskVineMetricsBackend::TakeTrackingSegment() {
  if (!options_.follow) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (!found_) return std::nullopt;
  v1::TrackingData segment = model_.TrackingSince(&handed_out_);
  segment.set_interval_seconds(interval_seconds_);
  return segment;
}

absl::StatusOr<SpanId> TaskVineMetricsBackend::CreateSpan(absl::string_view name) {
  absl::StatusOr<backends_internal::SpanWindow> span = spans_.Open(name, absl::Now());
  if (!span.ok()) return span.status();
  return span->id;
}

absl::Status TaskVineMetricsBackend::EndSpan(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> span = spans_.Close(id, absl::Now());
  if (!span.ok()) return span.status();
  // Figures come from the whole record: read it to its end before any is computed.
  if (tracking_) ReadToEnd();
  return absl::OkStatus();
}

absl::StatusOr<v1::Span> TaskVineMetricsBackend::GetSpanMetrics(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return window.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (handed_over_) {
    return absl::FailedPreconditionError(
        "the TaskVine run's tasks were handed over (Contribute): take span metrics before");
  }
  if (absl::Status old = CheckFollowedRunIsNew(); !old.ok()) return old;
  // One window for every figure, followed or not: the run's own record (START .. END, or its
  // last record), the window RecordedRunWindow gives the measurement. The tracking series and
  // the chunk records cover the whole run too, even when collect attached to it late.
  const taskvine::RunFigures run = model_.Figures();
  const int64_t from_us = run.start_us, to_us = run.end_us;
  v1::Span span;
  span.set_name(window->name);
  span.set_id(id);
  span.set_start_unix_ns(from_us * 1000);
  span.set_end_unix_ns(to_us * 1000);
  for (const std::string& category : model_.categories()) {
    const taskvine::AttemptTotals t = model_.TotalsInWindow(from_us, to_us, category, -1);
    if (t.attempts == 0) continue;
    const std::string context = "taskvine";
    Add(span, context, category, "queue-wait", "seconds", t.queue_wait_seconds);
    Add(span, context, category, "commit", "seconds", t.commit_seconds);
    Add(span, context, category, "worker-wait", "seconds", t.worker_wait_seconds);
    Add(span, context, category, "execute", "seconds", t.execute_seconds);
    Add(span, context, category, "retrieve", "seconds", t.retrieval_seconds);
    Add(span, context, category, "output-transfer", "seconds", t.output_seconds);
    Add(span, context, category, "bytes-in", "bytes", t.input_bytes);
    Add(span, context, category, "bytes-out", "bytes", t.output_bytes);
    Add(span, context, category, "attempts", "count", static_cast<double>(t.attempts));
    Add(span, context, category, "lost-attempts", "count", static_cast<double>(t.lost));
    if (t.execute_seconds > 0) {
      Add(span, context, category, "transfer-to-execute", "fraction",
          (t.commit_seconds + t.output_seconds) / t.execute_seconds);
    }
    if (t.monitored) {
      Add(span, context, category, "cpu-time", "seconds", t.cpu_seconds);
      Add(span, context, category, "peak-memory", "bytes", t.peak_memory_mb * kBytesPerMebibyte);
    }
  }
  // Rows only for workers that ran something: an idle worker's would be zeros besides its
  // lifetime and cores, which the tracking series carry (a log of 10^5 idle connections would
  // otherwise give 10^6 rows); "idle-workers" says how many were left out.
  const std::vector<taskvine::Worker>& workers = model_.workers();
  for (const taskvine::WorkerFigures& w : model_.PerWorker(/*skip_idle=*/true)) {
    const std::string context = "taskvine-worker";
    Add(span, context, "", "busy", "wall-seconds", w.busy_seconds, w.worker);
    Add(span, context, "", "lifetime", "wall-seconds", w.lifetime_seconds, w.worker);
    Add(span, context, "", "busy-fraction", "fraction", w.busy_fraction, w.worker);
    Add(span, context, "", "utilisation", "fraction", w.utilisation_fraction, w.worker);
    Add(span, context, "", "core-seconds-available", "core-seconds", w.core_seconds_available,
        w.worker);
    Add(span, context, "", "allocated-core-seconds", "core-seconds",
        w.totals.allocated_core_seconds, w.worker);
    Add(span, context, "", "task-seconds", "core-seconds", w.totals.execute_seconds, w.worker);
    Add(span, context, "", "lost-task-seconds", "core-seconds", w.totals.lost_seconds, w.worker);
  }
  int64_t idle_workers = 0;
  for (const taskvine::Worker& w : workers) {
    if (w.Idle()) {
      ++idle_workers;
      continue;
    }
    Add(span, "taskvine-worker", "", "bytes-in", "bytes", w.bytes_in, w.id);
    Add(span, "taskvine-worker", "", "bytes-out", "bytes", w.bytes_out, w.id);
    if (w.silent_since_us > 0) {
      Add(span, "taskvine-worker", "", "silent-before-disconnect", "wall-seconds",
          static_cast<double>(w.disconnect_us - w.silent_since_us) * 1e-6, w.id);
    }
  }
  // Raw sums only: the run's efficiency, mean and peak workers are //aggregation's.
  Add(span, "taskvine-run", "", "execute-core-seconds", "core-seconds",
      run.weighted_execute_seconds);
  Add(span, "taskvine-run", "", "lost-task-seconds", "core-seconds", run.lost_seconds);
  Add(span, "taskvine-run", "", "function-slot-seconds", "core-seconds", run.function_slot_seconds);
  Add(span, "taskvine-run", "", "idle-workers", "count", static_cast<double>(idle_workers));
  return span;
}

void TaskVineMetricsBackend::TakeChunkRows(ChunkTable* table) {
  if (chunks_taken_) return;
  chunks_taken_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_ || handed_over_) {  // a followed run still read: its tasks may change
    model_.AppendChunkRows(options_.chunk_category, table);
    return;
  }
  // The run is handed over: the rows free the tasks as they are made (ReleaseHandedOverRun).
  (void)LiveProgressLocked();  // the live view's last figures stay
  handed_over_ = true;
  model_.TakeChunkRows(options_.chunk_category, table);
}

std::vector<v1::Warning> TaskVineMetricsBackend::CodedWarnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<v1::Warning> coded;
  const auto add = [&](const std::string& code, std::string message) {
    v1::Warning& warning = coded.emplace_back();
    warning.set_code(code);
    warning.set_message(std::move(message));
  };
  for (taskvine::CodedNote& note : model_.CodedWarnings()) add(note.code, std::move(note.message));
  for (const taskvine::CodedNote& note : notes_) add(note.code, note.message);
  for (const std::string& error : poll_errors_)
    add("taskvine_log_read", absl::StrCat("reading the logs: ", error));
  std::vector<std::string> warnings;
  int unfinished = 0, in_category = 0;
  for (const auto& [id, task] : model_.tasks()) {
    if (model_.categories()[task.category] != options_.chunk_category) continue;
    ++in_category;
    if (!task.done) ++unfinished;
  }
  if (unfinished > 0) {
    warnings.push_back(absl::StrCat(
        unfinished, " task", unfinished > 1 ? "s" : "", " of category '", options_.chunk_category,
        "' had not finished when the logs ended (no chunk record for them)"));
    add("taskvine_unfinished_chunks", std::move(warnings.back()));
    warnings.pop_back();
  }
  if (in_category == 0 && !model_.tasks().empty()) {
    std::string names;
    for (const std::string& c : model_.categories())
      absl::StrAppend(&names, names.empty() ? "" : ", ", c);
    warnings.push_back(absl::StrCat("no task of category '", options_.chunk_category,
                                    "' (so no chunk records); categories in the log: ", names,
                                    " (choose one with --taskvine_category)"));
    add("taskvine_no_chunk_category", std::move(warnings.back()));
    warnings.pop_back();
  }
  return coded;
}

void TaskVineMetricsBackend::ReleaseHandedOverRun() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_) return;  // a followed run still read: its tasks may change
  if (!handed_over_) {
    (void)LiveProgressLocked();  // the live view's last figures stay
    handed_over_ = true;
    model_.ReleaseTasks();
  }
  // A followed run's series went out with StopTracking; a finished run's go with it.
  if (!tracking_) model_.ReleaseSteps();
}

void TaskVineMetricsBackend::Contribute(RawRun& run) {
  {
    // The tracking series are out already (StopTracking): free the steps before the records.
    std::lock_guard<std::mutex> lock(mu_);
    if (!tracking_ && finished_) model_.ReleaseSteps();
  }
  // The warnings first: they read the tasks, which the rows free as they are made.
  std::vector<v1::Warning> warnings = CodedWarnings();
  // Straight into RawRun's table (~190 B a record), no v1::ChunkRecord on the way.
  TakeChunkRows(&run.engine_chunks);
  for (v1::Warning& warning : warnings) run.warnings.push_back(std::move(warning));
  ReleaseHandedOverRun();
  const std::optional<RecordedWindow> recorded = RecordedRunWindow();
  if (!recorded.has_value()) return;
  // A run is framed by its own record, not by the time it took us to read it.
  run.window.start = recorded->start;
  run.window.end = recorded->end;
  run.window.elapsed_seconds = absl::ToDoubleSeconds(recorded->end - recorded->start);
  // A run that ended before we read it happened on other machines at another time: this
  // machine's load and steal now say nothing about it, and must not warn as if they did.
  if (ReadsFinishedRun()) run.window.host_facts.reset();
}

std::optional<TaskVineMetricsBackend::RecordedWindow> TaskVineMetricsBackend::RecordedRunWindow()
    const {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.follow && !found_) return std::nullopt;  // the run never appeared
  const taskvine::RunFigures figures = model_.Figures();
  if (figures.end_us <= figures.start_us) return std::nullopt;
  return RecordedWindow{absl::FromUnixMicros(figures.start_us),
                        absl::FromUnixMicros(figures.end_us)};
}

std::optional<BackendLiveProgress> TaskVineMetricsBackend::LiveProgress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return LiveProgressLocked();
}

std::optional<BackendLiveProgress> TaskVineMetricsBackend::LiveProgressLocked() const {
  if (model_.transaction_records() == 0) return std::nullopt;
  if (live_.has_value() && live_records_ == model_.transaction_records()) return live_;
  BackendLiveProgress live;
  const std::vector<std::string>& categories = model_.categories();
  const auto chunk = std::find(categories.begin(), categories.end(), options_.chunk_category);
  BackendLiveProgress::TaskCounts& counts = live.tasks_by_prefix[options_.chunk_category];
  if (chunk != categories.end()) {
    const int32_t category = static_cast<int32_t>(chunk - categories.begin());
    for (const auto& [id, task] : model_.tasks()) {
      if (task.category != category) continue;
      if (task.done) {
        ++(task.Failed() ? counts.failed : counts.done);
      } else if (!task.attempts.empty() && task.attempts.back().dispatched() &&
                 task.attempts.back().end == taskvine::AttemptEnd::kOpen) {
        ++counts.running;
      }
    }
  }
  live.workers = 0;
  live.cores = live.memory_limit_bytes = 0;
  for (const taskvine::Worker& worker : model_.workers()) {
    if (worker.disconnect_us != 0) continue;
    ++*live.workers;
    *live.cores += worker.cores;
    *live.memory_limit_bytes += worker.memory_mb * 1024.0 * 1024.0;
  }
  live_ = std::move(live);
  live_records_ = model_.transaction_records();
  return live_;
}

taskvine::RunModel TaskVineMetricsBackend::ModelSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

}  // namespace roastcoffea
