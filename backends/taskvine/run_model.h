// RunModel: the state of one TaskVine / Work Queue manager run, rebuilt record by record from
// its transactions log (and performance log), and the figures derived from it
// (docs/taskvine-logs.md §8): worker intervals and resources, task attempts with their queue wait,
// commit, wait at the worker, execution, retrieval and outcome, transfers, library instances,
// per-worker busy time and utilisation, time lost to disconnections, and the cross-checks
// between the two logs.
//
// Feed lines in file order with ConsumeTransactionLine / ConsumePerformanceLine (any
// interleaving of the two files); query at any time (a live run is measured up to its last
// record). Malformed lines are counted, kept with their line numbers (the first
// kMaxMalformedKept) and never stop the parse.
//
// Memory: per worker, per task (attempts) and per performance row; nothing per transfer or per
// other record. Thread-safety: not thread-safe; one owner (the backend locks around it).
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/string_view.h"
#include "backends/taskvine/perf_log.h"
#include "backends/taskvine/task_table.h"
#include "backends/taskvine/txn_record.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace taskvine {

struct MalformedLine {
  std::string file;  // "transactions" or "performance"
  int64_t line_number = 0;
  std::string reason;
};

// A value the run's own window rules out (a duration longer than the run so far, a worker time
// outside it, an END before earlier records): kept out of every figure.
struct RejectedValue {
  int64_t line_number = 0;  // transactions log
  std::string field;        // "time_output_mgr", "MANAGER END time", ...
  std::string what;         // the value and why it is impossible
};

// A stable code and a sentence (v1::Warning without the proto, for the backend to convert).
struct CodedNote {
  std::string code;
  std::string message;
};

enum class AttemptEnd {
  kOpen,             // still on the worker when the log ends
  kRetrieved,        // RETRIEVED (outputs fetched / reaped)
  kLost,             // the worker disconnected while the attempt was on it
  kRetriedOnWorker,  // WAITING_RETRIEVAL then READY again (resource exhaustion, forsaken)
};

// (Fields ordered so that no padding is left: 144 B, one per attempt of 10^6 tasks.)
struct Attempt {
  int32_t number = 1;   // 1 for the first dispatch
  int32_t worker = -1;  // index into workers(); -1 before RUNNING
  int64_t ready_us = 0;
  int64_t running_us = 0;  // 0 until dispatched
  int64_t end_us = 0;      // WAITING_RETRIEVAL, or the worker's DISCONNECTION when lost
  int64_t retrieved_us = 0;
  int32_t exit_code = 0;
  AttemptEnd end = AttemptEnd::kOpen;
  absl::string_view result;  // RETRIEVED result ("" before); interned, lives with the model
  float cores = 0, memory_mb = 0, disk_mb = 0;  // allocation (RUNNING)
  float commit_seconds = 0;                     // time_input_mgr (or wq_input_time)
  float output_seconds = 0;                     // time_output_mgr
  float cpu_seconds = 0;
  float peak_memory_mb = 0;
  float machine_load = 0, machine_cpus = 0;  // resource monitor; 0 = not measured
  bool monitored = false;                    // measured resources present (cpu_time)
  bool finished_on_worker = false;  // reached WAITING_RETRIEVAL (then maybe lost with its worker)
  double input_bytes = 0;           // size_input_mgr (or wq_input_size)
  double output_bytes = 0;          // size_output_mgr
  double commit_end_s = 0;          // epoch seconds
  double worker_start_s = 0, worker_end_s = 0;  // epoch seconds, worker clock; 0 = unknown

  bool dispatched() const { return running_us > 0; }
  // time_worker_end - time_worker_start when known, else end - RUNNING (flagged by *fallback).
  double ExecutionSeconds(bool* fallback = nullptr) const;
};

struct Task {
  int64_t id = 0;
  int32_t category = -1;  // index into categories()
  int32_t exit_code = 0;
  int64_t done_us = 0;
  absl::string_view result;  // DONE result; interned
  bool done = false;
  absl::InlinedVector<Attempt, 1> attempts;  // most tasks run once: no allocation
  bool Failed() const { return done && (result != "SUCCESS" || exit_code != 0); }
};

