#include "backends/dask/dask_backend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/dask/key_split.h"
#include "backends/dask/profile_merge.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace {

int64_t NowUnixNs() { return absl::ToUnixNanos(absl::Now()); }

std::string FormatUnixNs(int64_t ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(ns), absl::UTCTimeZone());
}

// Transport failures mean the scheduler is gone (or the stream is unusable): reconnect. A reply
// of an unexpected shape on a healthy connection is not a loss (it is warned about instead).
bool IsConnectionLoss(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

// The `dump_state` exclude list that leaves only per-worker scheduler state
// (docs/dask-protocol.md §4.6).
dask::Value DumpStateWorkersArgs() {
  dask::Value exclude = dask::Value::Array();
  for (const char* name :
       {"tasks", "transition_log", "task_groups", "clients", "events", "extensions", "has_what",
        "needs_what", "actors", "versions", "long_running", "scheduler", "memory", "processing",
        "executing", "bandwidth", "metrics", "extra", "task_prefix_count"}) {
    exclude.Append(dask::Value::Str(name));
  }
  dask::Value args = dask::Value::Map();
  args.Insert(dask::Value::Str("exclude"), std::move(exclude));
  return args;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DaskMetricsBackend>> DaskMetricsBackend::Create(
    DaskBackendOptions options) {
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
  {
    std::lock_guard<std::mutex> lock(poller_mutex_);
    stop_poller_ = true;
  }
  poller_wake_.notify_all();
  poller_.Stop();
  if (heartbeat_poller_.joinable()) heartbeat_poller_.join();
  if (comm_ != nullptr) comm_->Close();
  if (hb_comm_ != nullptr) hb_comm_->Close();
}

dask::CommOptions DaskMetricsBackend::CommOptionsWithEnd() {
  dask::CommOptions comm = options_.comm;
  comm.give_up = [this, run_gives_up = options_.comm.give_up] {
    return (run_gives_up && run_gives_up()) || NowUnixNs() >= end_deadline_ns_.load();
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
  cursor_.StartAt(tracking_start_unix_ns_ / 1e9);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    profiles_.clear();
    tracking_ = true;
    interval_seconds_ = absl::ToDoubleSeconds(interval);
  }
  Poll();
  {
    std::lock_guard<std::mutex> lock(poller_mutex_);
    stop_poller_ = false;
  }
  // The interval was checked above: the poller starts.
  (void)poller_.Start({interval, false}, [this] { Poll(); });
  if (options_.watch_heartbeats) heartbeat_poller_ = std::thread([this] { HeartbeatLoop(); });
  return absl::OkStatus();
}

double DaskMetricsBackend::HeartbeatPeriodNow() const {
  return dask::HeartbeatPeriodSeconds(counts_.empty() ? 1 : counts_.back());
}

std::map<std::string, double> DaskMetricsBackend::IngestHeartbeats(
    std::vector<dask::WorkerSnapshot>& workers, int64_t observed_unix_ns) {
  std::map<std::string, double> last_seen;
  const double period = dask::HeartbeatPeriodSeconds(static_cast<int>(workers.size()));
  for (dask::WorkerSnapshot& w : workers) {
    last_seen[w.address] = w.last_seen_unix_seconds;
    digests_seen_ = digests_seen_ || w.has_digests;
    auto [it, first] = digest_last_seen_.try_emplace(w.address, w.last_seen_unix_seconds);
    // Both pollers read identity: only a later heartbeat is new (each is taken once).
    if (!first && w.last_seen_unix_seconds <= it->second) continue;
    HeartbeatEvent e;
    e.observed_unix_ns = observed_unix_ns;
    e.last_seen = w.last_seen_unix_seconds;
    e.worker = w.address;
    e.missed_before =
        first ? 0 : dask::MissedHeartbeats(w.last_seen_unix_seconds - it->second, period);
    it->second = w.last_seen_unix_seconds;
    e.digests = std::move(w.digests);
    w.digests.clear();
    heartbeats_.push_back(std::move(e));
  }
  return last_seen;
}

absl::StatusOr<dask::SchedulerSnapshot> DaskMetricsBackend::HeartbeatIdentity() {
  if (hb_comm_ == nullptr || hb_comm_->broken()) {
    hb_comm_.reset();
    if (absl::Now() < hb_next_connect_) {
      return absl::UnavailableError("heartbeat connection: waiting to reconnect");
    }
    absl::StatusOr<std::unique_ptr<dask::DaskComm>> comm =
        dask::DaskComm::Connect(address_, CommOptionsWithEnd());
    if (!comm.ok()) {
      hb_next_connect_ = absl::Now() + options_.reconnect_max_backoff;
      return comm.status();
    }
    hb_comm_ = *std::move(comm);
  }
  absl::StatusOr<dask::Value> reply = hb_comm_->Call("identity");
  if (!reply.ok()) return reply.status();
  return dask::ParseIdentity(*reply);
}

absl::StatusOr<dask::CumulativeExecuting> DaskMetricsBackend::ReadCumulative() {
  std::lock_guard<std::mutex> lock(hb_mutex_);
  if (hb_comm_ == nullptr || hb_comm_->broken()) {
    hb_comm_.reset();
    absl::StatusOr<std::unique_ptr<dask::DaskComm>> comm =
        dask::DaskComm::Connect(address_, CommOptionsWithEnd());
    if (!comm.ok()) return comm.status();
    hb_comm_ = *std::move(comm);
  }
  absl::StatusOr<dask::Value> reply =
      hb_comm_->Call("get_cluster_state", dask::ClusterStateRequestArgs());
  if (!reply.ok()) return reply.status();
  return dask::ParseCumulativeExecuting(*reply);
}

void DaskMetricsBackend::HeartbeatLoop() {
  for (;;) {
    double period;
    bool watch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      period = HeartbeatPeriodNow();
      watch = digests_seen_;  // before 2023.4 there is nothing a heartbeat could lose
    }
    // A third of the period, whatever the sampling interval: a late poll still sees every
    // heartbeat, whose digests cover only the time since the previous one (README, "Dask
    // polling").
    const auto wait =
        std::chrono::microseconds(std::max<int64_t>(20000, static_cast<int64_t>(period / 3 * 1e6)));
    {
      std::unique_lock<std::mutex> lock(poller_mutex_);
      if (poller_wake_.wait_for(lock, wait, [this] { return stop_poller_; })) return;
    }
    if (!watch) continue;
    const int64_t asked = NowUnixNs();
    absl::StatusOr<dask::SchedulerSnapshot> snapshot;
    {
      std::lock_guard<std::mutex> lock(hb_mutex_);
      snapshot = HeartbeatIdentity();
    }
    if (!snapshot.ok()) continue;  // the main poller reports losses and bad replies
    std::lock_guard<std::mutex> lock(mutex_);
    IngestHeartbeats(snapshot->workers, asked);
  }
}

void DaskMetricsBackend::EnterGap(const absl::Status& cause) {
  if (comm_ != nullptr) comm_.reset();  // no clean close: the stream is unusable
  if (in_gap_) return;
  in_gap_ = true;
  gap_start_unix_ns_ = last_good_poll_unix_ns_ != 0 ? last_good_poll_unix_ns_ : NowUnixNs();
  gap_reason_ = std::string(cause.message());
  // A peer that breaks again right after each reconnection (a flapping or hostile scheduler)
  // keeps its growing backoff instead of being retried at full speed.
  backoff_ = absl::Now() - last_reconnect_ < absl::Seconds(10)
                 ? std::min(backoff_ * 2, options_.reconnect_max_backoff)
                 : options_.reconnect_initial_backoff;
  next_reconnect_ = absl::Now() + backoff_;
}

void DaskMetricsBackend::Poll() {
  if (comm_ == nullptr) {
    if (absl::Now() < next_reconnect_) return;
    absl::Status s = ConnectAndPrepare();
    if (!s.ok()) {
      if (!in_gap_) {
        EnterGap(s);
      } else {
        backoff_ = std::min(backoff_ * 2, options_.reconnect_max_backoff);
        next_reconnect_ = absl::Now() + backoff_;
      }
      return;
    }
    if (in_gap_) {
      ++reconnects_;
      last_reconnect_ = absl::Now();
      cursor_.ResetForNewScheduler();
      present_workers_.clear();  // a restarted scheduler may have a new worker set
      const int64_t end = NowUnixNs();
      std::lock_guard<std::mutex> lock(mutex_);
      v1::TrackingGap gap;
      gap.set_start_unix_ns(gap_start_unix_ns_);
      gap.set_end_unix_ns(end);
      gap.set_reason(
          absl::StrCat("scheduler ", options_.scheduler_address, " unreachable: ", gap_reason_));
      gaps_.push_back(gap);
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

absl::Status DaskMetricsBackend::PollConnected() {
  const int64_t asked = NowUnixNs();
  absl::StatusOr<dask::Value> reply = comm_->Call("identity");
  if (!reply.ok()) return reply.status();
  const int64_t now = NowUnixNs();
  absl::StatusOr<dask::SchedulerSnapshot> snapshot = dask::ParseIdentity(*reply);
  if (!snapshot.ok()) return snapshot.status();

  std::map<std::string, double> processing;
  std::map<std::string, int64_t> running_by_prefix;  // the processing tasks' prefixes
  if (absl::StatusOr<dask::Value> p = comm_->Call("processing"); p.ok() && p->is_map()) {
    for (size_t i = 0; i < p->size(); ++i) {
      if (p->key(i).is_str())
        processing[p->key(i).text()] = static_cast<double>(p->value(i).size());
      const dask::Value& keys = p->value(i);
      if (!keys.is_array()) continue;
      for (const dask::Value& key : keys.items())
        ++running_by_prefix[EchoedText(dask::KeySplit(key))];
    }
  } else if (!p.ok() && comm_->broken()) {
    return p.status();
  }

  std::map<std::string, double> occupancy;
  if (options_.read_occupancy && occupancy_enabled_) {
    absl::StatusOr<dask::Value> state = comm_->Call("dump_state", DumpStateWorkersArgs());
    if (!state.ok()) {
      if (comm_->broken()) return state.status();
      occupancy_enabled_ = false;
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("Worker occupancy is not measured: dump_state failed (",
                              state.status().message(), ")."));
    } else if (const dask::Value* ws = state->Find("workers"); ws != nullptr && ws->is_map()) {
      for (size_t i = 0; i < ws->size(); ++i) {
        const dask::Value* occ = ws->value(i).Find("occupancy");
        if (ws->key(i).is_str() && occ != nullptr && occ->AsDouble().has_value()) {
          occupancy[ws->key(i).text()] = *occ->AsDouble();
        }
      }
    }
  }

  if (options_.read_spans && spans_enabled_) {
    absl::Status s = ReadWorkloadSpans();
    if (!s.ok()) return s;
  }

  std::vector<dask::TaskRecord> fresh;
  // A tail reply that cannot be joined to what was read is asked again, bigger (task_stream.h).
  for (int attempt = 0; options_.read_task_stream && task_stream_enabled_ && attempt < 16;
       ++attempt) {
    absl::StatusOr<dask::Value> stream =
        comm_->Call("get_task_stream", cursor_.NextRequestArguments(use_start_index_));
    if (!stream.ok()) {
      if (comm_->broken()) return stream.status();
      task_stream_enabled_ = false;
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The task stream is not read: get_task_stream failed (",
                              stream.status().message(), ")."));
      break;
    }
    absl::StatusOr<std::vector<dask::TaskRecord>> records = dask::ParseTaskStream(*stream);
    if (!records.ok()) {
      task_stream_enabled_ = false;
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The task stream is not read: ", records.status().message()));
      break;
    }
    std::optional<int64_t> index_after;
    if (use_start_index_) {
      index_after = cursor_.next_index() + static_cast<int64_t>(records->size());
    }
    fresh = cursor_.Accept(*std::move(records), index_after);
    if (!cursor_.needs_retry()) break;
  }
  if (cursor_.overran()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(
        "The scheduler's task stream turned over its buffer between two polls: some task "
        "records (and their task-stream fine metrics) are missing.");
  }

  std::set<std::string> now_present;
  std::lock_guard<std::mutex> lock(mutex_);
  UpdateLiveProgress(snapshot->workers, running_by_prefix, fresh);
  IngestHeartbeats(snapshot->workers, asked);
  count_times_.push_back(now);
  counts_.push_back(static_cast<int32_t>(snapshot->workers.size()));
  for (dask::WorkerSnapshot& w : snapshot->workers) {
    now_present.insert(w.address);
    auto [it, inserted] = workers_.try_emplace(w.address);
    WorkerTrack& track = it->second;
    if (inserted) {
      worker_order_.push_back(w.address);
      track.host = w.host;
      if (!first_identity_) {
        AddWarning(
            absl::StrCat("Dask worker ", w.address, " joined mid-run at ", FormatUnixNs(now), "."));
      }
    } else if (!present_workers_.empty() && present_workers_.count(w.address) == 0 &&
               !first_identity_) {
      AddWarning(absl::StrCat("Dask worker ", w.address, " came back at ", FormatUnixNs(now), "."));
    }
    if (w.last_seen_unix_seconds == track.last_seen) continue;  // stale heartbeat
    track.last_seen = w.last_seen_unix_seconds;
    track.name = w.name;
    if (!w.host.empty()) track.host = w.host;
    track.nthreads = w.nthreads;
    track.memory_limit_bytes = w.memory_limit_bytes;
    track.sampled = true;
    dask::WorkerTimeline::Extra extra;
    auto p = processing.find(w.address);
    extra.active_tasks = p != processing.end() ? p->second : w.worker_side_active_tasks;
    if (auto o = occupancy.find(w.address); o != occupancy.end()) {
      extra.occupancy_seconds = o->second;
    }
    timeline_.Append(now, w, extra);
  }
  for (const std::string& gone : present_workers_) {
    if (now_present.count(gone) == 0) {
      AddWarning(absl::StrCat("Dask worker ", gone, " left mid-run (gone from the scheduler at ",
                              FormatUnixNs(now), ")."));
    }
  }
  present_workers_ = std::move(now_present);
  first_identity_ = false;
  for (dask::TaskRecord& r : fresh) records_.push_back(std::move(r));
  last_good_poll_unix_ns_ = now;
  return absl::OkStatus();
}

void DaskMetricsBackend::UpdateLiveProgress(const std::vector<dask::WorkerSnapshot>& workers,
                                            const std::map<std::string, int64_t>& running_by_prefix,
                                            const std::vector<dask::TaskRecord>& fresh) {
  live_.workers = static_cast<int64_t>(workers.size());
  live_.cores = live_.memory_bytes = live_.memory_limit_bytes = 0;
  for (const dask::WorkerSnapshot& w : workers) {
    *live_.cores += w.nthreads;
    *live_.memory_bytes += w.memory_bytes;
    *live_.memory_limit_bytes += w.memory_limit_bytes;
  }
  for (auto& [prefix, counts] : live_.tasks_by_prefix) counts.running = 0;
  for (const auto& [prefix, running] : running_by_prefix) {
    live_.tasks_by_prefix[prefix].running = running;
  }
  for (const dask::TaskRecord& r : fresh) {
    ++(r.status == "error" ? live_.tasks_by_prefix[r.prefix].failed
                           : live_.tasks_by_prefix[r.prefix].done);
  }
}

std::optional<v1::TrackingData> DaskMetricsBackend::TakeTrackingSegment() {
  std::lock_guard<std::mutex> lock(mutex_);
  v1::TrackingData data;
  data.set_backend("dask");
  data.set_interval_seconds(interval_seconds_);
  data.set_worker_count_kind(v1::SERIES_KIND_SAMPLED);
  for (size_t i = counts_taken_; i < counts_.size(); ++i) {
    data.add_worker_count_time_unix_ns(count_times_[i]);
    data.add_worker_count(counts_[i]);
  }
  // 12 bytes per poll: the counts stay (StopTracking skips those taken).
  counts_taken_ = counts_.size();
  for (v1::WorkerSeries& series : timeline_.TakeSegment()) {
    if (series.time_unix_ns_size() > 0) *data.add_workers() = std::move(series);
  }
  return data;
}

std::optional<BackendLiveProgress> DaskMetricsBackend::LiveProgress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

absl::Status DaskMetricsBackend::ReadWorkloadSpans() {
  auto turn_off = [&](absl::string_view why) {
    spans_enabled_ = false;
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("The workload's Dask spans are not read: ", why, "."));
  };
  absl::StatusOr<dask::Value> reply = comm_->Call("dump_state", dask::TaskGroupsRequestArgs());
  if (!reply.ok()) {
    if (comm_->broken()) return reply.status();
    turn_off(absl::StrCat("dump_state failed (", reply.status().message(), ")"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<dask::TaskGroupSpan>> groups = dask::ParseTaskGroups(*reply);
  if (!groups.ok()) {
    turn_off(groups.status().message());
    return absl::OkStatus();
  }
  // Task groups without span ids: distributed < 2023.6, which has no spans.
  if (!groups->empty() && groups->front().span_id.empty()) {
    spans_enabled_ = false;
    return absl::OkStatus();
  }
  std::vector<std::string> fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fresh = workload_spans_.AddGroups(*groups);
  }
  if (fresh.empty()) return absl::OkStatus();
  // A new span: its name and parents, while its tasks are alive.
  absl::StatusOr<dask::Value> tasks = comm_->Call("dump_state", dask::TaskAnnotationsRequestArgs());
  if (!tasks.ok()) {
    if (comm_->broken()) return tasks.status();
    turn_off(absl::StrCat("dump_state failed (", tasks.status().message(), ")"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::map<std::string, dask::SpanPath>> paths = dask::ParseTaskSpanPaths(*tasks);
  if (!paths.ok()) {
    turn_off(paths.status().message());
    return absl::OkStatus();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  workload_spans_.AddPaths(*paths);
  return absl::OkStatus();
}

absl::StatusOr<v1::TrackingData> DaskMetricsBackend::StopTracking() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!tracking_) return absl::FailedPreconditionError("DaskMetricsBackend is not tracking");
  }
  const int64_t stop_unix_ns = NowUnixNs();  // the tracked window ends here
  // One deadline for everything below: a slow scheduler cannot stretch the run (each wait on
  // it gives up then, see CommOptionsWithEnd).
  end_budget_ = options_.end_timeout > absl::ZeroDuration()
                    ? options_.end_timeout
                    : std::max(absl::Seconds(2),
                               absl::Nanoseconds(stop_unix_ns - tracking_start_unix_ns_) / 10);
  end_deadline_ns_ = stop_unix_ns + absl::ToInt64Nanoseconds(end_budget_);
  {
    std::lock_guard<std::mutex> lock(poller_mutex_);
    stop_poller_ = true;
  }
  poller_wake_.notify_all();
  poller_.Stop();
  if (heartbeat_poller_.joinable()) heartbeat_poller_.join();
  if (EndRanOut()) {
    WarnEndCut("the poll in flight when the run ended",
               "the samples since the previous poll are missing (a tracking gap)");
  } else {
    next_reconnect_ = absl::InfinitePast();  // one last attempt, even during a gap
    Poll();
    if (EndRanOut()) {
      WarnEndCut("the last poll", "the samples since the previous poll are missing");
    }
  }
  std::vector<SpanId> to_finalize;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const backends_internal::SpanWindow& window : spans_.All()) {
      if (window.ended && !span_state_[window.id].finalized) to_finalize.push_back(window.id);
    }
  }
  for (const SpanId& id : to_finalize) FinalizeSpan(id);
  {
    std::lock_guard<std::mutex> lock(hb_mutex_);
    if (hb_comm_ != nullptr) hb_comm_->Close();
    hb_comm_.reset();
  }
  if (options_.read_profiles) {
    if (EndRanOut()) {
      WarnEndCut("the profile fetch", "the workers' profiles were not read");
    } else if (comm_ != nullptr && !comm_->broken()) {
      FetchProfiles(tracking_start_unix_ns_, stop_unix_ns);
    } else {
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(
          "The workers' profiles were not read: the Dask scheduler was unreachable at "
          "the end of the run.");
    }
  }
  if (comm_ != nullptr) {
    comm_->Close();
    comm_.reset();
  }

  std::lock_guard<std::mutex> lock(mutex_);
  tracking_ = false;
  if (in_gap_) {
    const int64_t end = NowUnixNs();
    v1::TrackingGap gap;
    gap.set_start_unix_ns(gap_start_unix_ns_);
    gap.set_end_unix_ns(end);
    gap.set_reason(
        absl::StrCat("scheduler ", options_.scheduler_address, " unreachable: ", gap_reason_));
    gaps_.push_back(gap);
    AddWarning(absl::StrFormat(
        "Lost the Dask scheduler %s at %s and could not reconnect before the end (%s); the "
        "measurement is partial.",
        options_.scheduler_address, FormatUnixNs(gap_start_unix_ns_), gap_reason_));
    in_gap_ = false;
  }

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
  for (const v1::TrackingGap& gap : gaps_) *data.add_gaps() = gap;
  return data;
}

absl::StatusOr<std::map<std::string, v1::Profile>> DaskMetricsBackend::FetchProfileSet(
    const std::vector<std::string>& workers, const std::string& prefix, int64_t start_ns,
    int64_t stop_ns, absl::Time deadline) {
  auto call = [&](const std::vector<std::string>& asked)
      -> absl::StatusOr<std::vector<dask::WorkerProfileTree>> {
    dask::Value list = dask::Value::Array();
    for (const std::string& w : asked) list.Append(dask::Value::Str(w));
    dask::Value args = dask::Value::Map();
    args.Insert(dask::Value::Str("workers"), std::move(list));
    args.Insert(dask::Value::Str("merge_workers"), dask::Value::Bool(false));
    args.Insert(dask::Value::Str("start"), dask::Value::Float(start_ns / 1e9));
    args.Insert(dask::Value::Str("stop"), dask::Value::Float(stop_ns / 1e9));
    if (!prefix.empty()) args.Insert(dask::Value::Str("key"), dask::Value::Str(prefix));
    absl::StatusOr<dask::Value> reply = comm_->Call("profile", args, deadline);
    if (!reply.ok()) return reply.status();
    // Dask's counts as sent: restored in FetchProfiles, where the per-prefix trees are known.
    dask::ProfileConversionOptions raw = options_.profile_conversion;
    raw.restore_innermost_counts = false;
    return dask::ConvertPerWorkerProfiles(*reply, raw);
  };
  std::map<std::string, v1::Profile> out;
  absl::StatusOr<std::vector<dask::WorkerProfileTree>> all = call(workers);
  if (!all.ok()) return all.status();
  if (all->size() == workers.size()) {
    for (dask::WorkerProfileTree& t : *all) out[t.worker] = std::move(t.profile);
    return out;
  }
  // Fewer trees than workers: the scheduler drops the workers that failed to answer and then
  // zips the remaining trees with the first addresses (get_profile, distributed 2022.12), so
  // the keys cannot be trusted. Each worker alone is unambiguous: {address: tree} or {}.
  std::vector<std::string> missing;
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string& w = workers[i];
    if (absl::Now() >= deadline) {
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The profiles",
                              prefix.empty() ? "" : " of task prefix '" + prefix + "'", " of ",
                              workers.size() - i, " of ", workers.size(),
                              " Dask workers were not read: the profile fetch ran out of its ",
                              absl::FormatDuration(options_.profile_fetch_timeout), "."));
      break;
    }
    absl::StatusOr<std::vector<dask::WorkerProfileTree>> one = call({w});
    if (!one.ok()) {
      if (comm_->broken()) return one.status();
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The profile of Dask worker ", w,
                              " was not read: ", one.status().message()));
      continue;
    }
    if (one->size() == 1 && (*one)[0].worker == w) {
      out[w] = std::move((*one)[0].profile);
    } else {
      missing.push_back(w);
    }
  }
  if (!missing.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("No profile", prefix.empty() ? "" : " of task prefix '" + prefix + "'",
                            " from Dask worker(s) ", absl::StrJoin(missing, ", "),
                            " (it failed to answer the scheduler or left)."));
  }
  return out;
}

