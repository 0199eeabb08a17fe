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
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "backends/contributed_testing.h"
#include "backends/taskvine/taskvine_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/raw_run.h"
#include "tests/child_process.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TmpDir() { return TestTmpDir(); }

// The manager script (tests/testdata/wq_manager.py) writing its logs into `out_dir`.
std::unique_ptr<ChildProcess> StartManager(const std::string& out_dir, int port) {
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/bin/python3", "tests/testdata/wq_manager.py", out_dir,
                               std::to_string(port)},
      std::vector<std::string>{"HOME=" + TmpDir(), "PATH=/usr/bin:/bin", "TMPDIR=" + TmpDir()},
      out_dir + "/manager.out");
}

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

  const std::unique_ptr<ChildProcess> manager = StartManager(out, FreeLoopbackPort());
  ASSERT_TRUE(manager->started());
  const int exit_code = manager->Wait(absl::Seconds(50));
  ASSERT_TRUE(backend.EndSpan(*span).ok());
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  ASSERT_EQ(exit_code, 0) << "see " << out << "/manager.out";
  ASSERT_TRUE(tracking.ok()) << tracking.status();

  const taskvine::RunModel model = backend.ModelSnapshot();
  // Span figures before Contribute, which hands the run's tasks over (frees them).
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(*span);
  RawRun contributed = ContributedRun(backend);
  const std::vector<std::string> warnings = WarningSentences(contributed.warnings);
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
  const std::vector<v1::ChunkRecord> chunks = RecordsOf(contributed.engine_chunks);
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
