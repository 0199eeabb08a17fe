#include "tools/workqueue/workqueue_run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "collector/interruption.h"
#include "collector/measurement_session.h"
#include "collector/tool_build.h"
#include "host/host_name.h"
#include "ingest/taskvine_run.h"
#include "sample_analysis/chunking.h"
#include "tools/dataset_setup.h"
#include "tools/shell_quote.h"
#include "tools/workqueue/chunk_task.h"
#include "tools/workqueue/local_workers.h"
#include "tools/workqueue/task_command.h"
#include "tools/workqueue/task_output.h"
#include "tools/workqueue/task_resources.h"
#include "tools/workqueue/work_queue_api.h"

namespace roastcoffea {
namespace workqueue {
namespace {

struct QueueDeleter {
  void operator()(struct work_queue* q) const { work_queue_delete(q); }
};
using Queue = std::unique_ptr<struct work_queue, QueueDeleter>;

struct TaskDeleter {
  void operator()(struct work_queue_task* t) const { work_queue_task_delete(t); }
};
using Task = std::unique_ptr<struct work_queue_task, TaskDeleter>;

// Why work_queue_create failed: Work Queue only returns NULL. A port someone listens on is the
// usual cause; say so.
absl::Status ListenError(int port) {
  if (port > 0) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    const bool in_use = fd >= 0 &&
                        bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 &&
                        errno == EADDRINUSE;
    if (fd >= 0) close(fd);
    if (in_use) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--wq_port: port ", port,
          " is in use (another manager?); choose another port, or --wq_port=0 for a free one"));
    }
  }
  return absl::UnavailableError(absl::StrCat("the Work Queue manager cannot listen on port ", port,
                                             ": ", std::strerror(errno)));
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The last `limit` bytes of a task's output, on one line.
std::string OutputTail(const char* output, size_t limit = 300) {
  if (output == nullptr) return "";
  std::string text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > limit) text = "..." + text.substr(text.size() - limit);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

v1::ChunkRecord FailedRecord(const TaskChunk& chunk, const std::string& task_id,
                             const std::string& error) {
  const ChunkMetadata metadata = ChunkTaskMetadata(chunk);
  v1::ChunkRecord record;
  record.set_dataset(metadata.dataset);
  record.set_file(metadata.file);
  record.set_uuid(metadata.uuid);
  record.set_entry_start(metadata.entry_start);
  record.set_entry_stop(metadata.entry_stop);
  record.set_events(metadata.events);
  record.set_status(v1::CHUNK_STATUS_FAILED);
  record.set_error_text(error);
  record.set_task_id(task_id);
  return record;
}

// A file's size in bytes; 0 when it cannot be read (the task then reports the missing file).
int64_t FileBytes(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : 0;
}

struct PendingTask {
  size_t group = 0;
  std::string output_path;
};

absl::Status CheckOptions(const WorkQueueRunOptions& options) {
  std::vector<std::string> problems;
  if (options.chunks_per_task < 1) {
    problems.push_back(
        absl::StrCat("--chunks_per_task must be at least 1, got ", options.chunks_per_task));
  }
  if (options.local_workers < 0) {
    problems.push_back(absl::StrCat("--workers must be >= 0, got ", options.local_workers));
  }
  if (options.port < 0 || options.port > 65535) {
    problems.push_back(absl::StrCat("--wq_port must be in 0..65535, got ", options.port));
  }
  if (options.connect_timeout <= absl::ZeroDuration() ||
      options.stall_timeout <= absl::ZeroDuration() ||
      options.session.interval <= absl::ZeroDuration()) {
    problems.push_back("timeouts and the interval must be positive");
  }
  if (options.work_directory.empty()) problems.push_back("no work directory");
  if (!options.password_file.empty() && access(options.password_file.c_str(), R_OK) != 0) {
    problems.push_back(absl::StrCat("--wq_password_file: cannot read ", options.password_file, ": ",
                                    std::strerror(errno)));
  }
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  if (access(options.chunk_task_binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the chunk task program ", options.chunk_task_binary,
                     " is missing (build //tools/workqueue:chunk_task, or pass --wq_chunk_task)"));
  }
  return absl::OkStatus();
}

