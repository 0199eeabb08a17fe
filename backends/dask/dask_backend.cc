// DaskMetricsBackend: connection, start and stop of tracking, the gaps, warnings and segments.
// Polls, heartbeats, spans and profiles are in dask_backend_{poll,heartbeats,spans,profiles}.cc.
#include "backends/dask/dask_backend.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "backends/dask/dask_backend_time.h"

namespace roastcoffea {
namespace {

using dask_backend_internal::FormatUnixNs;
using dask_backend_internal::NowUnixNs;

// Transport failures mean the scheduler is gone (or the stream is unusable): reconnect. A reply
// of an unexpected shape on a healthy connection is not a loss (it is warned about instead).
bool IsConnectionLoss(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DaskMetricsBackend>> DaskMetricsBackend::Create(
    DaskBackendOptions options) {
  if (options.clock == nullptr) options.clock = Clock::Real();
  absl::StatusOr<dask::SchedulerAddress> address =
      dask::ParseSchedulerAddress(options.scheduler_address);
  if (!address.ok()) return address.status();
  return std::unique_ptr<DaskMetricsBackend>(
      new DaskMetricsBackend(std::move(options), *std::move(address)));
}

DaskMetricsBackend::DaskMetricsBackend(DaskBackendOptions options, dask::SchedulerAddress address)
    : options_(std::move(options)),
      address_(std::move(address)),
      backoff_(options_.reconnect_initial_backoff) {}

DaskMetricsBackend::~DaskMetricsBackend() {
  StopPollers();
  if (comm_ != nullptr) comm_->Close();
  if (hb_comm_ != nullptr) hb_comm_->Close();
}

dask::CommOptions DaskMetricsBackend::CommOptionsWithEnd() {
  dask::CommOptions comm = options_.comm;
  comm.give_up = [this, run_gives_up = options_.comm.give_up] {
    return (run_gives_up && run_gives_up()) || EndRanOut();
  };
  return comm;
}

void DaskMetricsBackend::WarnEndCut(absl::string_view step, absl::string_view lost) {
  std::lock_guard<std::mutex> lock(mutex_);
  AddWarning(absl::StrCat("The end of tracking ran out of its ", absl::FormatDuration(end_budget_),
                          " (end_timeout) while the Dask scheduler was slow to answer: ", step,
                          " was cut short; ", lost, "."));
}

void DaskMetricsBackend::AddWarning(std::string sentence) {
  // A problem that repeats at every poll is said once.
  if (std::find(warnings_.begin(), warnings_.end(), sentence) != warnings_.end()) return;
  warnings_.push_back(std::move(sentence));
}

std::vector<v1::Warning> DaskMetricsBackend::CodedWarnings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Every warning once: those that qualify the numbers with their own code, the rest as
  // "dask_warning".
  std::vector<v1::Warning> coded;
  for (const std::string& sentence : warnings_) {
    v1::Warning& warning = coded.emplace_back();
    warning.set_code("dask_warning");
    warning.set_message(sentence);
    for (const v1::Warning& specific : measurement_warnings_) {
      if (specific.message() == sentence) warning.set_code(specific.code());
    }
  }
  return coded;
}

std::string DaskMetricsBackend::scheduler_version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return version_text_;
}

std::vector<dask::TaskRecord> DaskMetricsBackend::task_records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

absl::Status DaskMetricsBackend::ConnectAndPrepare() {
  absl::StatusOr<std::unique_ptr<dask::DaskComm>> comm =
      dask::DaskComm::Connect(address_, CommOptionsWithEnd());
  if (!comm.ok()) return comm.status();
  // The version is for people: features are probed (metadata can be missing or lie, e.g. a
  // source tree on PYTHONPATH reports nil or another installation's version).
  absl::StatusOr<dask::DaskVersion> version = (*comm)->ProbeVersion();
  if (version.ok()) {
    version_ = *version;
    std::lock_guard<std::mutex> lock(mutex_);
    version_text_ = version->text;
  } else if ((*comm)->broken()) {
    return version.status();
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    version_text_ = "unknown";
    AddWarning(absl::StrCat("The Dask scheduler's distributed version is unknown (",
                            version.status().message(), "); its features are probed instead."));
  }
  if (options_.read_task_stream && task_stream_enabled_) {
    // ≥ 2026.6.0 answers an int (the index of the next record, and installs the plugin); older
    // servers do not know the op (nil).
    absl::StatusOr<dask::Value> index = (*comm)->Call("get_task_stream_index");
    if (!index.ok() && (*comm)->broken()) return index.status();
    use_start_index_ = index.ok() && index->AsInt64().has_value();
    if (use_start_index_) {
      cursor_.Accept({}, *index->AsInt64());
    } else {
      // Installs the TaskStreamPlugin if nobody did (the reply is then []).
      dask::Value args = dask::Value::Map();
      args.Insert(dask::Value::Str("count"), dask::Value::Int(0));
      absl::StatusOr<dask::Value> installed = (*comm)->Call("get_task_stream", args);
      if (!installed.ok()) return installed.status();
    }
  }
  comm_ = *std::move(comm);
  return absl::OkStatus();
}

absl::Status DaskMetricsBackend::StartTracking(absl::Duration interval) {
  if (absl::Status valid = backends_internal::CheckPeriod(interval, "tracking interval");
      !valid.ok()) {
    return valid;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tracking_) return absl::FailedPreconditionError("DaskMetricsBackend is already tracking");
  }
  end_deadline_ns_ = std::numeric_limits<int64_t>::max();  // a new run: no end yet
  if (comm_ == nullptr) {
    absl::Status s = ConnectAndPrepare();
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot start tracking the Dask scheduler at ",
                                                 options_.scheduler_address, ": ", s.message()));
    }
  }
  tracking_start_unix_ns_ = NowUnixNs();
  tracking_start_monotonic_ = dask::DeadlineNow();
  cursor_.StartAt(tracking_start_unix_ns_ / 1e9);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    profiles_.clear();
    tracking_ = true;
    interval_seconds_ = absl::ToDoubleSeconds(interval);
  }
  Poll();
  stop_heartbeat_watcher_.Reset();
  // The interval was checked above: the poller starts.
  backends_internal::PeriodicThreadOptions polling;
  polling.period = interval;
  polling.clock = options_.clock;
  (void)poller_.Start(polling, [this] { Poll(); });
  if (options_.watch_heartbeats) heartbeat_poller_ = std::thread([this] { HeartbeatLoop(); });
  return absl::OkStatus();
}