struct Worker {
  std::string id;       // worker-<hex>; for Work Queue the id of its CONNECTION record
  std::string address;  // host:port
  int64_t connect_us = 0;
  int64_t disconnect_us = 0;  // 0 while connected
  absl::string_view reason;   // DISCONNECTION reason, or "SILENT"; interned
  bool has_resources = false;
  double cores = 0, memory_mb = 0, disk_mb = 0;  // first RESOURCES record
  // Busy accounting: attempts currently on the worker (RUNNING..WAITING_RETRIEVAL).
  int executing = 0;                   // RUNNING, not yet WAITING_RETRIEVAL
  int active = 0;                      // executing + waiting retrieval
  std::vector<int64_t> on_worker;      // task ids with an attempt RUNNING or WAITING_RETRIEVAL here
  double bytes_in = 0, bytes_out = 0;  // manager TRANSFER INPUT / OUTPUT
  int64_t transfers_in = 0, transfers_out = 0, cache_updates = 0;
  // Executing/active attempts after each change (Tracking() writes one point per step); one
  // vector of 16-byte points, one allocation per worker (3 steps per task: 48 MB at 10^6).
  struct Step {
    int64_t us = 0;
    int32_t executing = 0, active = 0;
  };
  std::vector<Step> series;
  // The worker's last record up to a step (its series' last_seen) is the step's own instant
  // but at the steps listed here, in step order (a disconnection, a re-queue, a step of the
  // clock back): rare, so a step needs no 8 more bytes for it (AddWorkerSeries reads both).
  struct EvidenceAt {
    int32_t step = 0;
    int64_t us = 0;
  };
  std::vector<EvidenceAt> step_evidence;
  // Library instance on this worker (serverless): cores and SENT, STARTED, end (its RETRIEVED
  // or DONE; the worker's disconnection when neither was logged).
  double library_cores = 0;
  int64_t library_sent_us = 0, library_started_us = 0, library_end_us = 0;
  // Latest record that shows the worker alive (its own records, its attempts' records).
  int64_t last_evidence_us = 0;
  // No DISCONNECTION was logged: its lifetime was ended at last_evidence_us (MarkLogComplete).
  bool silent_death = false;
  int64_t dispatches = 0;  // RUNNING records on this worker (task attempts, library instances)
  // Disconnected by the manager with FAILURE (its keepalive gave up) after nothing from it
  // for kSilentBeforeDisconnectSeconds or more: its last record (it may have died then; the
  // manager counts it connected, and busy with the attempts on it, until the keepalive gives
  // up), and the attempts executing on it at the disconnection. 0 otherwise.
  int64_t silent_since_us = 0;
  int32_t executing_when_disconnected = 0;

  // Connected and nothing else: no attempt, library instance, transfer or cache update on it.
  // Such a worker's only figures are its connection time and cores, which the worker count and
  // its series carry; its per-worker rows would be zeros.
  bool Idle() const {
    return dispatches == 0 && library_sent_us == 0 && library_started_us == 0 &&
           library_cores == 0 && transfers_in == 0 && transfers_out == 0 && cache_updates == 0 &&
           bytes_in == 0 && bytes_out == 0;
  }
};

// Sums over a set of attempts (one category, one worker, or a time window).
struct AttemptTotals {
  int64_t attempts = 0, retrieved = 0, lost = 0, retried_on_worker = 0, exec_fallbacks = 0;
  double queue_wait_seconds = 0;   // RUNNING - READY
  double commit_seconds = 0;       // time_input_mgr
  double worker_wait_seconds = 0;  // time_worker_start - time_commit_end
  double execute_seconds = 0;      // time_worker_end - time_worker_start (retrieved attempts)
  double retrieval_seconds = 0;    // RETRIEVED - WAITING_RETRIEVAL
  double output_seconds = 0;       // time_output_mgr
  double input_bytes = 0, output_bytes = 0;
  double allocated_core_seconds = 0;  // cores x (end - RUNNING), all dispatched attempts
  double lost_seconds = 0;            // (DISCONNECTION - RUNNING) of lost attempts
  bool monitored = false;
  double cpu_seconds = 0;
  double peak_memory_mb = 0;
};