// The task of one group of chunks (the chunk task program and the chunks' files as cached
// inputs, its output file, one core and explicit memory and disk).
Task ChunkTask(const std::vector<TaskChunk>& chunks, size_t group,
               const std::string& chunk_task_binary, const std::string& output_path) {
  ChunkTaskArguments arguments;
  arguments.output = kChunkTaskOutput;
  arguments.chunks = chunks;
  // 2>&1: the task's output (Work Queue keeps stdout) then carries chunk_task's errors.
  Task task(work_queue_task_create((ChunkTaskCommand(arguments) + " 2>&1").c_str()));
  work_queue_task_specify_file(task.get(), chunk_task_binary.c_str(), kChunkTaskProgram,
                               WORK_QUEUE_INPUT, WORK_QUEUE_CACHE);
  int64_t events = 0;
  int64_t input_bytes = FileBytes(chunk_task_binary);
  std::set<std::string> files;
  for (const TaskChunk& chunk : chunks) {
    events += chunk.entry_stop - chunk.entry_start;
    if (files.insert(chunk.file).second) {
      input_bytes += FileBytes(chunk.file);
      work_queue_task_specify_file(task.get(), chunk.file.c_str(), chunk.input.c_str(),
                                   WORK_QUEUE_INPUT, WORK_QUEUE_CACHE);
    }
  }
  unlink(output_path.c_str());
  work_queue_task_specify_file(task.get(), output_path.c_str(), kChunkTaskOutput, WORK_QUEUE_OUTPUT,
                               WORK_QUEUE_NOCACHE);
  work_queue_task_specify_category(task.get(), kChunkCategory);
  const TaskResources resources = ChunkTaskResources(events, input_bytes);
  work_queue_task_specify_cores(task.get(), static_cast<int>(resources.cores));
  work_queue_task_specify_memory(task.get(), resources.memory_mb);
  work_queue_task_specify_disk(task.get(), resources.disk_mb);
  work_queue_task_specify_tag(task.get(), absl::StrCat("chunks-", group).c_str());
  return task;
}

// A task came back: its chunk records (or FAILED ones saying why) go to the session, its
// physics output into `merged`.
void RecordReturnedTask(const struct work_queue_task& task, const std::string& output_path,
                        const std::vector<TaskChunk>& chunks, MeasurementSession& session,
                        sample_analysis::DijetOutput* merged) {
  const std::string task_id = absl::StrCat(task.taskid);
  std::optional<std::string> task_error;
  if (task.result != WORK_QUEUE_RESULT_SUCCESS || task.return_status != 0) {
    task_error =
        absl::StrCat("Work Queue task ", task_id, " failed: ", work_queue_result_str(task.result),
                     ", exit code ", task.return_status);
    const std::string tail = OutputTail(task.output);
    if (!tail.empty()) absl::StrAppend(&*task_error, ": ", tail);
  }
  if (!task_error.has_value()) {
    absl::StatusOr<ChunkTaskOutput> output = ReadTaskOutputFile(output_path);
    if (output.ok() && output->chunk_records.size() == chunks.size()) {
      *merged += output->output;
      for (v1::ChunkRecord& record : output->chunk_records) {
        record.set_task_id(task_id);
        // The engine names the worker (its id in the logs, the same in tracking).
        record.clear_worker();
        session.RecordChunk(std::move(record));
      }
    } else {
      task_error = output.ok()
                       ? absl::StrCat("task ", task_id, " returned ", output->chunk_records.size(),
                                      " chunk records for ", chunks.size(), " chunks")
                       : std::string(output.status().message());
    }
  }
  if (task_error.has_value()) {
    for (const TaskChunk& chunk : chunks) {
      session.RecordChunk(FailedRecord(chunk, task_id, *task_error));
    }
  }
}

// What the run says about chunks it gave up or did not do.
std::vector<v1::Warning> RunWarnings(const WorkQueueRunResult& result,
                                     const std::string& interrupted_while,
                                     const WorkQueueRunOptions& options) {
  std::vector<v1::Warning> warnings;
  if (result.chunks_given_up > 0) {
    v1::Warning& coded = warnings.emplace_back();
    coded.set_code("workqueue_chunks_given_up");
    coded.set_message(absl::StrCat(result.chunks_given_up,
                                   " chunks never came back (no task returned for ",
                                   absl::FormatDuration(options.stall_timeout),
                                   "): recorded as failed; the physics result lacks them"));
  }
  if (!interrupted_while.empty()) {
    v1::Warning& coded = warnings.emplace_back();
    coded.set_code("interrupted");
    coded.set_message(absl::StrCat("interrupted (", SignalName(Interruption::signal_number()),
                                   " while ", interrupted_while, "): ", result.chunks_not_done,
                                   " chunks not done (no task is handed out after the signal: "
                                   "chunks not started then, or still running after the grace "
                                   "period of ",
                                   absl::FormatDuration(options.session.grace_period),
                                   ", were cancelled); the physics result lacks them"));
  }
  return warnings;
}

