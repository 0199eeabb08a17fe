#include "tools/workqueue/local_workers.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace roastcoffea {
namespace workqueue {
namespace {

absl::StatusOr<pid_t> SpawnWorker(const LocalWorkersOptions& options, int index) {
  const std::string workdir = absl::StrCat(options.directory, "/worker-", index);
  if (mkdir(workdir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", workdir, ": ", std::strerror(errno)));
  }
  const std::string log = absl::StrCat(options.directory, "/worker-", index, ".log");
  std::vector<std::string> args = {options.binary,
                                   "--single-shot",
                                   "--parent-death",
                                   absl::StrCat("--timeout=", options.idle_timeout_seconds),
                                   absl::StrCat("--cores=", options.cores_per_worker),
                                   "--workdir=" + workdir};
  if (!options.password_file.empty()) args.push_back("--password=" + options.password_file);
  args.push_back(options.manager_host);
  args.push_back(absl::StrCat(options.manager_port));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // Own process group: Ctrl-C on collect's terminal reaches collect only, which then stops the
  // workers itself after saving the measurement. Default signal mask and dispositions.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", options.binary, ": ", std::strerror(error)));
  }
  return pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalWorkers>> LocalWorkers::Start(
    const LocalWorkersOptions& options) {
  if (options.count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("local workers: count must be at least 1, got ", options.count));
  }
  if (options.manager_port < 1 || options.manager_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("local workers: bad manager port ", options.manager_port));
  }
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        options.binary,
        " not found: install Debian's coop-computing-tools (./bazelw installs it), or start "
        "workers yourself with --workers=0"));
  }
  std::unique_ptr<LocalWorkers> workers(new LocalWorkers({}));
  for (int i = 0; i < options.count; ++i) {
    absl::StatusOr<pid_t> pid = SpawnWorker(options, i);
    if (!pid.ok()) return pid.status();  // the destructor stops those already started
    workers->pids_.push_back(*pid);
  }
  return workers;
}

LocalWorkers::~LocalWorkers() { Stop(); }

void LocalWorkers::Kill(int index) {
  if (index < 0 || index >= size() || pids_[index] <= 0) return;
  kill(-pids_[index], SIGKILL);
}

bool LocalWorkers::RunsATask(int index) const {
  if (index < 0 || index >= size() || pids_[index] <= 0) return false;
  const std::string parent = absl::StrCat(" ", pids_[index], " ");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) state ppid ...": comm may hold spaces, so read after the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 3 >= line.size()) continue;
    if (line.compare(close + 3, parent.size(), parent) == 0) return true;
  }
  return false;
}

void LocalWorkers::Pause(int index) {
  if (index < 0 || index >= size() || pids_[index] <= 0) return;
  kill(-pids_[index], SIGSTOP);
}

void LocalWorkers::Stop() {
  for (pid_t pid : pids_) {
    if (pid <= 0) continue;
    kill(-pid, SIGTERM);
    kill(-pid, SIGCONT);  // a paused worker acts on SIGTERM only once continued
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (pid_t& pid : pids_) {
    while (pid > 0) {
      int status = 0;
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) {
        kill(-pid, SIGKILL);  // anything the worker left in its group
        pid = -1;
      } else if (std::chrono::steady_clock::now() >= deadline) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        pid = -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
}

}  // namespace workqueue
}  // namespace roastcoffea