std::vector<std::string> DaskMetricsBackend::PrefixesSeen(int64_t start_ns, int64_t stop_ns) {
  // The prefixes that matter for a profile: those whose tasks computed longest in the window.
  std::map<std::string, double> compute_seconds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const double t0 = start_ns / 1e9, t1 = stop_ns / 1e9;
    for (const dask::TaskRecord& r : records_) {
      for (const dask::StartStop& ss : r.startstops) {
        const double overlap =
            std::min(ss.stop_unix_seconds, t1) - std::max(ss.start_unix_seconds, t0);
        if (overlap >= 0) {
          // Every prefix seen counts, even with no compute time (then ranked last).
          double& seconds = compute_seconds[r.prefix];
          if (ss.action == "compute") seconds += overlap;
        }
      }
    }
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (auto& [prefix, seconds] : compute_seconds) ranked.emplace_back(-seconds, prefix);
  std::sort(ranked.begin(), ranked.end());  // longest first, then by name
  const size_t keep =
      std::min(ranked.size(), static_cast<size_t>(std::max(0, options_.max_auto_profile_prefixes)));
  if (keep < ranked.size()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("Per-prefix profiles were read for the ", keep,
                            " task prefixes with the most compute time of the ", ranked.size(),
                            " seen."));
  }
  std::vector<std::string> prefixes;
  for (size_t i = 0; i < keep; ++i) prefixes.push_back(std::move(ranked[i].second));
  return prefixes;
}