// The sample dataset's chunks, in groups of chunks_per_task: one task each. Sets the result's
// dataset directory and task count.
absl::StatusOr<std::vector<std::vector<TaskChunk>>> ChunkGroups(const WorkQueueRunOptions& options,
                                                                WorkQueueRunResult* result) {
  DatasetSetupOptions setup;
  setup.program = options.session.program_name;
  setup.handle_signals = options.session.handle_signals;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      PrepareSampleDataset(options.dataset, options.cache_dir, setup);
  if (!dataset.ok()) return dataset.status();
  result->dataset_directory = dataset->directory;
  absl::StatusOr<std::vector<sample_analysis::WorkItem>> items =
      sample_analysis::MakeChunks(*dataset, options.chunk_size);
  if (!items.ok()) return items.status();
  // Consecutive chunks share a task: they are mostly of one file, which the task opens once.
  std::vector<std::vector<TaskChunk>> groups;
  for (size_t i = 0; i < items->size(); ++i) {
    if (i % options.chunks_per_task == 0) groups.emplace_back();
    const sample_analysis::WorkItem& item = (*items)[i];
    groups.back().push_back(
        TaskChunk{item.dataset, Basename(item.file), item.file, item.entry_start, item.entry_stop});
  }
  result->tasks = static_cast<int64_t>(groups.size());
  return groups;
}

std::string OutputsDirectory(const WorkQueueRunOptions& options) {
  return options.work_directory + "/outputs";
}

// The work directory and its outputs/, without the logs of an earlier run.
absl::Status PrepareWorkDirectory(const WorkQueueRunOptions& options, WorkQueueRunResult* result) {
  for (const std::string& directory : {options.work_directory, OutputsDirectory(options)}) {
    if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cannot create ", directory, ": ", std::strerror(errno)));
    }
  }
  result->transactions_log = options.work_directory + "/" + kTransactionsLog;
  result->performance_log = options.work_directory + "/" + kPerformanceLog;
  unlink(result->transactions_log.c_str());
  unlink(result->performance_log.c_str());
  return absl::OkStatus();
}

// The manager, listening and logging; tells options.on_listening its port.
absl::StatusOr<Queue> StartManager(const WorkQueueRunOptions& options, WorkQueueRunResult* result) {
  // -1: Work Queue's "first free port" (0 would mean $WORK_QUEUE_PORT first).
  Queue queue(work_queue_create(options.port == 0 ? -1 : options.port));
  if (queue == nullptr) return ListenError(options.port);
  result->port = work_queue_port(queue.get());
  if (!work_queue_specify_transactions_log(queue.get(), result->transactions_log.c_str()) ||
      !work_queue_specify_log(queue.get(), result->performance_log.c_str())) {
    return absl::InternalError(absl::StrCat("cannot write the manager's logs in ",
                                            options.work_directory, ": ", std::strerror(errno)));
  }
  if (!options.password_file.empty() &&
      !work_queue_specify_password_file(queue.get(), options.password_file.c_str())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--wq_password_file: cannot read ", options.password_file));
  }
  if (options.on_listening) options.on_listening(result->port);
  return queue;
}

// options.local_workers work_queue_worker processes on 127.0.0.1; null for none.
absl::StatusOr<std::unique_ptr<LocalWorkers>> StartLocalWorkers(const WorkQueueRunOptions& options,
                                                                int port) {
  if (options.local_workers <= 0) return std::unique_ptr<LocalWorkers>();
  LocalWorkersOptions worker_options;
  worker_options.count = options.local_workers;
  worker_options.manager_port = port;
  worker_options.password_file = options.password_file;
  worker_options.directory = options.work_directory;
  worker_options.binary = options.worker_binary;
  worker_options.idle_timeout_seconds = static_cast<int>(
      std::max<int64_t>(30, absl::ToInt64Seconds(options.stall_timeout + options.connect_timeout)));
  return LocalWorkers::Start(worker_options);
}