struct WorkerFigures {
  std::string worker;
  double lifetime_seconds = 0;
  double busy_seconds = 0;
  double core_seconds_available = 0;  // cores x lifetime
  double utilisation_fraction = 0;    // allocated core-seconds / available core-seconds
  double busy_fraction = 0;           // busy / lifetime
  AttemptTotals totals;
};

struct RunFigures {
  int64_t start_us = 0, end_us = 0;  // START (or first record) .. END (or last record)
  bool ended = false;                // MANAGER END seen
  // Sums of the records only: the run's figures (mean and peak workers, efficiencies) are
  // //aggregation's, from the tracking series and the span's raw sums.
  int workers_joined = 0;
  double worker_seconds = 0, core_seconds_available = 0;
  int tasks = 0, attempts = 0, libraries = 0;
  int tasks_done = 0, tasks_failed = 0;
  double execute_seconds = 0;           // all retrieved attempts
  double weighted_execute_seconds = 0;  // x cores (1 for 0-core function calls)
  double allocated_core_seconds = 0;
  double lost_seconds = 0;
  double function_slot_seconds = 0;  // library cores x (STARTED .. end)
  int64_t transfers_in = 0, transfers_out = 0, cache_updates = 0;
  double bytes_in = 0, bytes_out = 0, cache_update_bytes = 0;
};

// Gives each chunk record of a worker a slot (thread_index): the lowest slot free when it starts,
// so that the concurrent tasks of a multi-core worker each have their own (0, 1, ...) and a
// slot is reused once its task has ended. Records without a worker keep slot 0.
void AssignSlots(std::vector<v1::ChunkRecord>& records);
// The same for the rows of `table` from `from` on (run_model_chunks.cc holds the rule).
void AssignSlots(ChunkTable& table, size_t from = 0);

class RunModel {
 public:
  static constexpr int kMaxMalformedKept = 100;

  RunModel() = default;

  void ConsumeTransactionLine(absl::string_view line, int64_t line_number);
  void ConsumePerformanceLine(absl::string_view line, int64_t line_number);
  // A log's last line that had no newline when the run was stopped: parsed if it is whole,
  // otherwise reported as a partial last line (not as malformed).
  void ConsumePartialLastLine(absl::string_view file, absl::string_view line, int64_t line_number);

  // The logs have been read to their end (a finished run, or the final read of a followed one).
  // A worker still connected without a DISCONNECTION record whose last evidence is long before
  // the end (kSilentIdleSeconds, or kSilentBusy* while attempts were executing on it) died
  // silently (its process killed, its children holding the socket): its lifetime, busy time and
  // open attempts end at its last evidence, and the worker count drops there. Idempotent.
  void MarkLogComplete();
  // Seen in real runs: idle TaskVine workers send a RESOURCES update about every 120 s.
  static constexpr double kSilentIdleSeconds = 300;
  static constexpr double kSilentBusyMinSeconds = 60;
  static constexpr double kSilentBusyExecutionFactor = 10;  // x the longest retrieved execution
  // Workers that died silently named in a warning of their own; the others share one.
  static constexpr int kMaxSilentDeathsNamed = 20;
  // A worker the manager disconnected with FAILURE with nothing from it for this
  // long before: Worker::silent_since_us, warning "taskvine_worker_silent_before_disconnect".
  // A shorter silence is a connection that broke at once (a node crash: FAILURE within about a
  // second or two) or a busy worker between two records; a manager holds a worker that died
  // behind its children for its keepalive timeout (TaskVine's default 900 s; seen: 5 s).
  static constexpr double kSilentBeforeDisconnectSeconds = 5.0;

