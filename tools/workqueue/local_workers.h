// Work Queue workers started on this machine for one run (collect --backend=workqueue
// --workers=N): N work_queue_worker processes connecting to 127.0.0.1:PORT, one core each,
// each in its own process group with --parent-death (they never outlive collect), stopped and
// reaped by Stop() or the destructor.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_LOCAL_WORKERS_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_LOCAL_WORKERS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace roastcoffea {
namespace workqueue {

inline constexpr char kDefaultWorkerBinary[] = "/usr/bin/work_queue_worker";

struct LocalWorkersOptions {
  int count = 1;
  std::string manager_host = "127.0.0.1";
  int manager_port = 0;
  // Passed as --password when not empty.
  std::string password_file;
  // Each worker gets <directory>/worker-<i>/ (its --workdir and cache) and worker-<i>.log.
  std::string directory;
  std::string binary = kDefaultWorkerBinary;
  int cores_per_worker = 1;
  // --timeout: a worker with no manager or no work for this long exits on its own.
  int idle_timeout_seconds = 60;
};

class LocalWorkers {
 public:
  // NotFound naming the binary when it is missing (and the Debian package that has it);
  // InvalidArgument for a bad count or port; Internal when a worker cannot be spawned (the
  // ones already started are stopped).
  static absl::StatusOr<std::unique_ptr<LocalWorkers>> Start(const LocalWorkersOptions& options);
  ~LocalWorkers();
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  int size() const { return static_cast<int>(pids_.size()); }
  // SIGKILL to worker `index` (a fault, as a machine that dies): its tasks are lost.
  void Kill(int index);
  // Whether worker `index` has a child process (the shell of a task it runs).
  bool RunsATask(int index) const;
  // SIGSTOP to worker `index` (a machine that hangs): its tasks never come back.
  void Pause(int index);
  // SIGTERM (and SIGCONT) to every worker still running, up to 2 s to exit, then SIGKILL;
  // reaps all. Idempotent.
  void Stop();

 private:
  explicit LocalWorkers(std::vector<pid_t> pids) : pids_(std::move(pids)) {}
  std::vector<pid_t> pids_;  // -1 once reaped
};

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_LOCAL_WORKERS_H_