// The run's measurement session (result->session), recording the chunks the tasks return.
absl::Status StartSession(const WorkQueueRunOptions& options,
                          const std::vector<std::vector<TaskChunk>>& groups,
                          WorkQueueRunResult* result) {
  SessionOptions session_options = options.session;
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["dataset_directory"] = result->dataset_directory;
  configuration["tasks"] = absl::StrCat(result->tasks);
  // The tasks run in other processes (maybe other machines), built with this build.
  session_options.in_process_worker_threads.reset();
  session_options.analysis_build = ToolBuildInfo();
  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      MeasurementSession::StartRecording("workqueue", std::move(session_options));
  if (!started.ok()) return started.status();
  result->session = *std::move(started);
  int64_t chunks = 0;
  for (const std::vector<TaskChunk>& group : groups) chunks += static_cast<int64_t>(group.size());
  result->session->set_chunks_total(chunks);
  return absl::OkStatus();
}

// The manager's loop: hands the groups out as cores free up, records the tasks that come back,
// and stops at the end, on a signal (after its grace period) or a stall.
class TaskLoop {
 public:
  TaskLoop(const WorkQueueRunOptions& options, const std::vector<std::vector<TaskChunk>>& groups,
           struct work_queue* queue, LocalWorkers* workers, WorkQueueRunResult& result)
      : options_(options),
        groups_(groups),
        outputs_(OutputsDirectory(options)),
        queue_(queue),
        workers_(workers),
        result_(result),
        session_(*result.session) {}

  // DeadlineExceeded when no worker connected within connect_timeout (the session is then
  // dropped with its checkpoint: nothing ran).
  absl::Status Run() {
    NoticeSignal("starting the run");
    while (!pending_.empty() || (interrupted_while_.empty() && next_group_ < groups_.size())) {
      if (!HandOutWork()) break;
      // Interrupted: the tasks that come back within the grace period are kept.
      if (session_.work_deadline_passed()) break;
      const bool armed = FaultArmed();
      // Armed for a fault (tests only): poll every few ms, so that worker 0 is caught while it
      // runs one of the short tasks (tasks are handed out one per free core).
      Task task(work_queue_wait(queue_, armed ? 0 : 1));
      if (armed && task == nullptr) absl::SleepFor(absl::Milliseconds(3));
      ReadStats();
      const auto now = std::chrono::steady_clock::now();
      if (armed) InjectFault();
      if (task != nullptr) {
        last_progress_ = now;
        ++returned_;
        RecordTask(*task);
        continue;
      }
      if (!interrupted_while_.empty()) continue;
      if (!any_worker_ && now - start_ > absl::ToChronoSeconds(options_.connect_timeout)) {
        return NoWorkerConnected();
      }
      if (any_worker_ && now - last_progress_ > absl::ToChronoSeconds(options_.stall_timeout)) {
        break;
      }
    }
    return absl::OkStatus();
  }

  // After Run: cancels the tasks still out. Interrupted, their chunks are not done (no record
  // stands for them); stalled, they and the groups never sent are FAILED records.
  void GiveUpTasksStillOut() {
    if (!interrupted_while_.empty()) {
      for (const auto& [id, entry] : pending_) {
        Task cancelled(work_queue_cancel_by_taskid(queue_, id));
        result_.chunks_not_done += static_cast<int64_t>(groups_[entry.group].size());
      }
      pending_.clear();
    }
    for (const auto& [id, entry] : pending_) {
      Task cancelled(work_queue_cancel_by_taskid(queue_, id));
      for (const TaskChunk& chunk : groups_[entry.group]) {
        session_.RecordChunk(FailedRecord(
            chunk, absl::StrCat(id),
            absl::StrCat("Work Queue task ", id, " never came back: no task returned for ",
                         absl::FormatDuration(options_.stall_timeout), "; given up")));
        ++result_.chunks_given_up;
      }
    }
    pending_.clear();
    for (; next_group_ < groups_.size(); ++next_group_) {
      for (const TaskChunk& chunk : groups_[next_group_]) {
        session_.RecordChunk(
            FailedRecord(chunk, "",
                         absl::StrCat("never sent to a worker: no task returned for ",
                                      absl::FormatDuration(options_.stall_timeout), "; given up")));
        ++result_.chunks_given_up;
      }
    }
  }

  // Where the run was when the first signal was noticed; empty: no signal.
  const std::string& interrupted_while() const { return interrupted_while_; }
  sample_analysis::DijetOutput TakeOutput() { return std::move(merged_); }

 private:
  void NoticeSignal(const char* phase) {
    if (session_.interrupted() && interrupted_while_.empty()) interrupted_while_ = phase;
  }