  // Derived views (valid at any time; a live run is measured up to its last record).
  RunFigures Figures() const;
  // PerWorkerInWindow over all time.
  std::vector<WorkerFigures> PerWorker(bool skip_idle = false) const;
  // The same figures for the window [from_us, to_us] (a span of a live run): lifetime, busy
  // time and available core-seconds clipped to the window; totals of the worker's attempts that
  // end in it (as TotalsInWindow), except allocated core-seconds, which are each dispatched
  // attempt's cores x its overlap with the window, so that utilisation stays within [0, 1].
  // In workers() order; with skip_idle, only the workers that are not Idle() (an idle worker's
  // figures are its lifetime and cores, the rest zeros), so the cost of this view grows with
  // the workers that ran something.
  std::vector<WorkerFigures> PerWorkerInWindow(int64_t from_us, int64_t to_us,
                                               bool skip_idle = false) const;
  // Category name -> totals of its attempts (library instances excluded).
  std::map<std::string, AttemptTotals> PerCategory() const;
  // Totals of attempts whose end (or RUNNING, for open ones) lies in [from_us, to_us].
  AttemptTotals TotalsInWindow(int64_t from_us, int64_t to_us, absl::string_view category,
                               int worker) const;

  // Tracking data in the common schema. The worker count (with queued_chunks) and the worker
  // series are SERIES_KIND_STEP. The count stores at every change the state before and the
  // state after at its instant, in that order; a worker series one point per change (its state
  // from that instant on: the state before a change holds up to it without a point of its own,
  // which changes no integral, average or peak), then a last point that ends it. The count
  // starts at START (or the first record) and ends at EndUs, a worker series runs from
  // CONNECTION to DISCONNECTION (or EndUs). The
  // manager series (performance log rows) is SERIES_KIND_SAMPLED. A worker series'
  // last_seen_unix_seconds is the time of the worker's last record up to each point (a worker
  // killed without its children stays connected and busy until the keepalive gives up: its
  // last_seen stops while its time goes on).
  v1::TrackingData Tracking() const;
  // For a followed run's checkpoint: the points of Tracking() not counted by `cursor` yet and
  // that can no longer move, and `cursor` advanced past them. Left for a later call: the
  // worker count's last point and a connected worker's last point (they stand at the log's
  // last record). Not in it: the manager series. A worker's cores and limits are those known
  // at the call (RESOURCES follows CONNECTION within milliseconds); a worker found dead only
  // by MarkLogComplete keeps the points it had. Cost: the new points only.
  struct TrackingCursor {
    int count_points = 0;
    std::vector<int> worker_points;  // by index into workers()
  };
  v1::TrackingData TrackingSince(TrackingCursor* cursor) const;
  // Tracking() for the last time: each worker's steps are freed as soon as its series is
  // written (a finished 10^6-task run's steps are ~100 MB), so the model holds no series after.
  v1::TrackingData TakeTracking();
  // Frees the tasks (attempts) once nothing needs them any more: a finished run's reader takes
  // the span figures and warnings, then TakeChunkRows, which ends with it (~210 B per task).
  // Afterwards every figure read from tasks (Figures' task sums, PerWorker, TotalsInWindow,
  // ChunkRecords, CodedWarnings' task checks) is that of a run without tasks; the window and
  // the series stay.
  void ReleaseTasks();
  // Frees every worker's steps (after the last Tracking(): a followed run's StopTracking).
  void ReleaseSteps();
  // One record per task of `category` that reached DONE (see taskvine_backend.h), in task id
  // order, with their slots (AssignSlots): as rows appended to `table` (~190 B a record
  // against ~980 B as messages; no v1::ChunkRecord is built), or as messages (tests).
  void AppendChunkRows(absl::string_view category, ChunkTable* table) const;
  std::vector<v1::ChunkRecord> ChunkRecords(absl::string_view category) const;
  // AppendChunkRows for the last time, then ReleaseTasks: each block of 4096 tasks is freed
  // as soon as its rows are appended, so that a finished run's reader never holds its tasks
  // (~210 B each) and their rows whole at once (#25).
  void TakeChunkRows(absl::string_view category, ChunkTable* table);
  // Cross-checks of docs/taskvine-logs.md §8 that disagree, malformed lines, other things worth
  // knowing.
  std::vector<std::string> Warnings() const;
  // The same, each with a stable code: "taskvine_impossible_value", "taskvine_time_backwards",
  // "taskvine_early_end", "taskvine_worker_silent_death",
  // "taskvine_worker_silent_before_disconnect" (a worker disconnected by the manager with nothing
  // from it since an earlier record: "silent since T"), "taskvine_cross_check",
  // "taskvine_malformed_line", "taskvine_no_end", "taskvine_log" (other remarks).
  std::vector<CodedNote> CodedWarnings() const;
  const std::vector<RejectedValue>& rejected() const { return rejected_; }
  int64_t rejected_count() const { return rejected_count_; }
  int64_t backwards_count() const { return backwards_count_; }