void DaskMetricsBackend::FetchProfiles(int64_t start_ns, int64_t stop_ns) {
  std::vector<std::string> asked;  // workers present at the last poll, in first-seen order
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& w : worker_order_) {
      if (present_workers_.count(w) > 0) asked.push_back(w);
    }
  }
  if (asked.empty()) return;
  dask::MsgpackLimits limits = comm_->msgpack_limits();
  limits.max_depth = std::max(limits.max_depth, options_.profile_max_msgpack_depth);
  comm_->set_msgpack_limits(limits);

  std::vector<std::string> prefixes = {""};
  for (const std::string& prefix : options_.profile_task_prefixes) {
    if (prefix != "*") {
      if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) {
        prefixes.push_back(prefix);
      }
      continue;
    }
    for (std::string& seen : PrefixesSeen(start_ns, stop_ns)) {
      if (std::find(prefixes.begin(), prefixes.end(), seen) == prefixes.end()) {
        prefixes.push_back(std::move(seen));
      }
    }
  }
  // One bounded phase: every call below ends by this deadline (or when the run gives up).
  // The end of tracking's deadline (StopTracking) comes first when it is earlier.
  const absl::Time deadline =
      std::min(absl::Now() + options_.profile_fetch_timeout, end_deadline());
  std::vector<std::pair<std::string, std::map<std::string, v1::Profile>>> sets;
  for (size_t k = 0; k < prefixes.size(); ++k) {
    const std::string& prefix = prefixes[k];
    if (EndRanOut()) {
      WarnEndCut(
          "the profile fetch",
          absl::StrCat("the workers' profiles of ", prefixes.size() - k, " of ", prefixes.size(),
                       " profile sets (all tasks, then one per task prefix) were not read"));
      break;
    }
    if (absl::Now() >= deadline) {
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The workers' profiles of ", prefixes.size() - k, " of ",
                              prefixes.size(),
                              " profile sets (all tasks, then one per task prefix) were not "
                              "read: the profile fetch ran out of its ",
                              absl::FormatDuration(options_.profile_fetch_timeout), "."));
      break;
    }
    absl::StatusOr<std::map<std::string, v1::Profile>> set =
        FetchProfileSet(asked, prefix, start_ns, stop_ns, deadline);
    if (!set.ok() && EndRanOut()) {
      WarnEndCut(
          "the profile fetch",
          absl::StrCat("the workers' profiles of ", prefixes.size() - k, " of ", prefixes.size(),
                       " profile sets (all tasks, then one per task prefix) were not read"));
      break;
    }
    if (!set.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool ran_out = absl::IsDeadlineExceeded(set.status()) && absl::Now() >= deadline;
      AddWarning(
          absl::StrCat("The workers' profiles",
                       prefix.empty() ? "" : " of task prefix '" + prefix + "'", " were not read: ",
                       ran_out ? absl::StrCat("the profile fetch ran out of its ",
                                              absl::FormatDuration(options_.profile_fetch_timeout),
                                              " (", set.status().message(), ")")
                               : std::string(set.status().message())));
      if (comm_->broken()) break;
      continue;
    }
    sets.emplace_back(prefix, *std::move(set));
  }
  const dask::ProfileConversionOptions& conversion = options_.profile_conversion;
  // The all-tasks tree (prefix "") is rebuilt from the per-prefix ones read with it: restored
  // per prefix instead of under Dask's one frame that runs every task (dask/profile_merge.h).
  if (!sets.empty() && sets.front().first.empty() && sets.size() > 1 &&
      options_.rebuild_whole_worker_profiles) {
    for (auto& [worker, all] : sets.front().second) {
      std::vector<const v1::Profile*> parts;
      for (size_t k = 1; k < sets.size(); ++k) {
        auto it = sets[k].second.find(worker);
        if (it != sets[k].second.end()) parts.push_back(&it->second);
      }
      if (parts.size() + 1 < sets.size()) continue;  // a prefix's tree is missing: keep Dask's
      v1::Profile rebuilt = dask::WholeWorkerFromPrefixes(
          all, parts, conversion.restore_innermost_counts, conversion.estimate_innermost_counts);
      rebuilt.set_source(all.source());
      all = std::move(rebuilt);
    }
  }
  for (auto& [prefix, set] : sets) {
    for (auto& [worker, tree] : set) {
      if (conversion.restore_innermost_counts && !tree.rebuilt_from_task_prefixes()) {
        dask::RestoreInnermostCounts(tree, conversion.estimate_innermost_counts);
      }
    }
  }
  std::vector<v1::Profile> fetched;
  for (auto& [prefix, set] : sets) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& w : asked) {
      auto it = set.find(w);
      if (it == set.end()) continue;
      v1::Profile& p = it->second;
      p.set_worker(w);
      p.set_task_prefix(prefix);
      p.set_sampling_interval_seconds(options_.profile_interval_seconds);
      p.set_start_unix_ns(start_ns);
      p.set_end_unix_ns(stop_ns);
      // What the last identity said about the worker.
      auto track = workers_.find(w);
      if (track != workers_.end()) {
        p.set_host(track->second.host);
        if (track->second.sampled) {
          p.set_worker_name(track->second.name);
          p.set_threads(static_cast<int32_t>(std::lround(track->second.nthreads)));
          p.set_memory_limit_bytes(std::llround(track->second.memory_limit_bytes));
        }
      }
      fetched.push_back(std::move(p));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  profiles_ = std::move(fetched);
}