  // A task is submitted only when a core is free for it, so that Work Queue never holds a
  // waiting task it could hand out after a signal (the README's "no new work after the first
  // signal"); a task that waits to start costs nothing here, chunk tasks are short. After a
  // signal: the groups not sent are not done and the tasks not started are cancelled. False
  // when nothing is left to wait for.
  bool HandOutWork() {
    NoticeSignal("running");
    if (interrupted_while_.empty()) {
      while (pending_.size() < capacity_ && next_group_ < groups_.size()) Submit(next_group_++);
      // Work Queue hands tasks out only inside work_queue_wait: a signal that came while they
      // were submitted still finds them waiting.
      NoticeSignal("running");
    }
    if (interrupted_while_.empty()) return true;
    for (; next_group_ < groups_.size(); ++next_group_) {
      result_.chunks_not_done += static_cast<int64_t>(groups_[next_group_].size());
    }
    CancelWaiting();
    return !pending_.empty();
  }

  void Submit(size_t g) {
    PendingTask entry{g, absl::StrCat(outputs_, "/task-", g, ".pb")};
    Task task = ChunkTask(groups_[g], g, options_.chunk_task_binary, entry.output_path);
    const int id = work_queue_submit(queue_, task.release());  // the queue owns it now
    pending_.emplace(id, std::move(entry));
  }

  // Interrupted: the tasks not started yet are cancelled at once; those running may come back
  // within the grace period.
  void CancelWaiting() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (work_queue_task_state(queue_, it->first) != WORK_QUEUE_TASK_READY) {
        ++it;
        continue;
      }
      Task cancelled(work_queue_cancel_by_taskid(queue_, it->first));
      result_.chunks_not_done += static_cast<int64_t>(groups_[it->second.group].size());
      it = pending_.erase(it);
    }
  }

  bool FaultArmed() const {
    return workers_ != nullptr && !fault_done_ &&
           options_.fault.kind != WorkQueueRunOptions::Fault::Kind::kNone &&
           returned_ >= options_.fault.after_tasks;
  }

  // A killed worker loses a task only in flight: it is killed when it has a child process (the
  // task's shell). A paused one hangs the task it holds or the next one the manager hands it (it
  // looks free, and tasks go out one per free core), so it is paused at once: waiting to see a
  // child raced the tasks, which on a quiet machine all finished between two looks.
  void InjectFault() {
    if (options_.fault.kind == WorkQueueRunOptions::Fault::Kind::kKillWorker) {
      if (!workers_->RunsATask(0)) return;
      workers_->Kill(0);
    } else {
      workers_->Pause(0);
    }
    fault_done_ = true;
  }

  // Tasks out at most: the connected workers' cores (one task until a worker reports them).
  void ReadStats() {
    work_queue_stats stats;
    work_queue_get_stats(queue_, &stats);
    any_worker_ = any_worker_ || stats.workers_connected > 0;
    result_.peak_workers = std::max(result_.peak_workers, stats.workers_connected);
    capacity_ = static_cast<size_t>(std::max<int64_t>(stats.total_cores, 1));
  }

  void RecordTask(const struct work_queue_task& task) {
    auto it = pending_.find(task.taskid);
    if (it == pending_.end()) return;  // not ours (cannot happen: we submit all)
    RecordReturnedTask(task, it->second.output_path, groups_[it->second.group], session_, &merged_);
    unlink(it->second.output_path.c_str());
    pending_.erase(it);
  }

  absl::Status NoWorkerConnected() {
    // The queue owns the submitted tasks and does not free them when it is deleted.
    for (const auto& [id, unused] : pending_) {
      Task cancelled(work_queue_cancel_by_taskid(queue_, id));
    }
    // Nothing ran: no checkpoint is left behind for it.
    const std::string checkpoint = session_.checkpoint_directory();
    result_.session.reset();
    std::error_code ignored;
    if (!checkpoint.empty()) std::filesystem::remove_all(checkpoint, ignored);
    return absl::DeadlineExceededError(absl::StrCat(
        "no Work Queue worker connected to port ", result_.port, " within ",
        absl::FormatDuration(options_.connect_timeout),
        "; start one with: ", WorkerCommand(HostName(), result_.port, options_.password_file),
        (options_.local_workers > 0
             ? absl::StrCat(" (the ", options_.local_workers,
                            " local workers did not connect: see their logs in ",
                            options_.work_directory, ")")
             : "")));
  }

  const WorkQueueRunOptions& options_;
  const std::vector<std::vector<TaskChunk>>& groups_;
  const std::string outputs_;
  struct work_queue* const queue_;
  LocalWorkers* const workers_;  // null: no local workers
  WorkQueueRunResult& result_;
  MeasurementSession& session_;
  std::map<int, PendingTask> pending_;  // submitted, not back; by Work Queue task id
  size_t next_group_ = 0;               // groups_[next_group_..] are not submitted yet
  std::string interrupted_while_;
  sample_analysis::DijetOutput merged_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_progress_ = start_;
  bool any_worker_ = false;
  bool fault_done_ = false;
  int64_t returned_ = 0;
  size_t capacity_ = 1;
};

