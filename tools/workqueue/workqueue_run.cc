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
  DatasetSetupOptions setup;
  setup.program = options.session.program_name;
  setup.handle_signals = options.session.handle_signals;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      PrepareSampleDataset(options.dataset, options.cache_dir, setup);
  if (!dataset.ok()) return dataset.status();
  result.dataset_directory = dataset->directory;
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
  result.tasks = static_cast<int64_t>(groups.size());

  const std::string outputs = options.work_directory + "/outputs";
  for (const std::string& directory : {options.work_directory, outputs}) {
    if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cannot create ", directory, ": ", std::strerror(errno)));
    }
  }
  result.transactions_log = options.work_directory + "/" + kTransactionsLog;
  result.performance_log = options.work_directory + "/" + kPerformanceLog;
  unlink(result.transactions_log.c_str());
  unlink(result.performance_log.c_str());

  // -1: Work Queue's "first free port" (0 would mean $WORK_QUEUE_PORT first).
  Queue queue(work_queue_create(options.port == 0 ? -1 : options.port));
  if (queue == nullptr) return ListenError(options.port);
  result.port = work_queue_port(queue.get());
  if (!work_queue_specify_transactions_log(queue.get(), result.transactions_log.c_str()) ||
      !work_queue_specify_log(queue.get(), result.performance_log.c_str())) {
    return absl::InternalError(absl::StrCat("cannot write the manager's logs in ",
                                            options.work_directory, ": ", std::strerror(errno)));
  }
  if (!options.password_file.empty() &&
      !work_queue_specify_password_file(queue.get(), options.password_file.c_str())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--wq_password_file: cannot read ", options.password_file));
  }
  if (options.on_listening) options.on_listening(result.port);

  std::unique_ptr<LocalWorkers> workers;
  if (options.local_workers > 0) {
    LocalWorkersOptions worker_options;
    worker_options.count = options.local_workers;
    worker_options.manager_port = result.port;
    worker_options.password_file = options.password_file;
    worker_options.directory = options.work_directory;
    worker_options.binary = options.worker_binary;
    worker_options.idle_timeout_seconds = static_cast<int>(std::max<int64_t>(
        30, absl::ToInt64Seconds(options.stall_timeout + options.connect_timeout)));
    absl::StatusOr<std::unique_ptr<LocalWorkers>> started = LocalWorkers::Start(worker_options);
    if (!started.ok()) return started.status();
    workers = *std::move(started);
  }

  // A task is submitted only when a core is free for it, so that Work Queue never holds a
  // waiting task it could hand out after a signal (the README's "no new work after the first
  // signal"); a task that waits to start costs nothing here, chunk tasks are short.
  std::map<int, PendingTask> pending;  // submitted, not back; by Work Queue task id
  size_t next_group = 0;               // groups[next_group..] are not submitted yet
  auto submit = [&](size_t g) {
    PendingTask entry{g, absl::StrCat(outputs, "/task-", g, ".pb")};
    Task task = ChunkTask(groups[g], g, options.chunk_task_binary, entry.output_path);
    const int id = work_queue_submit(queue.get(), task.release());  // the queue owns it now
    pending.emplace(id, std::move(entry));
  };
  // Interrupted: the tasks not started yet are cancelled at once; those running may come back
  // within the grace period.
  auto cancel_waiting = [&] {
    for (auto it = pending.begin(); it != pending.end();) {
      if (work_queue_task_state(queue.get(), it->first) != WORK_QUEUE_TASK_READY) {
        ++it;
        continue;
      }
      Task cancelled(work_queue_cancel_by_taskid(queue.get(), it->first));
      result.chunks_not_done += static_cast<int64_t>(groups[it->second.group].size());
      it = pending.erase(it);
    }
  };

  // From here on a signal stops the run and what was done is measured (see the header).
  SessionOptions session_options = options.session;
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["dataset_directory"] = result.dataset_directory;
  configuration["tasks"] = absl::StrCat(result.tasks);
  // The tasks run in other processes (maybe other machines), built with this build.
  session_options.in_process_worker_threads.reset();
  session_options.analysis_build = ToolBuildInfo();
  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      MeasurementSession::StartRecording("workqueue", std::move(session_options));
  if (!started.ok()) return started.status();
  result.session = *std::move(started);
  MeasurementSession& session = *result.session;
  session.set_chunks_total(static_cast<int64_t>(items->size()));
  // Where the run was when the first signal was noticed; empty: no signal yet.
  std::string interrupted_while;
  auto notice_signal = [&](const char* phase) {
    if (session.interrupted() && interrupted_while.empty()) interrupted_while = phase;
  };
  sample_analysis::DijetOutput merged;
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  bool any_worker = false;
  bool killed = false;
  int64_t returned = 0;
  // Tasks out at most: the connected workers' cores (one task until a worker reports them).
  size_t capacity = 1;
  notice_signal("starting the run");
  while (!pending.empty() || (interrupted_while.empty() && next_group < groups.size())) {
    notice_signal("running");
    if (interrupted_while.empty()) {
      while (pending.size() < capacity && next_group < groups.size()) submit(next_group++);
      // Work Queue hands tasks out only inside work_queue_wait: a signal that came while they
      // were submitted still finds them waiting.
      notice_signal("running");
    }
    if (!interrupted_while.empty()) {
      for (; next_group < groups.size(); ++next_group) {
        result.chunks_not_done += static_cast<int64_t>(groups[next_group].size());
      }
      cancel_waiting();
      if (pending.empty()) break;
    }
    // Interrupted: the tasks that come back within the grace period are kept.
    if (session.work_deadline_passed()) break;
    const bool armed = workers != nullptr && !killed &&
                       options.fault.kind != WorkQueueRunOptions::Fault::Kind::kNone &&
                       returned >= options.fault.after_tasks;
    // Armed for a fault (tests only): poll every few ms, so that worker 0 is caught while it
    // runs one of the short tasks (tasks are handed out one per free core).
    Task task(work_queue_wait(queue.get(), armed ? 0 : 1));
    if (armed && task == nullptr) absl::SleepFor(absl::Milliseconds(3));
    work_queue_stats stats;
    work_queue_get_stats(queue.get(), &stats);
    any_worker = any_worker || stats.workers_connected > 0;
    result.peak_workers = std::max(result.peak_workers, stats.workers_connected);
    capacity = static_cast<size_t>(std::max<int64_t>(stats.total_cores, 1));
    const auto now = std::chrono::steady_clock::now();
    // Worker 0 runs a task when it has a child process (the task's shell): then the fault
    // certainly hits a task in flight.
    if (armed && workers->RunsATask(0)) {
      if (options.fault.kind == WorkQueueRunOptions::Fault::Kind::kKillWorker) {
        workers->Kill(0);
      } else {
        workers->Pause(0);
      }
      killed = true;
    }
    if (task == nullptr) {
      if (!interrupted_while.empty()) continue;
      if (!any_worker && now - start > absl::ToChronoSeconds(options.connect_timeout)) {
        // The queue owns the submitted tasks and does not free them when it is deleted.
        for (const auto& [id, unused] : pending) {
          Task cancelled(work_queue_cancel_by_taskid(queue.get(), id));
        }
        // Nothing ran: no checkpoint is left behind for it.
        const std::string checkpoint = session.checkpoint_directory();
        result.session.reset();
        std::error_code ignored;
        if (!checkpoint.empty()) std::filesystem::remove_all(checkpoint, ignored);
        return absl::DeadlineExceededError(absl::StrCat(
            "no Work Queue worker connected to port ", result.port, " within ",
            absl::FormatDuration(options.connect_timeout),
            "; start one with: ", WorkerCommand(HostName(), result.port, options.password_file),
            (options.local_workers > 0
                 ? absl::StrCat(" (the ", options.local_workers,
                                " local workers did not connect: see their logs in ",
                                options.work_directory, ")")
                 : "")));
      }
      if (any_worker && now - last_progress > absl::ToChronoSeconds(options.stall_timeout)) break;
      continue;
    }
    last_progress = now;
    ++returned;
    auto it = pending.find(task->taskid);
    if (it == pending.end()) continue;  // not ours (cannot happen: we submit all)
    const std::vector<TaskChunk>& chunks = groups[it->second.group];
    RecordReturnedTask(*task, it->second.output_path, chunks, session, &merged);
    unlink(it->second.output_path.c_str());
    pending.erase(it);
  }
  if (!interrupted_while.empty()) {
    // Interrupted: the chunks still out are not done; no record stands for them.
    for (const auto& [id, entry] : pending) {
      Task cancelled(work_queue_cancel_by_taskid(queue.get(), id));
      result.chunks_not_done += static_cast<int64_t>(groups[entry.group].size());
    }
    pending.clear();
  }
  // Stalled: the chunks still out are reported, not waited for.
  for (const auto& [id, entry] : pending) {
    Task cancelled(work_queue_cancel_by_taskid(queue.get(), id));
    for (const TaskChunk& chunk : groups[entry.group]) {
      session.RecordChunk(FailedRecord(
          chunk, absl::StrCat(id),
          absl::StrCat("Work Queue task ", id, " never came back: no task returned for ",
                       absl::FormatDuration(options.stall_timeout), "; given up")));
      ++result.chunks_given_up;
    }
  }
  pending.clear();
  for (; next_group < groups.size(); ++next_group) {
    for (const TaskChunk& chunk : groups[next_group]) {
      session.RecordChunk(
          FailedRecord(chunk, "",
                       absl::StrCat("never sent to a worker: no task returned for ",
                                    absl::FormatDuration(options.stall_timeout), "; given up")));
      ++result.chunks_given_up;
    }
  }
  work_queue_shut_down_workers(queue.get(), 0);
  queue.reset();  // writes MANAGER END and closes the logs
  if (workers != nullptr) workers->Stop();

  // The manager's logs are complete now: they are the engine's record of the run.
  TaskVineRunOptions logs;
  logs.logs = result.transactions_log + "," + result.performance_log;
  logs.chunk_category = kChunkCategory;
  logs.interval = options.session.interval;
  absl::StatusOr<RawRun> record = ReadFinishedTaskVineRun(logs);
  if (!record.ok()) return record.status();
  RunOutputs run_outputs;
  run_outputs.engine_record = *std::move(record);
  run_outputs.warnings = RunWarnings(result, interrupted_while, options);
  absl::StatusOr<v1::Measurement> measurement = session.Finish(std::move(run_outputs));
  if (!measurement.ok()) return measurement.status();
  result.measurement = *std::move(measurement);
  (*result.measurement.mutable_metadata()->mutable_configuration())["peak_workers"] =
      absl::StrCat(result.peak_workers);
  for (const v1::ChunkRecord& record : result.measurement.chunks()) {
    result.lost_attempts += record.attempt();
  }
  result.output = std::move(merged);
  return result;
}

}  // namespace workqueue
}  // namespace roastcoffea
