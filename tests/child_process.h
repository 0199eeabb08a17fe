// Test helpers for integration tests that start real engines (Dask, Work Queue): a child process
// in its own process group that is always killed, group and all, and a free loopback port.
#ifndef ROASTCOFFEA_TESTS_CHILD_PROCESS_H_
#define ROASTCOFFEA_TESTS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace roastcoffea {

// $TEST_TMPDIR, or /tmp outside Bazel.
std::string TestTmpDir();

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

// Started with posix_spawn (not fork: test processes have threads) in a new process group,
// with exactly `environment`, stdout and stderr to `log`. The destructor kills the group.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
               const std::string& log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // The child's pid (and process group id); -1 once it was reaped or when it did not start.
  pid_t pid() const { return pid_; }
  // Waits for the child to exit; its exit status, or -1 (killed by a signal, not started).
  int Wait();
  // The same, but kills the group and returns -1 if it has not exited within `timeout`.
  // Whatever the child left in its process group is killed too.
  int Wait(absl::Duration timeout);
  // SIGKILL to the whole group, then reaps the child.
  void Kill();

 private:
  pid_t pid_ = -1;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TESTS_CHILD_PROCESS_H_