  const std::vector<Worker>& workers() const { return workers_; }
  const std::vector<std::string>& categories() const { return categories_; }
  const TaskTable<Task>& tasks() const { return tasks_; }
  const std::vector<PerfSample>& performance() const { return perf_; }
  bool has_performance_header() const { return perf_header_valid_; }
  int64_t malformed_count() const { return malformed_count_; }
  const std::vector<MalformedLine>& malformed() const { return malformed_; }
  int64_t transaction_records() const { return records_; }
  int64_t null_disconnections() const { return null_disconnections_; }
  int64_t library_count() const { return static_cast<int64_t>(libraries_.size()); }
  int64_t partial_last_lines() const { return partial_last_lines_; }
  int manager_runs() const { return manager_runs_; }
  bool ended() const { return ended_; }  // MANAGER END read
  bool work_queue_format() const { return work_queue_format_; }

 private:
  // Dispatches a record to the handler of its kind (run_model_workers.cc: MANAGER, WORKER,
  // TRANSFER, CACHE_UPDATE; run_model_tasks.cc: CATEGORY, TASK, LIBRARY).
  void Apply(const TxnRecord& r);
  void ApplyManagerStart(const TxnRecord& r);
  void ApplyManagerEnd(const TxnRecord& r);
  void ApplyWorkerConnection(const TxnRecord& r);
  void ApplyWorkerDisconnection(const TxnRecord& r);
  void ApplyWorkerResources(const TxnRecord& r);
  void ApplyWorkerTransfer(const TxnRecord& r);
  void ApplyWorkerCacheUpdate(const TxnRecord& r);
  void ApplyCategory(const TxnRecord& r);
  void ApplyTaskReady(const TxnRecord& r);
  void ApplyTaskRunning(const TxnRecord& r);
  void ApplyTaskWaitingRetrieval(const TxnRecord& r);
  void ApplyTaskRetrievedOrDone(const TxnRecord& r);
  void ApplyRetrievedPayload(const TxnRecord& r, Attempt& a);
  void ApplyLibrary(const TxnRecord& r);
  // The warnings of CodedWarnings(), in its order (run_model_warnings.cc).
  struct AttemptCensus;
  void ImpossibleValueWarning(std::vector<CodedNote>* coded) const;
  void EarlyEndWarning(std::vector<CodedNote>* coded) const;
  void TimeBackwardsWarning(std::vector<CodedNote>* coded) const;
  void SilentDeathWarnings(std::vector<CodedNote>* coded) const;
  void SilentBeforeDisconnectWarnings(std::vector<CodedNote>* coded) const;
  void MalformedLineWarning(std::vector<CodedNote>* coded) const;
  void LogWarnings(std::vector<CodedNote>* coded) const;
  void NoEndWarning(std::vector<CodedNote>* coded) const;
  AttemptCensus CountAttempts() const;
  void ExecutionFallbackWarning(const AttemptCensus& census, std::vector<CodedNote>* coded) const;
  void CrossCheckWarnings(const AttemptCensus& census, std::vector<CodedNote>* coded) const;
  void Reject(absl::string_view field, std::string what);
  void Evidence(int worker, int64_t t_us);
  // Seconds from START (or the first record) to t_us, plus a second of clock slack: no
  // duration logged at t_us can be longer.
  double RunSoFarSeconds(int64_t t_us) const;
  void Malformed(absl::string_view file, int64_t line_number, absl::string_view reason);
  int WorkerIndex(absl::string_view name) const;  // by id, then by address; -1 if unknown
  int CategoryIndex(absl::string_view name);
  absl::string_view Intern(absl::string_view word);  // a handful of distinct words per run
  void Reset();
  void WorkerStep(Worker& w, int64_t t_us, int executing_delta, int active_delta);
  void RemoveFromWorker(Worker& w, int64_t task_id);
  void RecordWorkerCount(int64_t t_us, int new_count);
  // Tasks in READY changed: a step of queued_chunks (worker count unchanged) at t_us.
  void SetReady(int64_t t_us, int new_ready);
  int64_t EndUs() const;
  // Tracking() (cursor null) or TrackingSince(cursor); with take_steps_from (this model's
  // workers_, TakeTracking), each worker's steps are freed once its series is written.
  v1::TrackingData TrackingPoints(TrackingCursor* cursor,
                                  std::vector<Worker>* take_steps_from = nullptr) const;