void DaskMetricsBackend::EnterGap(const absl::Status& cause) {
  if (comm_ != nullptr) comm_.reset();  // no clean close: the stream is unusable
  if (in_gap_) return;
  in_gap_ = true;
  gap_start_unix_ns_ = last_good_poll_unix_ns_ != 0 ? last_good_poll_unix_ns_ : NowUnixNs();
  gap_reason_ = std::string(cause.message());
  // A peer that breaks again right after each reconnection (a flapping or hostile scheduler)
  // keeps its growing backoff instead of being retried at full speed.
  const absl::Duration now = options_.clock->Monotonic();
  backoff_ = now - last_reconnect_ < absl::Seconds(10)
                 ? std::min(backoff_ * 2, options_.reconnect_max_backoff)
                 : options_.reconnect_initial_backoff;
  next_reconnect_ = now + backoff_;
}

void DaskMetricsBackend::Poll() {
  if (comm_ == nullptr) {
    if (options_.clock->Monotonic() < next_reconnect_) return;
    absl::Status s = ConnectAndPrepare();
    if (!s.ok()) {
      if (!in_gap_) {
        EnterGap(s);
      } else {
        backoff_ = std::min(backoff_ * 2, options_.reconnect_max_backoff);
        next_reconnect_ = options_.clock->Monotonic() + backoff_;
      }
      return;
    }
    if (in_gap_) {
      ++reconnects_;
      last_reconnect_ = options_.clock->Monotonic();
      cursor_.ResetForNewScheduler();
      present_workers_.clear();  // a restarted scheduler may have a new worker set
      const int64_t end = NowUnixNs();
      std::lock_guard<std::mutex> lock(mutex_);
      RecordGap(end);
      AddWarning(absl::StrFormat(
          "Lost the Dask scheduler %s from %s to %s (%.1f s: %s); reconnected, data in that "
          "window is missing.",
          options_.scheduler_address, FormatUnixNs(gap_start_unix_ns_), FormatUnixNs(end),
          (end - gap_start_unix_ns_) / 1e9, gap_reason_));
      in_gap_ = false;
    }
  }
  absl::Status s = PollConnected();
  if (!s.ok()) {
    if (IsConnectionLoss(s) || comm_ == nullptr || comm_->broken()) {
      EnterGap(s);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("A poll of the Dask scheduler failed: ", s.message()));
    }
  }
}

void DaskMetricsBackend::RecordGap(int64_t end_unix_ns) {
  v1::TrackingGap& gap = gaps_.emplace_back();
  gap.set_start_unix_ns(gap_start_unix_ns_);
  gap.set_end_unix_ns(end_unix_ns);
  gap.set_reason(
      absl::StrCat("scheduler ", options_.scheduler_address, " unreachable: ", gap_reason_));
}

