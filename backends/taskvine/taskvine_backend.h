// TaskVineMetricsBackend: metrics of a TaskVine or Work Queue run from its manager's logs
// (transactions + performance; format study: docs/taskvine-logs.md).
//
//  * Logs of a finished run (follow = false): StartTracking reads both logs completely (NotFound
//    when the transactions log is missing); StopTracking reads anything appended since.
//  * A run still going (follow = true): StartTracking starts a thread that reads what was
//    appended every interval (waiting for the logs to appear; a partial last line is kept until
//    its newline arrives) until StopTracking, which reads once more and joins the thread.
//
// Tracking data (the common schema): worker count over time (a pair of points at each
// CONNECTION/DISCONNECTION, so averages are exact step integrals) with queued_chunks = tasks in
// the manager's ready queue; one WorkerSeries per worker (cores, memory_limit_bytes,
// disk_limit_bytes from its first RESOURCES, executing_tasks = attempts RUNNING..WAITING_RETRIEVAL,
// active_tasks = also waiting for retrieval); `manager` = the performance log's queue lengths and
// cumulative bytes sent/received.
//
// Spans: a span covers the whole run as recorded (followed or not; see "One window" below). Its
// fine metrics (attempts ending in the window):
//  * context "taskvine", task_prefix = category: "queue-wait", "commit", "worker-wait",
//    "execute", "retrieve", "output-transfer" (unit "seconds"; execute = time_worker_end -
//    time_worker_start), "bytes-in", "bytes-out" ("bytes"), "attempts", "lost-attempts"
//    ("count"), "transfer-to-execute" ((commit + output-transfer) / execute, "fraction"), and with
//    monitoring "cpu-time" ("seconds") and "peak-memory" ("bytes", the maximum).
//  * context "taskvine-worker", worker = id, over the run (RunModel::PerWorker): "busy", "lifetime"
//    ("wall-seconds"; busy = union of its attempts' RUNNING..WAITING_RETRIEVAL), "busy-fraction",
//    "utilisation" (allocated core-seconds / cores x lifetime, "fraction"),
//    "core-seconds-available", "allocated-core-seconds", "task-seconds", "lost-task-seconds"
//    (time of attempts lost when the worker disconnected) ("core-seconds"); and "bytes-in",
//    "bytes-out" ("bytes"), the worker's transfers since the logs began (the log sums them per
//    worker, not per window). A worker the manager disconnected after a silence also has
//    "silent-before-disconnect" ("wall-seconds": from its last record to the disconnection; see
//    RunModel's Worker::silent_since_us). Only workers that ran something (Worker::Idle is false:
//    an attempt, a library instance, a transfer or a cache update) have these rows: an idle
//    worker's connection time and cores are in the tracking series, the rest would be zeros.
//  * context "taskvine-run", over the whole run ("core-seconds"): "execute-core-seconds" (sum of
//    cores x execution of the retrieved attempts; 0-core function calls weigh 1),
//    "lost-task-seconds", "function-slot-seconds"; and "idle-workers" ("count"), the worker
//    connections left without per-worker rows. Raw sums only: mean and peak workers come
//    from the tracking series, and the execution core efficiency from these sums, in
//    //aggregation (aggregate.h).
//
// Chunk records (Contribute, once): one per task of the chunk category that reached
// DONE, uuid "taskvine-task-<id>", attempt = attempts - 1 (manager retries keep the id), start/end
// and duration from its last attempt's worker times, worker id and a slot on it (thread_index: the
// concurrent tasks of a multi-core worker each get their own, RunModel's AssignSlots),
// cpu/peak memory when monitored,
// FAILED when DONE's result is not SUCCESS or its exit code is not 0 (error text says which and
// how many attempts were lost). Retries by the application (new task ids) are separate records.
//
// Following (follow = true) a run directory spec that names vine-run-info or
// vine-run-info/most-recent follows the run going on when tracking began (the one most-recent
// points to, else the newest, when its log has no MANAGER END and was written in the last 10
// minutes: collect attached late, "taskvine_attached_late"), else the run that starts after:
// the other run directories that existed then are ignored until a new one appears. Logs
// of a run that ended before tracking began are never measured as live: StopTracking fails
// (FailedPrecondition) naming them.
//
// One window frames every figure, followed or not: the run's own record (START .. END, or its
// last record read), which RecordedRunWindow gives the measurement. A run attached to late is
// read from its start, so its chunks, series and span figures all cover the whole run. EndSpan
// reads the logs to their end (MANAGER END, or kDrainQuietTime without growth, at most
// kDrainMaxTime) before any span figure is computed. A log truncated or rotated under us is read
// again from its start, with a warning
// ("taskvine_log_restarted"). A log replaced by anything but a regular file (FIFO, device,
// directory, socket, a symbolic link where there was a file) is never opened: the run read so far
// is kept and saved with a warning naming the log ("taskvine_log_replaced"). No poll blocks and
// each reads at most LineTailer::kDefaultMaxBytesPerPoll, so StopTracking returns within
// kDrainMaxTime whatever is written to the logs ("taskvine_log_cut_short" when it had to stop
// reading); a read error after the run was found is a warning ("taskvine_log_read"), not a loss.
//
// Warnings (Contribute gives each a stable code): impossible values rejected
// (line and field), times going backwards, an early MANAGER END, workers that died silently,
// malformed lines with their numbers, partial last lines, several manager runs in one file, missing
// MANAGER END, chunk tasks unfinished at the end, logs restarted under --follow, and the
// cross-checks between the two logs (docs/taskvine-logs.md §8) that disagree.
//
// Thread-safety: drive from one thread (AbstractMetricsBackend); the follow thread and the
// controlling thread share the model under a mutex. Cost: ~ the parse throughput of
// //backends/taskvine:parse_benchmark; memory per worker and per task, not per log line.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_TASKVINE_BACKEND_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_TASKVINE_BACKEND_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/internal/periodic_thread.h"
#include "backends/internal/span_registry.h"
#include "backends/metrics_backend.h"
#include "backends/taskvine/line_tailer.h"
#include "backends/taskvine/log_paths.h"
#include "backends/taskvine/run_model.h"
#include "host/clock.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