// The manager's logs, complete once it is shut down, are the engine's record of the run: the
// session joins them with the chunk records and measures.
absl::StatusOr<WorkQueueRunResult> MeasureFromLogs(const WorkQueueRunOptions& options,
                                                   const std::string& interrupted_while,
                                                   sample_analysis::DijetOutput output,
                                                   WorkQueueRunResult result) {
  TaskVineRunOptions logs;
  logs.logs = result.transactions_log + "," + result.performance_log;
  logs.chunk_category = kChunkCategory;
  logs.interval = options.session.interval;
  absl::StatusOr<RawRun> record = ReadFinishedTaskVineRun(logs);
  if (!record.ok()) return record.status();
  RunOutputs run_outputs;
  run_outputs.engine_record = *std::move(record);
  run_outputs.warnings = RunWarnings(result, interrupted_while, options);
  absl::StatusOr<MeasuredRun> measured = result.session->FinishRun(std::move(run_outputs));
  if (!measured.ok()) return measured.status();
  result.run = *std::move(measured);
  (*result.run.measurement.mutable_metadata()->mutable_configuration())["peak_workers"] =
      absl::StrCat(result.peak_workers);
  for (size_t i = 0; i < result.run.chunks.size(); ++i) {
    result.lost_attempts += result.run.chunks.attempt(i);
  }
  result.output = std::move(output);
  return result;
}

}  // namespace

absl::Status KeepRunFiles(const WorkQueueRunResult& result, const std::string& directory) {
  const std::string target = directory + "/workqueue";
  if (mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", target, ": ", std::strerror(errno)));
  }
  for (const auto& [from, name] :
       {std::pair<std::string, const char*>{result.transactions_log, kTransactionsLog},
        {result.performance_log, kPerformanceLog}}) {
    std::error_code error;
    std::filesystem::copy_file(from, target + "/" + name,
                               std::filesystem::copy_options::overwrite_existing, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot copy ", from, " to ", target, ": ", error.message()));
    }
  }
  ChunkTaskOutput physics;
  physics.output = result.output;
  return WriteTaskOutputFile(physics, target + "/dijet_output.pb");
}

std::string WorkerCommand(const std::string& host, int port, const std::string& password_file) {
  return absl::StrCat(
      "work_queue_worker",
      password_file.empty() ? "" : absl::StrCat(" --password ", ShellQuote(password_file)), " ",
      ShellQuote(host), " ", port);
}

absl::StatusOr<WorkQueueRunResult> RunWorkQueueSampleAnalysis(const WorkQueueRunOptions& options) {
  if (absl::Status valid = CheckOptions(options); !valid.ok()) return valid;
  WorkQueueRunResult result;
  absl::StatusOr<std::vector<std::vector<TaskChunk>>> groups = ChunkGroups(options, &result);
  if (!groups.ok()) return groups.status();
  if (absl::Status ready = PrepareWorkDirectory(options, &result); !ready.ok()) return ready;
  absl::StatusOr<Queue> queue = StartManager(options, &result);
  if (!queue.ok()) return queue.status();
  absl::StatusOr<std::unique_ptr<LocalWorkers>> workers = StartLocalWorkers(options, result.port);
  if (!workers.ok()) return workers.status();
  // From here on a signal stops the run and what was done is measured (see the header).
  if (absl::Status started = StartSession(options, *groups, &result); !started.ok()) {
    return started;
  }
  TaskLoop loop(options, *groups, queue->get(), workers->get(), result);
  if (absl::Status ran = loop.Run(); !ran.ok()) return ran;
  loop.GiveUpTasksStillOut();
  work_queue_shut_down_workers(queue->get(), 0);
  queue->reset();  // writes MANAGER END and closes the logs
  if (*workers != nullptr) (*workers)->Stop();
  return MeasureFromLogs(options, loop.interrupted_while(), loop.TakeOutput(), std::move(result));
}

}  // namespace workqueue
}  // namespace roastcoffea