std::vector<v1::Profile> DaskMetricsBackend::TakeProfiles(
    absl::Span<const v1::ChunkRecord> /*chunks*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<v1::Profile> out;
  out.swap(profiles_);
  return out;
}

absl::StatusOr<SpanId> DaskMetricsBackend::CreateSpan(absl::string_view name) {
  absl::StatusOr<backends_internal::SpanWindow> opened = spans_.Open(name, absl::Now());
  if (!opened.ok()) return opened.status();
  const SpanId id = opened->id;
  bool tracking;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    span_state_[id];
    tracking = tracking_;
  }
  if (tracking && options_.recover_lost_digests) {
    // The lossless baseline of the span's execute seconds (see FinalizeSpan).
    absl::StatusOr<dask::CumulativeExecuting> cumulative = ReadCumulative();
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_[id];
    if (cumulative.ok()) {
      span.start_cumulative = *std::move(cumulative);
    } else {
      span.start_cumulative_error = std::string(cumulative.status().message());
    }
  }
  return id;
}

absl::Status DaskMetricsBackend::EndSpan(const SpanId& id) {
  return spans_.Close(id, absl::Now()).status();
}

bool DaskMetricsBackend::InSpan(const backends_internal::SpanWindow& window, const SpanState& span,
                                const HeartbeatEvent& e) const {
  if (e.observed_unix_ns <= absl::ToUnixNanos(window.start)) return false;
  // A heartbeat carries what ran since the previous one: the span's last is the first one a
  // worker sent after the span's end.
  auto closing = span.closing_last_seen.find(e.worker);
  if (closing != span.closing_last_seen.end()) return e.last_seen <= closing->second;
  return e.observed_unix_ns <= absl::ToUnixNanos(window.end);
}

void DaskMetricsBackend::FinalizeSpan(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return;
  const int64_t end_ns = absl::ToUnixNanos(window->end);
  double period;
  bool watch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_.at(id);
    if (span.finalized) return;
    period = HeartbeatPeriodNow();
    watch = digests_seen_;
    if (!watch) span.finalized = true;  // nothing a heartbeat could carry (< 2023.4)
  }
  if (!watch) return;

  // 1. One more heartbeat of every worker, sent after the end: the first one newer than what a
  // poll that started after the end saw (clock-free: no comparison with the scheduler's clock).
  const absl::Duration timeout = options_.final_heartbeat_timeout > absl::ZeroDuration()
                                     ? options_.final_heartbeat_timeout
                                     : std::max(absl::Seconds(2), absl::Seconds(3 * period));
  // Within the end of tracking's deadline when StopTracking finalizes the span.
  const absl::Time deadline = std::min(absl::Now() + timeout, end_deadline());
  std::optional<std::map<std::string, double>> baseline;
  std::map<std::string, double> closing;
  std::vector<std::string> waiting;
  for (;;) {
    const int64_t asked = NowUnixNs();
    absl::StatusOr<dask::SchedulerSnapshot> snapshot;
    {
      std::lock_guard<std::mutex> lock(hb_mutex_);
      hb_next_connect_ = absl::InfinitePast();
      snapshot = HeartbeatIdentity();
    }
    if (snapshot.ok()) {
      std::map<std::string, double> seen;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        seen = IngestHeartbeats(snapshot->workers, asked);
      }
      if (!baseline.has_value()) {
        if (asked >= end_ns) baseline = seen;
      } else {
        waiting.clear();
        for (const auto& [worker, before] : *baseline) {
          auto now = seen.find(worker);
          if (now == seen.end() || closing.count(worker) > 0) continue;  // left, or done
          if (now->second > before) {
            closing[worker] = now->second;
          } else {
            waiting.push_back(worker);
          }
        }
        if (waiting.empty()) break;
      }
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(std::clamp(period * 100, 10.0, 50.0)));
  }

  // 2. The lossless totals, and what the digests missed.
  std::optional<dask::CumulativeExecuting> start_cumulative;
  std::string cumulative_error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SpanState& span = span_state_.at(id);
    span.closing_last_seen = closing;
    start_cumulative = span.start_cumulative;
    cumulative_error = span.start_cumulative_error;
  }
  std::optional<dask::CumulativeExecuting> end_cumulative;
  if (options_.recover_lost_digests && start_cumulative.has_value() && EndRanOut()) {
    cumulative_error = "the end of tracking ran out of time";
  } else if (options_.recover_lost_digests && start_cumulative.has_value()) {
    absl::StatusOr<dask::CumulativeExecuting> c = ReadCumulative();
    if (c.ok()) {
      end_cumulative = *std::move(c);
    } else {
      cumulative_error = std::string(c.status().message());
    }
  } else if (!options_.recover_lost_digests) {
    cumulative_error = "recovery turned off";
  }

  if (EndRanOut()) {
    WarnEndCut(absl::StrCat("finishing span '", window->name, "'"),
               "its last heartbeats or cumulative totals may be missing (said below)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  SpanState& span = span_state_.at(id);
  span.finalized = true;
  if (!waiting.empty() || !baseline.has_value()) {
    AddWarning(absl::StrFormat(
        "No heartbeat after the end of span '%s' from Dask worker(s) %s within %s: what they "
        "ran just before the end is missing from the fine metrics unless restored below.",
        window->name,
        baseline.has_value() ? absl::StrJoin(waiting, ", ") : "(scheduler unreachable)",
        absl::FormatDuration(timeout)));
  }
  int seen_heartbeats = 0, missed = 0;
  dask::DigestTotals seen;
  for (const HeartbeatEvent& e : heartbeats_) {
    if (!InSpan(*window, span, e)) continue;
    ++seen_heartbeats;
    missed += e.missed_before;
    for (const dask::DigestEntry& d : e.digests) {
      seen[{d.context, d.task_prefix, d.activity, d.unit, e.worker}] += d.value;
    }
  }
  // Digests can only be lost with a heartbeat: one missed between polls, or the closing one
  // never seen. Without either, a difference from the cumulative totals is their lag behind
  // the digests (timing, rounding), not lost data: nothing is restored, nothing reported.
  const bool heartbeat_missed = missed > 0 || !waiting.empty() || !baseline.has_value();
  if (end_cumulative.has_value() && heartbeat_missed) {
    dask::Recovery r = dask::RecoverLostDigests(seen, *start_cumulative, *end_cumulative);
    span.recovered = r.added;
    if (r.recovered_seconds > 0) {
      std::vector<std::string> by_prefix;
      for (const auto& [prefix, seconds] : r.recovered_by_prefix) {
        by_prefix.push_back(absl::StrFormat("%s %.3f s", prefix, seconds));
      }
      std::string message = absl::StrFormat(
          "Dask fine metrics of span '%s': %d worker heartbeat(s) were missed (%d seen); "
          "%.3f s of the %.3f s of task execution (%.1f %%) were restored from the workers' "
          "cumulative totals (get_cluster_state): %s. Their split over activities (thread-cpu, "
          "...) is estimated from the heartbeats seen%s; other contexts (get-data, gather-dep) "
          "of the missed heartbeats stay missing.",
          window->name, missed, seen_heartbeats, r.recovered_seconds, r.cumulative_seconds,
          r.cumulative_seconds > 0 ? 100 * r.recovered_seconds / r.cumulative_seconds : 0,
          absl::StrJoin(by_prefix, ", "),
          r.unattributed_seconds > 0
              ? absl::StrFormat(" (%.3f s with no split seen: activity 'unattributed')",
                                r.unattributed_seconds)
              : "");
      AddWarning(message);
      v1::Warning w;
      w.set_code("dask_fine_metrics_recovered");
      w.set_message(message);
      measurement_warnings_.push_back(std::move(w));
    }
  } else if (missed > 0) {
    std::string message = absl::StrFormat(
        "Dask fine metrics of span '%s' undercount: %d of %d worker heartbeats were missed "
        "(about %.1f %% of the digests lost) and could not be restored (%s).",
        window->name, missed, missed + seen_heartbeats, 100.0 * missed / (missed + seen_heartbeats),
        cumulative_error.empty() ? "no cumulative totals" : cumulative_error);
    AddWarning(message);
    v1::Warning w;
    w.set_code("dask_fine_metrics_lost");
    w.set_message(message);
    measurement_warnings_.push_back(std::move(w));
  }
}

absl::StatusOr<v1::Span> DaskMetricsBackend::GetSpanMetrics(const SpanId& id) {
  absl::StatusOr<backends_internal::SpanWindow> window = spans_.Ended(id);
  if (!window.ok()) return window.status();
  bool finalize = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finalize = tracking_ && !span_state_.at(id).finalized;
  }
  if (finalize) FinalizeSpan(id);
  std::lock_guard<std::mutex> lock(mutex_);
  const SpanState& state = span_state_.at(id);
  const int64_t start_ns = absl::ToUnixNanos(window->start);
  const int64_t end_ns = absl::ToUnixNanos(window->end);
  const double t0 = start_ns / 1e9, t1 = end_ns / 1e9;
  // (context, prefix, activity, unit, worker) -> value; std::map keeps the output sorted.
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, double>
      totals;
  dask::StreamGroups stream_groups;  // of the tasks that ran in the window
  for (const dask::TaskRecord& r : records_) {
    for (const dask::StartStop& ss : r.startstops) {
      const double overlap =
          std::min(ss.stop_unix_seconds, t1) - std::max(ss.start_unix_seconds, t0);
      if (overlap > 0) {
        totals[{"task-stream", r.prefix, ss.action, "seconds", r.worker}] += overlap;
        stream_groups[r.prefix].insert(dask::TaskGroupOfKey(r.key));
      }
    }
    if (r.last_stop_unix_seconds >= t0 && r.last_stop_unix_seconds <= t1) {
      const bool erred = r.status == "error";
      totals[{"task-stream", r.prefix, erred ? "erred-tasks" : "tasks", "count", r.worker}] += 1;
      if (!erred) totals[{"task-stream", r.prefix, "output", "bytes", r.worker}] += r.nbytes;
    }
  }
  for (const HeartbeatEvent& e : heartbeats_) {
    if (!InSpan(*window, state, e)) continue;
    for (const dask::DigestEntry& d : e.digests) {
      totals[{d.context, d.task_prefix, d.activity, d.unit, e.worker}] += d.value;
    }
  }
  for (const auto& [key, value] : state.recovered) totals[key] += value;
  v1::Span span;
  span.set_name(window->name);
  span.set_id(id);
  span.set_start_unix_ns(start_ns);
  span.set_end_unix_ns(end_ns);
  for (const auto& [key, value] : totals) {
    v1::FineMetric* m = span.add_metrics();
    m->set_context(std::get<0>(key));
    m->set_task_prefix(std::get<1>(key));
    m->set_activity(std::get<2>(key));
    m->set_unit(std::get<3>(key));
    m->set_worker(std::get<4>(key));
    m->set_value(value);
  }
  span.set_kind(v1::SPAN_KIND_COLLECT_WINDOW);
  std::map<std::string, std::vector<std::string>> shared;  // ambiguous prefix -> span names
  for (v1::Span& workload : workload_spans_.Attribute(span, stream_groups)) {
    for (const std::string& prefix : workload.ambiguous_task_prefixes()) {
      shared[prefix].push_back(workload.name_path_size() > 0
                                   ? absl::StrJoin(workload.name_path(), "/")
                                   : workload.name());
    }
    *span.add_workload_spans() = std::move(workload);
  }
  // A span shorter than the poll interval: its groups were never polled, but its tasks are in
  // the task stream. Its prefix's figures in the spans seen include them (marked ambiguous).
  const dask::StreamGroups unseen = workload_spans_.UnseenGroups(stream_groups);
  if (!unseen.empty()) {
    std::vector<std::string> parts;
    for (const auto& [prefix, groups] : unseen) {
      std::vector<std::string> listed(groups.begin(), groups.end());
      if (listed.size() > 5) {
        listed.resize(5);
        listed.push_back("...");
      }
      parts.push_back(absl::StrCat(
          prefix, " (task group(s) ", absl::StrJoin(listed, ", "), "; spans giving it: ",
          shared.count(prefix) > 0 ? absl::StrJoin(shared[prefix], ", ") : std::string("none"),
          ")"));
    }
    v1::Warning w;
    w.set_code("dask_span_missed");
    w.set_message(absl::StrCat(
        "A Dask span shorter than the poll interval was probably missed: tasks of these "
        "prefixes ran in task groups no poll saw, so each span given the prefix also holds "
        "those tasks (marked ambiguous): ",
        absl::StrJoin(parts, "; "), ". A shorter --interval sees shorter spans."));
    AddWarning(w.message());
    measurement_warnings_.push_back(std::move(w));
    for (const auto& [prefix, groups] : unseen) shared.erase(prefix);  // said once, here
  }
  if (!shared.empty()) {
    std::vector<std::string> parts;
    for (const auto& [prefix, names] : shared) {
      parts.push_back(absl::StrCat(prefix, " (", absl::StrJoin(names, ", "), ")"));
    }
    AddWarning(absl::StrCat(
        "Task prefixes that ran in several Dask spans cannot be split between them without "
        "pickle: each of those spans shows the prefix's totals (marked ambiguous): ",
        absl::StrJoin(parts, "; "), "."));
  }
  return span;
}

}  // namespace roastcoffea
