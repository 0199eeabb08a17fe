// The built-in sample analysis run on Work Queue (collect --backend=workqueue): a manager (this
// process, Work Queue's C API) sends one task per group of chunks to work_queue_worker
// processes; each task runs //tools/workqueue:chunk_task, which processes its chunks with the
// dijet processor under //instrumentation chunk tracking and returns the output and the chunk
// records as an output file. The manager merges them as the thread pool does, writes its
// transactions and performance logs, reads them back with the TaskVine/Work Queue backend
// (tracking, fine metrics, the engine's view of every task), joins each chunk record to its
// task by id (worker, attempts) and assembles the measurement like every other mode.
//
// Faults: a worker that dies loses its tasks, which Work Queue runs again elsewhere (the
// record's `attempt` counts the lost tries); a chunk whose processor fails has a FAILED record
// with the processor's error; a task that fails as a whole (crash, missing output) gives FAILED
// records with Work Queue's result and the task's output; when no task comes back for
// `stall_timeout`, the chunks still out are given up (FAILED, "never came back") and the
// measurement is still assembled.
//
// Tasks are submitted as cores free up (at most one per connected core), each asking for one
// core and explicit memory and disk (task_resources.h).
//
// The run is measured by one MeasurementSession (collector/measurement_session.h, started with
// StartRecording): each chunk record is given to it as its task comes back (so the run has the
// session's checkpoint and live status), and at the end the manager's logs are read
// (ingest/taskvine_run.h) as the engine's record, which the session joins and measures like
// every other run.
//
// Interruption (session.handle_signals): the first SIGINT/SIGTERM stops the run handing out
// work: no task is submitted any more, those not started are cancelled at once, the running
// ones that come back within the session's grace_period are kept, the others are cancelled
// (their chunks are counted in a warning, as "not done"), and the measurement of what was done
// is made from the manager's logs as usual, marked interrupted. A second signal exits at once.
// The handlers stay until the session is destroyed, so that the caller's save is not cut short
// either.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_RUN_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_RUN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "aggregation/measure.h"
#include "collector/interruption.h"
#include "collector/measurement_session.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace workqueue {

// Tasks of this category are chunks (the TaskVine backend's default chunk category).
inline constexpr char kChunkCategory[] = "processing";
// The logs the manager writes into its work directory.
inline constexpr char kTransactionsLog[] = "transactions.log";
inline constexpr char kPerformanceLog[] = "performance.log";

struct WorkQueueRunOptions {
  sample_analysis::SampleDatasetSpec dataset;
  std::string cache_dir;
  int64_t chunk_size = 25000;
  // Chunks per task (>= 1). One keeps a chunk's record joined to a task of its own; more
  // spreads the per-task overhead (sandbox, process start, transfers) over several chunks.
  int chunks_per_task = 1;
  // Work_queue_worker processes to start on 127.0.0.1 (>= 0). 0: wait for workers started
  // elsewhere (see on_listening).
  int local_workers = 1;
  // The manager's port; 0: the first free one from 1024 (Work Queue's own rule for 0 is
  // $WORK_QUEUE_PORT, else the first free one).
  int port = 0;
  // Workers must present this password (work_queue_worker --password FILE). Empty: none.
  std::string password_file;
  // //tools/workqueue:chunk_task, shipped to the workers as a cached input.
  std::string chunk_task_binary;
  std::string worker_binary = "/usr/bin/work_queue_worker";
  // Logs, task outputs and the local workers' sandboxes (created; must not be empty).
  std::string work_directory;
  // Nothing ran when no worker connected within this.
  absl::Duration connect_timeout = absl::Seconds(60);
  // The chunks still out are given up when no task came back for this long.
  absl::Duration stall_timeout = absl::Seconds(120);
  // Told the manager's port once it listens, before any worker is started; e.g. to print the
  // work_queue_worker command for --workers=0.
  std::function<void(int port)> on_listening;
  // Fault injection for tests: once `after_tasks` tasks came back, at a moment when local
  // worker 0 runs a task, it is killed (SIGKILL: its task is lost and runs
  // again elsewhere) or stopped (SIGSTOP: its task never comes back).
  struct Fault {
    enum class Kind { kNone, kKillWorker, kStopWorker };
    Kind kind = Kind::kNone;
    int after_tasks = 0;
  };
  Fault fault;
  // The session's (metadata, output directory, interval, signals and grace period, checkpoint,
  // live view); the run adds its dataset directory, task count and build.
  SessionOptions session;
};

struct WorkQueueRunResult {
  // Finished: Save the measurement with it (it also decides what an interruption saves).
  std::unique_ptr<MeasurementSession> session;
  // Like SampleRunResult::run; backend "workqueue".
  MeasuredRun run;
  sample_analysis::DijetOutput output;
  std::string dataset_directory;
  int port = 0;
  int64_t tasks = 0;
  // Chunks whose task never came back within stall_timeout (FAILED records).
  int64_t chunks_given_up = 0;
  // Lost attempts (workers that died with the task), over all tasks.
  int64_t lost_attempts = 0;
  int peak_workers = 0;
  // <work_directory>/transactions.log and performance.log.
  std::string transactions_log;
  std::string performance_log;
  // Interrupted: chunks not done (their tasks cancelled). measurement.metadata() says so too.
  int64_t chunks_not_done = 0;
  // A signal came (during the run, or since: during the caller's save).
  bool interrupted() const { return session != nullptr && session->interrupted(); }
};

// Errors: InvalidArgument naming the option; FailedPrecondition when the port is in use (named)
// or the chunk task program is missing; DeadlineExceeded when no worker connected within
// connect_timeout (saying how to start one); Cancelled when a signal came while the sample
// dataset was generated (nothing measured); the dataset's and the backend's errors.
absl::StatusOr<WorkQueueRunResult> RunWorkQueueSampleAnalysis(const WorkQueueRunOptions& options);

// Copies the manager's two logs into <directory>/workqueue/ (transactions.log,
// performance.log), with the merged physics output as dijet_output.pb (a TaskOutput without
// chunk records), so that a saved measurement keeps its engine record.
absl::Status KeepRunFiles(const WorkQueueRunResult& result, const std::string& directory);

// The work_queue_worker command that attaches a worker to a manager on `host`:`port`.
std::string WorkerCommand(const std::string& host, int port, const std::string& password_file);

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_WORKQUEUE_RUN_H_
