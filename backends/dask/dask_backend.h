// DaskMetricsBackend: tracks a running Dask cluster through its scheduler, read-only, in C++.
//
// Tracking: a poller thread calls, every interval, `identity` (per-worker memory, memory limit,
// threads, CPU, managed/spilled bytes, network and disk rates, last_seen, task counts),
// `processing` (active tasks per worker, the scheduler's view) and `dump_state` restricted to
// workers (occupancy; turned off with a warning if the scheduler refuses it). A worker's sample
// is appended only when its `last_seen` changed, so a stale heartbeat is never counted twice.
// The worker count is sampled at every poll. Workers that join or leave mid-run get series
// that start or end there, and a warning (Contribute).
//
// Fine metrics: StartTracking installs the scheduler's task stream; each poll reads the new
// records incrementally (never capped; see task_stream.h). A span [CreateSpan, EndSpan] gets,
// per worker and task prefix (Dask's key_split), the seconds of every startstop action
// (context "task-stream": compute, transfer, disk-read, disk-write, deserialize, ...) clipped
// to the window, plus counts of finished and erred tasks and their output bytes; on
// distributed ≥ 2023.4 the per-heartbeat `digests_total_since_heartbeat` (context "execute",
// activities thread-cpu, thread-noncpu, ...) are accumulated too.
//
// Workload spans (spans.h): each poll also reads the task groups' span ids, and the names of
// new spans from the live tasks' annotations. GetSpanMetrics returns the window's span (kind
// SPAN_KIND_COLLECT_WINDOW) with the workload's spans that ran in it nested in
// Span.workload_spans, each with the window's metrics of its task prefixes (prefixes that ran
// in several spans are marked ambiguous, and said once in a warning).
//
// Heartbeats (digest_recovery.h): those digests hold only what happened since the worker's
// previous heartbeat, so a second thread on its own connection polls `identity` at a third of
// the heartbeat period (no task-stream or profile reply can delay it) and counts the heartbeats
// it still skipped. A span reads `get_cluster_state`'s cumulative executing seconds at its
// start and end; at its end it first waits (bounded) for one more heartbeat of every worker.
// What the cumulative totals exceed the seen digests by is added back (the activity split is
// estimated) and said in a warning; without a cumulative source the skipped heartbeats are.
//
// Profiles: at StopTracking (before closing) the backend asks the scheduler's `profile` op for
// each worker's statistical profile over the tracked window (`merge_workers: false`, `start`
// and `stop` in epoch seconds), and once more per task prefix of profile_task_prefixes (`key`).
// Workers keep one tree per profile cycle (1 s) for the last hour only, so the window is
// rounded out to whole cycles and a run longer than an hour gets its last hour. The sampling
// interval (distributed.worker.profile.interval) is not reported by any read-only op: it is
// the option profile_interval_seconds (Dask's default, 10 ms). A failed fetch is a warning.
//
// The end: StopTracking returns within end_timeout (default max(2 s, 10 % of the tracked
// time), plus up to 0.1 s) however slowly the scheduler answers; what was cut short is a
// warning.
//
// Faults: when the scheduler cannot be reached the backend keeps what it has, records a
// v1::TrackingGap, retries with exponential backoff, and says so in a warning; a restarted
// scheduler is picked up (its task stream is re-installed).
//
// Thread-safety: drive from one thread (AbstractMetricsBackend). Cost per poll: three small
// RPCs (identity reply ≈ 0.8 KiB per worker) plus the new task-stream records.
#ifndef ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_H_
#define ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/dask/cluster_state.h"
#include "backends/dask/comm.h"
#include "backends/dask/digest_recovery.h"
#include "backends/dask/identity.h"
#include "backends/dask/profile.h"
#include "backends/dask/spans.h"
#include "backends/dask/task_stream.h"
#include "backends/dask/worker_timeline.h"
#include "backends/internal/periodic_thread.h"
#include "backends/internal/span_registry.h"
#include "backends/metrics_backend.h"
#include "host/clock.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct DaskBackendOptions {
  // tcp://HOST:PORT of the scheduler.
  std::string scheduler_address = "tcp://127.0.0.1:8786";
  dask::CommOptions comm;
  // Reconnection after a scheduler loss: first wait, doubled per failure up to the maximum.
  absl::Duration reconnect_initial_backoff = absl::Milliseconds(200);
  absl::Duration reconnect_max_backoff = absl::Seconds(5);
  // Read the task stream (fine metrics).
  bool read_task_stream = true;
  // Read per-worker occupancy through dump_state (a debugging op; costlier on huge clusters).
  bool read_occupancy = true;
  // Read the workload's own spans (distributed ≥ 2023.6; see dask/spans.h): every poll asks
  // dump_state for the task groups (about 300 B each), and once per new span for the live
  // tasks' annotations (about 250 B per task).
  bool read_spans = true;
  // Read per-worker statistical profiles over the tracked window at StopTracking.
  bool read_profiles = true;
  // For each task prefix (Dask's key_split, e.g. "process"), one more per-worker profile with
  // only that prefix's samples. "*" (the default) stands for the prefixes the task stream saw in
  // the tracked window, the max_auto_profile_prefixes with the most compute time: a prefix's
  // tree usually has one task function at its root, so its innermost-frame counts are restored
  // exactly (see dask/profile.h), which the all-tasks tree cannot do under the one Dask frame
  // that runs every task. Empty: the all-tasks profile only.
  std::vector<std::string> profile_task_prefixes = {"*"};
  int max_auto_profile_prefixes = 16;
  // Rebuild each worker's all-tasks profile from its per-prefix profiles (dask/profile_merge.h)
  // when any were read.
  bool rebuild_whole_worker_profiles = true;
  // The workers' distributed.worker.profile.interval: the time one sample stands for.
  double profile_interval_seconds = 0.01;
  dask::ProfileConversionOptions profile_conversion;
  // Poll identity on a second connection, faster than the workers' heartbeats, so that no
  // heartbeat's digests are missed (distributed ≥ 2023.4 only).
  bool watch_heartbeats = true;
  // Restore the execute seconds of missed heartbeats from get_cluster_state (≥ 2023.2.1).
  bool recover_lost_digests = true;
  // Longest wait at a span's end for one more heartbeat of every worker; 0: three heartbeat
  // periods, at least 2 s.
  absl::Duration final_heartbeat_timeout = absl::ZeroDuration();
  // Nesting accepted in profile replies (two levels per frame; other replies keep
  // comm.msgpack_limits). Python's msgpack nests at most 511 containers, so a worker cannot
  // send a stack deeper than about 250 frames anyway (its reply fails and is left out).
  int profile_max_msgpack_depth = 1024;
  // The whole end-of-run profile fetch (every prefix, and one call per worker when the
  // scheduler's one call was ambiguous) ends by then; what is left is a warning.
  absl::Duration profile_fetch_timeout = absl::Seconds(30);
  // The whole end of tracking (the poll in flight, the last poll, the spans' heartbeat waits
  // and cumulative totals, the profile fetch) ends this long after StopTracking is called, so a
  // scheduler that answers slowly cannot stretch a run past its --duration: every wait on the
  // scheduler gives up then (each step keeps its own shorter timeout too) and a warning names
  // the step cut short. 0: max(2 s, 10 % of the tracked time).
  absl::Duration end_timeout = absl::ZeroDuration();
  // What the polling period, the heartbeat watcher's waits and the reconnection backoffs are
  // timed on (monotonic). Not owned; outlives the backend. Null: Clock::Real().
  Clock* clock = Clock::Real();
};