  std::vector<Worker> workers_;
  absl::flat_hash_map<std::string, int> worker_by_id_;
  absl::flat_hash_map<std::string, int> worker_by_address_;
  mutable int last_worker_ = -1;  // consecutive records often name the same worker
  std::vector<std::string> categories_;
  absl::flat_hash_map<std::string, int> category_by_name_;
  int last_category_ = -1;  // consecutive records usually name the same category
  TaskTable<Task> tasks_;
  // Library instances: task id -> worker index (RUNNING without READY, or LIBRARY SENT).
  TaskTable<int> libraries_;

  int64_t start_us_ = 0, end_us_ = 0, last_us_ = 0, first_us_ = 0;
  bool ended_ = false;
  int manager_runs_ = 0;
  int64_t manager_pid_ = 0;
  bool work_queue_format_ = false;
  int connected_ = 0;
  int ready_ = 0;  // tasks in READY (not libraries)
  // Steps of (worker count, READY tasks): before and after each change, at its instant.
  std::vector<int64_t> count_us_;
  std::vector<int32_t> count_, queued_;

  double bytes_in_ = 0, bytes_out_ = 0, cache_update_bytes_ = 0;
  int64_t transfers_in_ = 0, transfers_out_ = 0, cache_updates_ = 0;
  int64_t null_disconnections_ = 0, unknown_worker_records_ = 0, records_ = 0;
  int64_t library_waiting_retrievals_ = 0;  // library instances that reached WAITING_RETRIEVAL

  bool perf_header_valid_ = false;
  PerfHeader perf_header_;
  std::vector<PerfSample> perf_;

  int64_t line_ = 0;  // transactions line being applied
  // The record of the line being parsed, kept between lines: a fresh TxnRecord per line was
  // zeroed with `rep stos` before ParseTransactionLine cleared it again (#25).
  TxnRecord parsed_;
  int64_t rejected_count_ = 0, backwards_count_ = 0;
  std::vector<RejectedValue> rejected_;  // the first kMaxMalformedKept
  std::vector<std::string> backwards_;   // the first few, as sentences
  int64_t end_line_ = 0;                 // line of MANAGER END
  bool log_complete_ = false;

  int64_t malformed_count_ = 0, partial_last_lines_ = 0;
  std::vector<MalformedLine> malformed_;
  std::vector<std::string> notes_;  // one-off remarks (several manager runs, ...)
  // Interned words (results, disconnection reasons): nodes, so their addresses are stable
  // and a log with many distinct words stays linear; shared so that copies of the model keep
  // valid string_views.
  // (The keys; the values are unused: this abseil build has no node_hash_set.)
  std::shared_ptr<absl::node_hash_map<std::string, bool>> interned_ =
      std::make_shared<absl::node_hash_map<std::string, bool>>();
  absl::string_view last_interned_;  // a key of interned_ (or empty)
};

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_RUN_MODEL_H_
