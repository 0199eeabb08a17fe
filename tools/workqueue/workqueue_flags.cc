#include "tools/workqueue/workqueue_flags.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "host/host_facts.h"

ABSL_FLAG(int, workers, roastcoffea::host::UsableWholeCpus(),
          "--backend=workqueue: work_queue_worker processes to start on 127.0.0.1, one core "
          "each (default: the CPUs this process may use); 0: start none and wait for workers "
          "started elsewhere (collect prints the command).");
ABSL_FLAG(int, chunks_per_task, roastcoffea::workqueue::WorkQueueConfig{}.chunks_per_task,
          "--backend=workqueue: chunks each Work Queue task processes (>= 1). More spreads the "
          "per-task overhead over several chunks; 1 gives every chunk a task of its own.");
ABSL_FLAG(int, wq_port, roastcoffea::workqueue::WorkQueueConfig{}.port,
          "--backend=workqueue: the manager's port (Work Queue's default is 9123); 0: the first "
          "free port from 1024.");
ABSL_FLAG(std::string, wq_password_file, roastcoffea::workqueue::WorkQueueConfig{}.password_file,
          "--backend=workqueue: workers must present the password in this file "
          "(work_queue_worker --password FILE).");
ABSL_FLAG(double, wq_connect_timeout, roastcoffea::workqueue::WorkQueueConfig{}.connect_timeout,
          "--backend=workqueue: seconds to wait for the first worker to connect (> 0).");
ABSL_FLAG(double, wq_stall_timeout, roastcoffea::workqueue::WorkQueueConfig{}.stall_timeout,
          "--backend=workqueue: when no task came back for this many seconds, the chunks still "
          "out are reported as failed and the measurement is saved (> 0).");
ABSL_FLAG(std::string, wq_work_dir, roastcoffea::workqueue::WorkQueueConfig{}.work_dir,
          "--backend=workqueue: directory for the manager's logs, task outputs and the local "
          "workers' sandboxes, kept (default: a temporary directory, removed; the logs are "
          "copied into the measurement directory).");
ABSL_FLAG(std::string, wq_chunk_task, roastcoffea::workqueue::WorkQueueConfig{}.chunk_task,
          "--backend=workqueue: the chunk task program to ship to the workers (default: "
          "//tools/workqueue:chunk_task built with collect).");
ABSL_FLAG(std::string, wq_testing_fault, roastcoffea::workqueue::WorkQueueConfig{}.testing_fault,
          "--backend=workqueue, for tests: kill:K (SIGKILL) or stop:K (SIGSTOP) local worker 0 "
          "once K tasks came back (kill: while it runs a task; stop: at once, so it hangs the "
          "task it holds or is handed next).");

namespace roastcoffea {
namespace workqueue {
namespace {

bool Executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

bool PositiveSeconds(double seconds) { return std::isfinite(seconds) && seconds > 0; }

}  // namespace

std::string FindChunkTaskProgram() {
  constexpr char kRelative[] = "tools/workqueue/chunk_task";
  std::vector<std::string> candidates;
  if (const char* runfiles = getenv("RUNFILES_DIR"); runfiles != nullptr && *runfiles) {
    candidates.push_back(absl::StrCat(runfiles, "/roastcoffea/", kRelative));
  }
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length > 0) {
    const std::string exe(self, static_cast<size_t>(length));
    candidates.push_back(absl::StrCat(exe, ".runfiles/roastcoffea/", kRelative));
    const size_t slash = exe.rfind('/');
    // bazel-bin/tools/collect -> bazel-bin/tools/workqueue/chunk_task
    if (slash != std::string::npos) {
      candidates.push_back(absl::StrCat(exe.substr(0, slash), "/workqueue/chunk_task"));
    }
  }
  for (const std::string& candidate : candidates) {
    if (Executable(candidate)) return candidate;
  }
  return "";
}

absl::StatusOr<WorkQueueRunOptions> MakeWorkQueueRunOptions(
    const WorkQueueConfig& config,
    const std::function<std::string(const std::string&)>& resolve_path, bool* temporary) {
  auto path_flag = [&](const std::string& value) {
    return value.empty() ? value : resolve_path(value);
  };
  *temporary = false;
  std::vector<std::string> problems;
  WorkQueueRunOptions options;
  options.local_workers = config.workers;
  if (options.local_workers < 0) {
    problems.push_back(absl::StrCat("--workers must be >= 0, got ", options.local_workers));
  }
  options.chunks_per_task = config.chunks_per_task;
  if (options.chunks_per_task < 1) {
    problems.push_back(
        absl::StrCat("--chunks_per_task must be at least 1, got ", options.chunks_per_task));
  }
  options.port = config.port;
  if (options.port < 0 || options.port > 65535) {
    problems.push_back(absl::StrCat("--wq_port must be in 0..65535, got ", options.port));
  }
  options.password_file = path_flag(config.password_file);
  if (!options.password_file.empty() && access(options.password_file.c_str(), R_OK) != 0) {
    problems.push_back(absl::StrCat("--wq_password_file: cannot read ", options.password_file, ": ",
                                    std::strerror(errno)));
  }
  const double connect = config.connect_timeout;
  const double stall = config.stall_timeout;
  if (!PositiveSeconds(connect)) {
    problems.push_back(absl::StrCat("--wq_connect_timeout must be > 0 seconds, got ", connect));
  }
  if (!PositiveSeconds(stall)) {
    problems.push_back(absl::StrCat("--wq_stall_timeout must be > 0 seconds, got ", stall));
  }
  options.chunk_task_binary = path_flag(config.chunk_task);
  if (options.chunk_task_binary.empty()) options.chunk_task_binary = FindChunkTaskProgram();
  if (!Executable(options.chunk_task_binary)) {
    problems.push_back(
        options.chunk_task_binary.empty()
            ? std::string("the chunk task program was not found beside collect: build "
                          "//tools/workqueue:chunk_task and pass --wq_chunk_task=PATH")
            : absl::StrCat("--wq_chunk_task: ", options.chunk_task_binary,
                           " is not an executable file"));
  }
  if (const std::string& fault = config.testing_fault; !fault.empty()) {
    const std::vector<std::string> parts = absl::StrSplit(fault, absl::MaxSplits(':', 1));
    using Kind = WorkQueueRunOptions::Fault::Kind;
    options.fault.kind = parts[0] == "kill"   ? Kind::kKillWorker
                         : parts[0] == "stop" ? Kind::kStopWorker
                                              : Kind::kNone;
    if (options.fault.kind == Kind::kNone || parts.size() != 2 ||
        !absl::SimpleAtoi(parts[1], &options.fault.after_tasks) || options.fault.after_tasks < 0) {
      problems.push_back(
          absl::StrCat("--wq_testing_fault must be kill:K or stop:K (K >= 0), got '", fault, "'"));
    }
  }
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  options.connect_timeout = absl::Seconds(connect);
  options.stall_timeout = absl::Seconds(stall);

  options.work_directory = path_flag(config.work_dir);
  if (options.work_directory.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/roastcoffea-workqueue-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory: ", std::strerror(errno)));
    }
    options.work_directory = pattern;
    *temporary = true;
  }
  return options;
}

}  // namespace workqueue
}  // namespace roastcoffea
