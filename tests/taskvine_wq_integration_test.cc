// The TaskVine backend following the logs of a real Work Queue manager (Debian's
// coop-computing-tools + python3-workqueue) with two real workers on 127.0.0.1, started and
// stopped by the test (tests/testdata/wq_manager.py): the backend tails the logs while the run
// goes on, then its figures must match what the script did.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "backends/taskvine/taskvine_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// The manager script in its own process group; the whole group is killed on destruction.
class ManagerProcess {
 public:
  ManagerProcess(const std::string& out_dir, int port) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = out_dir + "/manager.out";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<std::string> argv = {"/usr/bin/python3", "tests/testdata/wq_manager.py", out_dir,
                                     std::to_string(port)};
    std::vector<std::string> env = {"HOME=" + TmpDir(), "PATH=/usr/bin:/bin", "TMPDIR=" + TmpDir()};
    std::vector<char*> args, envp;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, &attr, args.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  ~ManagerProcess() { Kill(); }
  bool started() const { return pid_ > 0; }
  // Exit status, or -1 when it did not exit within `timeout` (then it is killed).
  int Wait(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (pid_ > 0 && absl::Now() < deadline) {
      int status = 0;
      const pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        kill(-pid_, SIGKILL);  // anything left in its process group
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Kill();
    return -1;
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

TEST(TaskVineWorkQueueIntegration, FollowsARealManagerAndWorkers) {
  if (access("/usr/bin/work_queue_worker", X_OK) != 0) {
    FAIL() << "coop-computing-tools is not installed (./bazelw installs it)";
  }
  const std::string out = TmpDir() + "/wq-run";
  mkdir(out.c_str(), 0755);
  TaskVineBackendOptions options;
  options.logs = out + "/txn.log," + out + "/stats.log";
  options.follow = true;
  TaskVineMetricsBackend backend(options);
  ASSERT_TRUE(backend.StartTracking(absl::Milliseconds(100)).ok());
  absl::StatusOr<SpanId> span = backend.CreateSpan("run");
  ASSERT_TRUE(span.ok());

  ManagerProcess manager(out, FreePort());
  ASSERT_TRUE(manager.started());
  const int exit_code = manager.Wait(absl::Seconds(50));
  ASSERT_TRUE(backend.EndSpan(*span).ok());
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_EQ(exit_code, 0) << "see " << out << "/manager.out";
  ASSERT_TRUE(tracking.ok()) << tracking.status();

  const taskvine::RunModel model = backend.ModelSnapshot();
  const std::vector<std::string> warnings = backend.Warnings();
  SCOPED_TRACE(absl::StrJoin(warnings, "\n"));
  EXPECT_EQ(model.malformed_count(), 0);
  const taskvine::RunFigures f = model.Figures();
  EXPECT_TRUE(f.ended);
  EXPECT_EQ(f.workers_joined, 2);
  for (const taskvine::Worker& w : model.workers()) {
    EXPECT_EQ(w.reason, "EXPLICIT");
    EXPECT_EQ(w.cores, 2);
    EXPECT_EQ(w.memory_mb, 1000);
    EXPECT_THAT(w.address, HasSubstr("127.0.0.1:"));
  }
  EXPECT_EQ(f.tasks, 7);
  EXPECT_EQ(f.tasks_done, 7);
  EXPECT_EQ(f.tasks_failed, 1);
  EXPECT_GT(f.execute_seconds, 6 * 0.0);
  // Chunk records: the 6 processing tasks, the one that exited 3 failed.
  const std::vector<v1::ChunkRecord> chunks = backend.TakeChunkRecords();
  ASSERT_EQ(chunks.size(), 6u);
  int failed = 0;
  for (const v1::ChunkRecord& c : chunks) {
    EXPECT_THAT(c.worker(), HasSubstr("worker-"));
    EXPECT_GT(c.end_unix_ns(), c.start_unix_ns());
    if (c.status() == v1::CHUNK_STATUS_FAILED) {
      ++failed;
      EXPECT_THAT(c.error_text(), HasSubstr("exit code 3"));
    } else {
      EXPECT_GE(c.duration_seconds(), 0.55);  // sleep 0.6 (WAITING_RETRIEVAL - RUNNING in WQ)
    }
  }
  EXPECT_EQ(failed, 1);
  // Tracking: two worker series, the worker count peaks at 2 and ends at 0, manager rows.
  EXPECT_EQ(tracking->workers_size(), 2);
  int peak = 0;
  for (int c : tracking->worker_count()) peak = std::max(peak, c);
  EXPECT_EQ(peak, 2);
  EXPECT_EQ(tracking->worker_count(tracking->worker_count_size() - 1), 0);
  EXPECT_GE(tracking->manager().time_unix_ns_size(), 2);
  // Queue wait is visible: the tasks waited for the workers to join.
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(*span);
  ASSERT_TRUE(metrics.ok());
  double queue_wait = 0;
  for (const v1::FineMetric& m : metrics->metrics()) {
    if (m.task_prefix() == "processing" && m.activity() == "queue-wait") queue_wait = m.value();
  }
  EXPECT_GT(queue_wait, 6 * 0.2);
  // The two logs agree (no cross-check warning); Debian's WQ logs no worker-side times.
  for (const std::string& w : warnings) EXPECT_THAT(w, testing::Not(HasSubstr("cross-check")));
  EXPECT_THAT(warnings, testing::Contains(HasSubstr("have no worker start/end times")));
}

}  // namespace
}  // namespace roastcoffea