v1::TrackingData DaskMetricsBackend::UntakenSamples() {
  v1::TrackingData data;
  data.set_backend("dask");
  data.set_interval_seconds(interval_seconds_);
  // Polled from the scheduler: samples of the cluster's state.
  data.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
  for (size_t i = counts_taken_; i < counts_.size(); ++i) {
    data.add_worker_count_time_unix_ns(count_times_[i]);
    data.add_worker_count(counts_[i]);
  }
  for (v1::WorkerSeries& series : timeline_.TakeSegment()) {
    if (series.time_unix_ns_size() > 0) *data.add_workers() = std::move(series);
  }
  return data;
}

std::optional<v1::TrackingData> DaskMetricsBackend::TakeTrackingSegment() {
  std::lock_guard<std::mutex> lock(mutex_);
  v1::TrackingData data = UntakenSamples();
  // 12 bytes per poll: the counts stay (StopTracking skips those taken).
  counts_taken_ = counts_.size();
  return data;
}

std::optional<BackendLiveProgress> DaskMetricsBackend::LiveProgress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

absl::StatusOr<v1::TrackingData> DaskMetricsBackend::StopTracking() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!tracking_) return absl::FailedPreconditionError("DaskMetricsBackend is not tracking");
  }
  const int64_t stop_unix_ns = NowUnixNs();  // the tracked window ends here
  // One deadline for everything below: a slow scheduler cannot stretch the run (each wait on
  // it gives up then, see CommOptionsWithEnd).
  end_budget_ =
      options_.end_timeout > absl::ZeroDuration()
          ? options_.end_timeout
          : std::max(absl::Seconds(2), (dask::DeadlineNow() - tracking_start_monotonic_) / 10);
  end_deadline_ns_ = absl::ToUnixNanos(dask::DeadlineNow() + end_budget_);
  StopPollers();
  LastPoll();
  FinalizeEndedSpans();
  {
    std::lock_guard<std::mutex> lock(hb_mutex_);
    if (hb_comm_ != nullptr) hb_comm_->Close();
    hb_comm_.reset();
  }
  if (options_.read_profiles) ReadProfilesAtEnd(stop_unix_ns);
  if (comm_ != nullptr) {
    comm_->Close();
    comm_.reset();
  }

  std::lock_guard<std::mutex> lock(mutex_);
  tracking_ = false;
  if (in_gap_) {
    RecordGap(NowUnixNs());
    AddWarning(absl::StrFormat(
        "Lost the Dask scheduler %s at %s and could not reconnect before the end (%s); the "
        "measurement is partial.",
        options_.scheduler_address, FormatUnixNs(gap_start_unix_ns_), gap_reason_));
    in_gap_ = false;
  }
  v1::TrackingData data = UntakenSamples();
  for (const v1::TrackingGap& gap : gaps_) *data.add_gaps() = gap;
  return data;
}

void DaskMetricsBackend::StopPollers() {
  stop_heartbeat_watcher_.RequestStop();
  poller_.Stop();
  if (heartbeat_poller_.joinable()) heartbeat_poller_.join();
}

void DaskMetricsBackend::LastPoll() {
  if (EndRanOut()) {
    WarnEndCut("the poll in flight when the run ended",
               "the samples since the previous poll are missing (a tracking gap)");
    return;
  }
  next_reconnect_ = -absl::InfiniteDuration();  // one last attempt, even during a gap
  Poll();
  if (EndRanOut()) WarnEndCut("the last poll", "the samples since the previous poll are missing");
}

void DaskMetricsBackend::FinalizeEndedSpans() {
  std::vector<SpanId> to_finalize;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const backends_internal::SpanWindow& window : spans_.All()) {
      if (window.ended && !span_state_[window.id].finalized) to_finalize.push_back(window.id);
    }
  }
  for (const SpanId& id : to_finalize) FinalizeSpan(id);
}

void DaskMetricsBackend::ReadProfilesAtEnd(int64_t stop_unix_ns) {
  if (EndRanOut()) {
    WarnEndCut("the profile fetch", "the workers' profiles were not read");
  } else if (comm_ != nullptr && !comm_->broken()) {
    FetchProfiles(tracking_start_unix_ns_, stop_unix_ns);
  } else {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(
        "The workers' profiles were not read: the Dask scheduler was unreachable at the end of "
        "the run.");
  }
}

}  // namespace roastcoffea