struct TaskVineBackendOptions {
  // What --taskvine_logs names (see backends/taskvine/log_paths.h).
  std::string logs;
  // Tail the logs while the run goes on (until StopTracking).
  bool follow = false;
  // Tasks of this category are chunks.
  std::string chunk_category = "processing";
  // What the follow period and the end-of-run read's waits are timed on (monotonic), and when
  // tracking began (wall). Not owned; outlives the backend.
  Clock* clock = Clock::Real();
  // Bytes one poll reads from each log at most (so that no poll holds the caller); a finished
  // run is read whole by as many polls as it takes. Tests make it small.
  int64_t max_bytes_per_poll = taskvine::LineTailer::kDefaultMaxBytesPerPoll;
};

class TaskVineMetricsBackend : public AbstractMetricsBackend {
 public:
  explicit TaskVineMetricsBackend(TaskVineBackendOptions options);
  ~TaskVineMetricsBackend() override;
  TaskVineMetricsBackend(const TaskVineMetricsBackend&) = delete;
  TaskVineMetricsBackend& operator=(const TaskVineMetricsBackend&) = delete;

  absl::string_view name() const override { return "taskvine"; }

  // InvalidArgument for a non-positive interval, FailedPrecondition when tracking; without
  // follow, the errors of reading the logs (NotFound, ...).
  absl::Status StartTracking(absl::Duration interval) override;
  absl::StatusOr<v1::TrackingData> StopTracking() override;
  // Following: the points of the series read since the last call that can no longer move
  // (RunModel::TrackingSince), a copy for the session's checkpoint, so that a run
  // killed with SIGKILL keeps its tracking; StopTracking still returns the whole run (the logs
  // can revise a change, e.g. a silent worker's end). nullopt without follow.
  std::optional<v1::TrackingData> TakeTrackingSegment() override;
  FinalTracking final_tracking() const override { return FinalTracking::kReplacesSegments; }