class DaskMetricsBackend : public AbstractMetricsBackend {
 public:
  // InvalidArgument naming the address when it is not tcp://HOST:PORT. Does not connect.
  static absl::StatusOr<std::unique_ptr<DaskMetricsBackend>> Create(DaskBackendOptions options);
  ~DaskMetricsBackend() override;
  DaskMetricsBackend(const DaskMetricsBackend&) = delete;
  DaskMetricsBackend& operator=(const DaskMetricsBackend&) = delete;

  absl::string_view name() const override { return "dask"; }

  // Connects (Unavailable naming the address when the scheduler is not reachable), probes the
  // version, installs the task stream, takes a first sample and starts the poller.
  // InvalidArgument for a non-positive or infinite interval, FailedPrecondition if tracking.
  absl::Status StartTracking(absl::Duration interval) override;
  // Stops the poller, takes a last sample, closes the connection cleanly. Open gaps end now.
  absl::StatusOr<v1::TrackingData> StopTracking() override;

  absl::StatusOr<SpanId> CreateSpan(absl::string_view name) override;
  absl::Status EndSpan(const SpanId& id) override;
  // NotFound for an unknown id, FailedPrecondition before EndSpan.
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) override;

  // Per-worker profiles (all tasks first, then one set per profile_task_prefixes entry),
  // workers in the order they were first seen. Available after StopTracking. Dask's profiles
  // cannot tell chunks apart: `chunks` is not used.
  std::vector<v1::Profile> TakeProfiles(const ChunkTable& chunks) override;

  // What the scheduler said it runs ("2022.12.1+ds.1"; "unknown" when its reply lacked it);
  // empty before StartTracking.
  std::string scheduler_version() const;
  // The run gets the scheduler's version and the coded warnings, what the user should know about
  // the data, each under a stable code (Dask has no chunk records or window of its own). Callable
  // at any time; each call adds every warning so far.
  void Contribute(RawRun& run) override {
    run.engine_version = scheduler_version();
    for (v1::Warning& warning : CodedWarnings()) run.warnings.push_back(std::move(warning));
  }
  // Task-stream records read so far (all of them after StopTracking).
  std::vector<dask::TaskRecord> task_records() const;

  // As of the last poll: tasks finished per prefix (task stream: "OK" done, "error" failed),
  // running per prefix (the scheduler's `processing`), and the workers with their cores,
  // memory and memory limits summed. After StopTracking: the last poll's.
  std::optional<BackendLiveProgress> LiveProgress() const override;

  // The samples since the last call (worker series and worker counts): the caller keeps them
  // (the session's checkpoint), so the backend's memory holds only the samples since.
  // StopTracking then returns the rest; MergeTrackingSegment (store/tracking_segments.h) joins
  // them exactly.
  std::optional<v1::TrackingData> TakeTrackingSegment() override;
  FinalTracking final_tracking() const override { return FinalTracking::kExtendsSegments; }

 private:
  // What Contribute adds to the run's warnings.
  std::vector<v1::Warning> CodedWarnings() const;
  // What the backend remembers of a worker beside its samples (kept in timeline_).
  struct WorkerTrack {
    std::string host;
    double last_seen = -1;  // of the last sample
    // The last sample's name, threads and memory limit (for the profiles).
    std::string name;
    double nthreads = 0;
    double memory_limit_bytes = 0;
    bool sampled = false;
  };
  // One heartbeat's digests, as first observed (by either poller).
  struct HeartbeatEvent {
    int64_t observed_unix_ns = 0;  // start of the poll that saw it (this host's clock)
    double last_seen = 0;          // the scheduler's clock
    std::string worker;
    int missed_before = 0;  // heartbeats skipped since the previous one seen
    std::vector<dask::DigestEntry> digests;
  };
  // What a span gathered, beside its window in spans_.
  struct SpanState {
    bool finalized = false;
    std::optional<dask::CumulativeExecuting> start_cumulative;
    std::string start_cumulative_error;
    // Per worker, the last_seen of the first heartbeat sent after the end: digests up to it
    // are the span's.
    std::map<std::string, double> closing_last_seen;
    dask::DigestTotals recovered;
  };

  explicit DaskMetricsBackend(DaskBackendOptions options, dask::SchedulerAddress address);
  // options_.comm whose give_up also holds once the end of tracking ran out of time.
  dask::CommOptions CommOptionsWithEnd();
  // The end phase's deadline, on dask::DeadlineNow()'s (monotonic) clock.
  bool EndRanOut() const { return dask::DeadlineNow() >= end_deadline(); }
  absl::Time end_deadline() const { return absl::FromUnixNanos(end_deadline_ns_.load()); }
  // Says once that `step` of the end of tracking was cut short, and what that lost.
  void WarnEndCut(absl::string_view step, absl::string_view lost);
  // One poll; called by the poller thread, or by the controlling thread when none runs.
  void Poll();
  absl::Status PollConnected();
  // What a poll reads beside identity, by worker address.
  struct PollExtras {
    std::map<std::string, double> processing;          // tasks processing, the scheduler's view
    std::map<std::string, int64_t> running_by_prefix;  // the processing tasks' prefixes
    std::map<std::string, double> occupancy;
  };
  // The parts of a poll: each returns only a lost connection (a refused op is a warning).
  absl::Status ReadProcessing(PollExtras& extras);
  absl::Status ReadOccupancy(PollExtras& extras);  // turned off with a warning when refused
  absl::Status ReadTaskStreamTail(std::vector<dask::TaskRecord>& fresh);
  // Worker count, worker samples (fresh heartbeats only), joins and leaves. Requires mutex_.
  void RecordWorkers(int64_t now, std::vector<dask::WorkerSnapshot>& workers,
                     const PollExtras& extras);
  absl::Status ConnectAndPrepare();
  void EnterGap(const absl::Status& cause);
  // The gap that began at gap_start_unix_ns_, ended now. Requires mutex_.
  void RecordGap(int64_t end_unix_ns);
  // The samples not taken by TakeTrackingSegment yet (no gaps). Requires mutex_.
  v1::TrackingData UntakenSamples();
  // The steps of StopTracking: both pollers joined, one last poll, the ended spans finished
  // (their last heartbeats), the workers' profiles read; each step warns when cut short.
  void StopPollers();
  void LastPoll();
  void FinalizeEndedSpans();
  void ReadProfilesAtEnd(int64_t stop_unix_ns);
  // live_ from a poll: the workers now, the tasks running by prefix, the new task records.
  // Requires mutex_.
  void UpdateLiveProgress(const std::vector<dask::WorkerSnapshot>& workers,
                          const std::map<std::string, int64_t>& running_by_prefix,
                          const std::vector<dask::TaskRecord>& fresh);
  void AddWarning(std::string sentence);  // requires mutex_
  // Takes the digests of every worker's new heartbeat from an identity reply; returns the
  // workers' last_seen. Requires mutex_.
  std::map<std::string, double> IngestHeartbeats(std::vector<dask::WorkerSnapshot>& workers,
                                                 int64_t observed_unix_ns);
  // identity on the heartbeat connection (connecting when needed); requires hb_mutex_.
  absl::StatusOr<dask::SchedulerSnapshot> HeartbeatIdentity();
  // get_cluster_state's cumulative executing seconds on the heartbeat connection.
  absl::StatusOr<dask::CumulativeExecuting> ReadCumulative();
  void HeartbeatLoop();
  // Waits for one more heartbeat of every worker after the span's end, reads the cumulative
  // totals and recovers what missed heartbeats lost. Not under mutex_.
  void FinalizeSpan(const SpanId& id);
  bool InSpan(const backends_internal::SpanWindow& window, const SpanState& span,
              const HeartbeatEvent& e) const;
  // The last heartbeats of a span (FinalizeSpan, step 1).
  struct ClosingHeartbeats {
    bool baseline_taken = false;              // a poll that started after the end was answered
    std::map<std::string, double> last_seen;  // per worker, its first heartbeat after the end
    std::vector<std::string> waiting;         // workers that sent none in time
  };
  // Polls identity until every worker sent a heartbeat after end_ns, or until `timeout` (or
  // the end of tracking) runs out.
  ClosingHeartbeats WaitForClosingHeartbeats(int64_t end_ns, double period, absl::Duration timeout);
  // get_cluster_state at a span's end when there is a start to compare with; why not in `error`.
  std::optional<dask::CumulativeExecuting> ReadEndCumulative(bool have_start, std::string& error);
  // Restores what missed heartbeats lost from the cumulative totals, or says what was lost.
  // Requires mutex_.
  void RecoverOrWarnLostDigests(const backends_internal::SpanWindow& window, SpanState& span,
                                bool closing_missed,
                                const std::optional<dask::CumulativeExecuting>& start_cumulative,
                                const std::optional<dask::CumulativeExecuting>& end_cumulative,
                                const std::string& cumulative_error);
  // A warning with its own code beside the sentence in warnings_. Requires mutex_.
  void AddMeasurementWarning(absl::string_view code, std::string message);
  // The window's fine metrics (task stream, heartbeats' digests, recovered digests), and the
  // task groups of the tasks that ran in it. Requires mutex_.
  dask::DigestTotals SpanTotals(const backends_internal::SpanWindow& window, const SpanState& state,
                                dask::StreamGroups& stream_groups) const;
  // The workload's spans that ran in `span`, nested in it, and warnings about the prefixes
  // they share or that ran in spans no poll saw. Requires mutex_.
  void NestWorkloadSpans(v1::Span& span, const dask::StreamGroups& stream_groups);
  double HeartbeatPeriodNow() const;  // requires mutex_
  // Profiles of `workers` over [start_ns, stop_ns], restricted to `prefix` unless empty, by
  // worker address, every call ending by `deadline`. Needs a live comm_.
  absl::StatusOr<std::map<std::string, v1::Profile>> FetchProfileSet(
      const std::vector<std::string>& workers, const std::string& prefix, int64_t start_ns,
      int64_t stop_ns, absl::Time deadline);
  void FetchProfiles(int64_t start_ns, int64_t stop_ns);
  // One profile set: a task prefix ("" for all tasks) and its profiles by worker address.
  using ProfileSet = std::pair<std::string, std::map<std::string, v1::Profile>>;
  // "" then the profile_task_prefixes, "*" standing for the prefixes seen (PrefixesSeen).
  std::vector<std::string> ProfilePrefixes(int64_t start_ns, int64_t stop_ns);
  // The sets read within profile_fetch_timeout and the end of tracking; what is not, a warning.
  std::vector<ProfileSet> FetchProfileSets(const std::vector<std::string>& asked,
                                           const std::vector<std::string>& prefixes,
                                           int64_t start_ns, int64_t stop_ns);
  // The all-tasks trees rebuilt from the per-prefix ones, innermost counts restored (options).
  void RebuildAndRestoreProfiles(std::vector<ProfileSet>& sets) const;
  // Host, name, threads and memory limit of the worker's last sample. Requires mutex_.
  void DescribeProfileWorker(const std::string& worker, v1::Profile& profile) const;
  // Task groups' span ids, and new spans' names (dask/spans.h). Returns only a lost connection;
  // a refused or odd reply turns span reading off with a warning.
  absl::Status ReadWorkloadSpans();
  // Task prefixes of task-stream records with a start/stop in the window, most tasks first.
  std::vector<std::string> PrefixesSeen(int64_t start_ns, int64_t stop_ns);

  const DaskBackendOptions options_;
  const dask::SchedulerAddress address_;
  // When the end of tracking must be over (unix ns; "never" while tracking). Read by every
  // connection's give_up, on any thread.
  std::atomic<int64_t> end_deadline_ns_{std::numeric_limits<int64_t>::max()};
  absl::Duration end_budget_;            // what end_deadline_ns_ was set from, for the warnings
  absl::Time tracking_start_monotonic_;  // StartTracking's DeadlineNow(): the end budget's base

  // Owned by the poller while it runs, by the controlling thread otherwise.
  std::unique_ptr<dask::DaskComm> comm_;
  std::optional<dask::DaskVersion> version_;
  dask::TaskStreamCursor cursor_;
  bool use_start_index_ = false;
  bool occupancy_enabled_ = true;
  bool task_stream_enabled_ = true;
  bool spans_enabled_ = true;
  absl::Duration backoff_;
  // Monotonic readings of options_.clock.
  absl::Duration next_reconnect_ = -absl::InfiniteDuration();
  bool in_gap_ = false;
  int64_t gap_start_unix_ns_ = 0;
  std::string gap_reason_;
  int64_t last_good_poll_unix_ns_ = 0;
  int reconnects_ = 0;
  absl::Duration last_reconnect_ = -absl::InfiniteDuration();
  std::set<std::string> present_workers_;
  bool first_identity_ = true;
  int64_t tracking_start_unix_ns_ = 0;

  mutable std::mutex mutex_;  // guards everything below
  bool tracking_ = false;
  double interval_seconds_ = 0;
  std::string version_text_;
  std::vector<int64_t> count_times_;
  std::vector<int32_t> counts_;
  std::map<std::string, WorkerTrack> workers_;
  std::vector<std::string> worker_order_;
  dask::WorkerTimeline timeline_;  // the samples not taken by TakeTrackingSegment yet
  size_t counts_taken_ = 0;        // worker counts handed out by TakeTrackingSegment
  std::vector<dask::TaskRecord> records_;
  BackendLiveProgress live_;  // see LiveProgress()
  std::vector<HeartbeatEvent> heartbeats_;
  std::map<std::string, double> digest_last_seen_;  // per worker, the last heartbeat taken
  std::vector<v1::Warning> measurement_warnings_;
  bool digests_seen_ = false;  // some worker reports digests_total_since_heartbeat
  std::vector<v1::TrackingGap> gaps_;
  std::vector<std::string> warnings_;
  std::map<SpanId, SpanState> span_state_;
  dask::SpanCatalog workload_spans_;
  std::vector<v1::Profile> profiles_;

  backends_internal::SpanRegistry spans_{"dask"};  // its own lock
  backends_internal::PeriodicThread poller_;

  // Stops the heartbeat watcher, whose period follows the workers' heartbeat interval.
  StopToken stop_heartbeat_watcher_;

  // The heartbeat watcher: its own connection, also used for get_cluster_state.
  std::mutex hb_mutex_;  // guards hb_comm_ and hb_next_connect_
  std::unique_ptr<dask::DaskComm> hb_comm_;
  absl::Duration hb_next_connect_ = -absl::InfiniteDuration();  // monotonic
  std::thread heartbeat_poller_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_H_