  absl::StatusOr<SpanId> CreateSpan(absl::string_view name) override;
  absl::Status EndSpan(const SpanId& id) override;
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) override;

  // The end-of-run read: stop when MANAGER END is read, or the logs have not grown for
  // kDrainQuietTime, and after kDrainMaxTime in any case.
  static constexpr absl::Duration kDrainQuietTime = absl::Seconds(1);
  static constexpr absl::Duration kDrainMaxTime = absl::Seconds(10);
  // Without follow the logs are those of a finished run (collect reads those with
  // ingest/taskvine_run.h). Both modes are framed by the run's own START and END (or last
  // record): RecordedRunWindow (nullopt until the run was found), which Contribute gives the run
  // (without this machine's host facts for a finished run: it ran elsewhere, before).
  bool ReadsFinishedRun() const { return !options_.follow; }
  struct RecordedWindow {
    absl::Time start;
    absl::Time end;
  };
  std::optional<RecordedWindow> RecordedRunWindow() const;
  // Adds the chunk records (taken once: a second call adds none), the coded warnings and
  // RecordedRunWindow (no engine version: the logs do not carry one). Once the logs were read
  // to their end (a finished run; a followed one after EndSpan or StopTracking) the run is
  // handed over: the model frees its tasks (~210 B each) block by block as their chunk rows go
  // into `run.engine_chunks` (no v1::ChunkRecord is built), and its workers' steps once
  // StopTracking has run (or when it runs), so that neither is held next to the records, the
  // series and the measurement made of them. GetSpanMetrics then fails (FailedPrecondition:
  // take it before), LiveProgress keeps its last figures, ModelSnapshot has no tasks.
  void Contribute(RawRun& run) override;

  // The run as read so far, for the live view: tasks of the chunk category that reached DONE
  // (failed as Contribute's chunk records mark them) and that are running, the workers connected
  // with their cores and memory (RESOURCES: the limits; resident memory is not logged). Recounted
  // only when the transactions log grew (O(tasks) then). nullopt before the run was found.
  std::optional<BackendLiveProgress> LiveProgress() const override;

  // The run as read so far (for tools and tests). Call while not tracking, or accept a copy
  // taken under the lock.
  taskvine::RunModel ModelSnapshot() const;

 private:
  // What Contribute adds: the chunk records (taken once, as rows of `table`; a finished run's
  // tasks are freed as their rows are made) and the coded warnings.
  void TakeChunkRows(ChunkTable* table);
  std::vector<v1::Warning> CodedWarnings() const;
  // Contribute's last step (see there): frees what only the handed-over parts needed.
  void ReleaseHandedOverRun();
  std::optional<BackendLiveProgress> LiveProgressLocked() const;  // mu_ held
  // Reads what was appended to both logs into model_. Called with mu_ NOT held.
  absl::Status PollLogs();
  // A finished run's logs to their end: PollLogs until nothing is left (each poll reads at most
  // max_bytes_per_poll; a 10^6-task log is ~650 MB). Called with mu_ NOT held.
  absl::Status ReadFinishedLogs();
  // PollLogs' parts, mu_ held: the tailers of the logs once found (NotFound before); the note
  // of a run attached to late, at the first read; the notes of a tailer's restarts and
  // replacements since the last poll.
  absl::Status OpenTailersLocked();
  void NoteFoundLocked();
  // A warning per followed log whose path is empty at the end (deleted or moved away).
  void NoteDeletedLogsLocked();
  void NoteTailerChangesLocked(const taskvine::LineTailer& tailer, int64_t* restarts_seen,
                               int64_t* replacements_seen);
  // Finds the logs to read (under mu_): NotFound while they (or, following vine-run-info, a run
  // newer than tracking) do not exist.
  absl::StatusOr<taskvine::LogPaths> FindLogs() const;
  // Reads the logs to their end (following: see kDrainQuietTime), then FinishReadingLocked.
  void ReadToEnd();
  // Partial last lines consumed, the model told the logs are complete. Once; mu_ held.
  void FinishReadingLocked();
  // Warns (once) that the end-of-run read stopped at kDrainMaxTime with more to read.
  void NoteReadingCutShort();
  // FailedPrecondition when a followed run ended before tracking began.
  absl::Status CheckFollowedRunIsNew() const;
  // One tick of the follow thread: reads what was appended, keeping new read errors.
  void FollowTick();

  const TaskVineBackendOptions options_;
  bool tracking_ = false;
  double interval_seconds_ = 0;

  mutable std::mutex mu_;  // guards model_, paths_, tailers_, poll_errors_
  taskvine::RunModel model_;
  bool have_paths_ = false;
  taskvine::LogPaths paths_;
  std::unique_ptr<taskvine::LineTailer> txn_tailer_, perf_tailer_;
  std::vector<std::string> poll_errors_;
  mutable std::optional<BackendLiveProgress> live_;  // LiveProgress as of live_records_
  mutable int64_t live_records_ = -1;
  std::vector<taskvine::CodedNote> notes_;  // logs restarted, ...
  int64_t txn_restarts_seen_ = 0, perf_restarts_seen_ = 0;
  int64_t txn_replacements_seen_ = 0, perf_replacements_seen_ = 0;
  bool last_more_pending_ = false;  // the last PollLogs stopped at a tailer's per-poll limit
  bool cut_short_noted_ = false;    // written under mu_, only by the controlling thread
  int64_t last_poll_bytes_ = 0;
  bool finished_ = false;  // the logs were read to their end: partial last lines consumed
  // Following: when tracking began; with a vine-run-info spec, that directory and the run
  // directories it held then (not to be followed).
  absl::Time tracking_started_ = absl::InfinitePast();
  std::string run_info_root_;
  bool found_ = false;             // the transactions log has been read from
  bool ended_when_found_ = false;  // ... and held MANAGER END at that first read
  std::vector<std::string> old_runs_;
  std::string live_run_at_start_;        // the run directory going on when tracking began, or ""
  bool log_was_there_at_start_ = false;  // following: the run's log held records already

  backends_internal::PeriodicThread follower_;
  std::string last_follow_error_;  // the follow thread's only

  backends_internal::SpanRegistry spans_{"taskvine"};
  bool chunks_taken_ = false;
  bool handed_over_ = false;  // under mu_; Contribute freed the tasks (ReleaseHandedOverRun)
  taskvine::RunModel::TrackingCursor handed_out_;  // under mu_
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_TASKVINE_BACKEND_H_
