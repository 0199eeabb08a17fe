// End-to-end: the Dask backend against a real dask-scheduler and real dask-workers (Debian's
// python3-distributed), started on 127.0.0.1 with free ports and killed (process groups) at the
// end of each test, also on failure.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/contributed_testing.h"
#include "backends/dask/comm.h"
#include "backends/dask/dask_backend.h"
#include "collector/measurement_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/raw_run.h"
#include "tests/child_process.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

std::string TmpDir() { return TestTmpDir(); }

// What every Dask process of these tests gets, and nothing else from the test's environment.
std::vector<std::string> DaskEnvironment() {
  return {"HOME=" + TmpDir(), "PATH=/usr/bin:/bin", "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s"};
}

class DaskCluster {
 public:
  DaskCluster() : port_(FreeLoopbackPort()) { StartScheduler(); }
  void StartScheduler() {
    scheduler_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/bin/dask-scheduler", "--host", "127.0.0.1", "--port",
                                 std::to_string(port_), "--no-dashboard", "--no-show"},
        DaskEnvironment(), TmpDir() + "/scheduler-" + std::to_string(++scheduler_starts_) + ".log");
  }
  void AddWorker(const std::string& name, int nthreads, const std::string& memory_limit) {
    workers_[name] = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/bin/dask-worker", address(), "--host", "127.0.0.1",
                                 "--nthreads", std::to_string(nthreads), "--memory-limit",
                                 memory_limit, "--no-dashboard", "--no-nanny", "--name", name,
                                 "--local-directory", TmpDir() + "/" + name},
        DaskEnvironment(), TmpDir() + "/worker-" + name + ".log");
  }
  void KillWorker(const std::string& name) { workers_.at(name)->Kill(); }
  void KillScheduler() { scheduler_->Kill(); }
  std::string address() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

  // Number of workers the scheduler reports, or -1 when it is not reachable.
  int WorkerCount() const {
    dask::CommOptions options;
    options.connect_timeout = absl::Seconds(1);
    options.read_timeout = absl::Seconds(5);
    auto comm = dask::DaskComm::Connect({"127.0.0.1", static_cast<uint16_t>(port_)}, options);
    if (!comm.ok()) return -1;
    absl::StatusOr<dask::Value> identity = (*comm)->Call("identity");
    (*comm)->Close();
    if (!identity.ok() || identity->Find("workers") == nullptr) return -1;
    return static_cast<int>(identity->Find("workers")->size());
  }
  // Waits (at most 30 s) until the scheduler answers.
  bool WaitForScheduler() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (WorkerCount() >= 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // Waits (at most 40 s) until the scheduler reports `n` workers.
  bool WaitForWorkers(int n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
    while (std::chrono::steady_clock::now() < deadline) {
      if (WorkerCount() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

 private:
  int port_;
  int scheduler_starts_ = 0;
  std::unique_ptr<ChildProcess> scheduler_;
  std::map<std::string, std::unique_ptr<ChildProcess>> workers_;
};

// On failure, shows what the scheduler, workers and client said (their logs are in TEST_TMPDIR).
class DaskIntegrationTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!HasFailure()) return;
    for (const char* pattern :
         {"scheduler-1.log", "scheduler-2.log", "worker-w-two.log", "worker-w-one.log",
          "worker-stays.log", "worker-dies.log", "worker-w.log", "client.log"}) {
      std::ifstream in(TmpDir() + "/" + pattern);
      if (!in) continue;
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.size() > 4000) text = "..." + text.substr(text.size() - 4000);
      std::fprintf(stderr, "----- %s -----\n%s\n", pattern, text.c_str());
    }
  }
};

std::unique_ptr<DaskMetricsBackend> BackendFor(const DaskCluster& cluster) {
  DaskBackendOptions options;
  options.scheduler_address = cluster.address();
  options.reconnect_initial_backoff = absl::Milliseconds(100);
  options.reconnect_max_backoff = absl::Milliseconds(500);
  return *DaskMetricsBackend::Create(options);
}

std::string BurnWorkloadScript() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/" + std::getenv("TEST_WORKSPACE") +
         "/tests/testdata/dask_burn_workload.py";
}

std::string WorkloadScript() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/" + std::getenv("TEST_WORKSPACE") +
         "/tests/testdata/dask_workload.py";
}

TEST_F(DaskIntegrationTest, TracksTheClusterAndTheTaskStreamOfARealComputation) {
  DaskCluster cluster;
  cluster.AddWorker("w-two", 2, "1GB");
  cluster.AddWorker("w-one", 1, "500MB");
  ASSERT_TRUE(cluster.WaitForWorkers(2));

  auto backend = BackendFor(cluster);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(200)).ok());
  EXPECT_THAT(backend->scheduler_version(), HasSubstr("2022.12"));
  const SpanId span = *backend->CreateSpan("workload");
  const std::string stream_file = TmpDir() + "/python_task_stream.tsv";
  ChildProcess client({"/usr/bin/python3", WorkloadScript(), cluster.address(), stream_file},
                      DaskEnvironment(), TmpDir() + "/client.log");
  ASSERT_EQ(client.Wait(), 0) << "see client.log";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a few heartbeats and polls
  ASSERT_TRUE(backend->EndSpan(span).ok());
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  RawRun contributed;
  backend->Contribute(contributed);
  EXPECT_EQ(contributed.engine_version, backend->scheduler_version()) << "saved in the metadata";

  // Counts, cores and memory limits are what the cluster was started with.
  ASSERT_EQ(data->workers_size(), 2);
  std::map<double, double> limit_by_cores;
  for (const v1::WorkerSeries& w : data->workers()) {
    ASSERT_GE(w.time_unix_ns_size(), 2) << w.worker();
    EXPECT_EQ(w.host(), "127.0.0.1");
    limit_by_cores[w.cores(0)] = w.memory_limit_bytes(0);
    EXPECT_GT(w.memory_bytes(0), 10e6);  // a Python process
    EXPECT_EQ(w.occupancy_seconds_size(), w.time_unix_ns_size());
    EXPECT_EQ(w.spilled_bytes_size(), w.time_unix_ns_size());
    EXPECT_EQ(w.network_read_bytes_per_second_size(), w.time_unix_ns_size());
    for (int i = 1; i < w.last_seen_unix_seconds_size(); ++i) {
      EXPECT_GT(w.last_seen_unix_seconds(i), w.last_seen_unix_seconds(i - 1));  // no stale repeats
    }
  }
  EXPECT_EQ(limit_by_cores, (std::map<double, double>{{1, 500e6}, {2, 1e9}}));
  for (int count : data->worker_count()) EXPECT_EQ(count, 2);
  EXPECT_EQ(data->gaps_size(), 0);

  // The task stream agrees with the Python client's own get_task_stream.
  std::map<std::string, double> python_compute;  // key -> compute seconds
  std::ifstream in(stream_file);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    ASSERT_EQ(f.size(), 5u) << line;
    double start, stop;
    ASSERT_TRUE(absl::SimpleAtod(f[3], &start) && absl::SimpleAtod(f[4], &stop));
    if (f[2] == "compute") python_compute[f[0]] += stop - start;
  }
  ASSERT_EQ(python_compute.size(), 25u);  // 24 inc + 1 sum
  std::map<std::string, double> ours;
  std::map<std::string, int> prefixes;
  for (const dask::TaskRecord& r : backend->task_records()) {
    ++prefixes[r.prefix];
    for (const dask::StartStop& ss : r.startstops) {
      if (ss.action == "compute") ours[r.key] += ss.stop_unix_seconds - ss.start_unix_seconds;
    }
  }
  EXPECT_EQ(prefixes["inc"], 24);
  EXPECT_EQ(prefixes["sum"], 1);
  for (const auto& [key, seconds] : python_compute) {
    ASSERT_EQ(ours.count(key), 1u) << key;
    EXPECT_NEAR(ours[key], seconds, 1e-6) << key;
  }
  // The span sums compute time per prefix: about 24 × 20 ms of sleeping tasks.
  absl::StatusOr<v1::Span> metrics = backend->GetSpanMetrics(span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  double inc_compute = 0, inc_tasks = 0;
  for (const v1::FineMetric& m : metrics->metrics()) {
    if (m.task_prefix() == "inc" && m.activity() == "compute") inc_compute += m.value();
    if (m.task_prefix() == "inc" && m.activity() == "tasks") inc_tasks += m.value();
  }
  EXPECT_EQ(inc_tasks, 24);
  EXPECT_GT(inc_compute, 24 * 0.02);
  EXPECT_LT(inc_compute, 24 * 0.5);
}

// The live view of a Dask run (#26): the chunk counter (the processor's finished tasks, from the
// task stream) rises while the run goes on, running tasks and the workers' cores and memory are
// there, and the counter's last value is the saved measurement's count of the processor's tasks.
TEST_F(DaskIntegrationTest, TheLiveChunkCounterRisesDuringTheRunAndEndsAtTheSavedCount) {
  DaskCluster cluster;
  cluster.AddWorker("w-two", 2, "1GB");
  cluster.AddWorker("w-one", 1, "500MB");
  ASSERT_TRUE(cluster.WaitForWorkers(2));

  auto backend = BackendFor(cluster);
  SessionOptions options;
  options.interval = absl::Milliseconds(100);
  options.processor_patterns = {"inc"};
  options.output_dir = TmpDir() + "/live";
  options.checkpoint_interval = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
      MeasurementSession::Start(*backend, options);
  ASSERT_TRUE(session.ok()) << session.status();
  // 24 tasks of 0.25 s on 3 threads: about 2 s, some 20 polls.
  ChildProcess client({"/usr/bin/python3", WorkloadScript(), cluster.address(),
                       TmpDir() + "/live_task_stream.tsv", "0.25"},
                      DaskEnvironment(), TmpDir() + "/client.log");
  std::vector<int64_t> seen;  // distinct values of the counter, in order
  bool saw_running = false, saw_workers = false;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline && (seen.empty() || seen.back() < 24)) {
    const LiveStatus live = (*session)->live_status();
    if (seen.empty() || live.chunks_ok != seen.back()) seen.push_back(live.chunks_ok);
    saw_running = saw_running || live.chunks_running.value_or(0) > 0;
    if (live.workers == 2) {
      saw_workers = true;
      EXPECT_EQ(live.cores, 3);
      EXPECT_EQ(live.worker_memory_limit_bytes, 1.5e9);
      EXPECT_GT(live.worker_memory_bytes.value_or(0), 20e6);  // two Python processes
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(client.Wait(), 0) << "see client.log";
  absl::SleepFor(absl::Milliseconds(300));  // the last poll
  const LiveStatus last = (*session)->live_status();
  absl::StatusOr<v1::Measurement> measurement = (*session)->Finish({});
  ASSERT_TRUE(measurement.ok()) << measurement.status();

  // Rising: values strictly between 0 and the end were seen, in increasing order.
  int intermediate = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) {
      EXPECT_GT(seen[i], seen[i - 1]);
    }
    if (seen[i] > 0 && seen[i] < 24) ++intermediate;
  }
  EXPECT_GE(intermediate, 2) << "the counter jumped to the end";
  EXPECT_TRUE(saw_running);
  EXPECT_TRUE(saw_workers);
  EXPECT_TRUE(last.chunks_from_engine_tasks);
  EXPECT_EQ(last.chunks_failed, 0);
  double saved_tasks = 0;
  for (const v1::ActivityTotal& total : measurement->metrics().fine().by_task_prefix()) {
    if (total.task_prefix() == "inc" && total.activity() == "tasks") saved_tasks += total.value();
  }
  EXPECT_EQ(saved_tasks, 24);
  EXPECT_EQ(last.chunks_ok, saved_tasks);
}

// The workers' statistical profiles of a run name the hot Python function on every worker.
TEST_F(DaskIntegrationTest, ProfilesNameTheHotFunctionOnEveryWorker) {
  DaskCluster cluster;
  cluster.AddWorker("w-two", 2, "1GB");
  cluster.AddWorker("w-one", 1, "500MB");
  ASSERT_TRUE(cluster.WaitForWorkers(2));
  DaskBackendOptions options;
  options.scheduler_address = cluster.address();
  options.profile_task_prefixes = {"burn_cpu_hot_loop", "no_such_prefix"};
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(200)).ok());
  ChildProcess client({"/usr/bin/python3", BurnWorkloadScript(), cluster.address(), "1.5"},
                      DaskEnvironment(), TmpDir() + "/client.log");
  ASSERT_EQ(client.Wait(), 0) << "see client.log";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->workers_size(), 2);
  std::map<std::string, int> cores;  // address -> threads, from the tracking data
  for (const v1::WorkerSeries& w : data->workers()) cores[w.worker()] = w.cores(0);

  const std::vector<v1::Profile> profiles = backend->TakeProfiles({});
  for (const std::string& w : ContributedWarningSentences(*backend))
    ADD_FAILURE() << "warning: " << w;
  ASSERT_EQ(profiles.size(), 6u);  // 2 workers x (all tasks, burn_cpu_hot_loop, no_such_prefix)
  std::map<std::string, std::set<std::string>> prefixes_by_worker;
  for (const v1::Profile& p : profiles) {
    SCOPED_TRACE(p.worker() + " prefix '" + p.task_prefix() + "'");
    ASSERT_EQ(cores.count(p.worker()), 1u);  // the real worker addresses
    prefixes_by_worker[p.worker()].insert(p.task_prefix());
    EXPECT_EQ(p.threads(), cores[p.worker()]);
    EXPECT_EQ(p.worker_name(), p.threads() == 2 ? "w-two" : "w-one");
    EXPECT_EQ(p.host(), "127.0.0.1");
    EXPECT_EQ(p.memory_limit_bytes(), p.threads() == 2 ? 1000000000 : 500000000);
    EXPECT_EQ(p.source(), "dask");
    EXPECT_EQ(p.sampling_interval_seconds(), 0.01);
    EXPECT_LT(p.start_unix_ns(), p.end_unix_ns());
    ASSERT_GE(p.nodes_size(), 1);
    const int64_t root = p.nodes(0).count();
    if (p.task_prefix() == "no_such_prefix") {
      EXPECT_EQ(root, 0);
      continue;
    }
    // About 1.5 s per thread at 10 ms: ~150 samples per worker on a quiet machine. Dask's
    // sampler is a thread of the worker, so a loaded host (24-48 seen at load 10-14 on 2 CPUs)
    // starves it too; more than 10 still shows that the profile was taken.
    EXPECT_GT(root, 10);
    int64_t hot = -1, under_root = 0;
    for (int i = 1; i < p.nodes_size(); ++i) {
      const v1::ProfileNode& n = p.nodes(i);
      ASSERT_LT(n.parent(), i);
      if (n.parent() == 0) under_root += n.count();
      if (n.parent() == 0 && p.frames(n.frame()).function() == "burn_cpu_hot_loop") {
        hot = n.count();
        EXPECT_THAT(p.frames(n.frame()).file(), HasSubstr("dask_burn_workload.py"));
      }
    }
    ASSERT_GT(hot, 0) << "burn_cpu_hot_loop is not a child of the root";
    // Dask never counts the innermost frame: the samples in the loop itself are the root's
    // exclusive ones. With them the hot function holds nearly every sample.
    EXPECT_GT(root - under_root + hot, root * 8 / 10);
  }
  EXPECT_EQ(prefixes_by_worker.size(), 2u);
  for (const auto& [worker, prefixes] : prefixes_by_worker) {
    EXPECT_EQ(prefixes, (std::set<std::string>{"", "burn_cpu_hot_loop", "no_such_prefix"}))
        << worker;
  }
}

TEST_F(DaskIntegrationTest, AKilledWorkerShowsAsADeparture) {
  DaskCluster cluster;
  cluster.AddWorker("stays", 1, "1GB");
  cluster.AddWorker("dies", 1, "1GB");
  ASSERT_TRUE(cluster.WaitForWorkers(2));
  auto backend = BackendFor(cluster);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(200)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  cluster.KillWorker("dies");
  ASSERT_TRUE(cluster.WaitForWorkers(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->worker_count(0), 2);
  EXPECT_EQ(data->worker_count(data->worker_count_size() - 1), 1);
  EXPECT_EQ(data->workers_size(), 2);
  bool departure = false;
  for (const std::string& w : ContributedWarningSentences(*backend))
    departure |= w.find("left mid-run") != std::string::npos;
  EXPECT_TRUE(departure);
  EXPECT_EQ(data->gaps_size(), 0);
}

TEST_F(DaskIntegrationTest, AKilledSchedulerIsAGapAndARestartIsPickedUp) {
  DaskCluster cluster;
  cluster.AddWorker("w", 1, "1GB");
  ASSERT_TRUE(cluster.WaitForWorkers(1));
  auto backend = BackendFor(cluster);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(200)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  cluster.KillScheduler();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  cluster.StartScheduler();  // same port; the worker may or may not come back in time
  ASSERT_TRUE(cluster.WaitForScheduler());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->gaps_size(), 1);
  EXPECT_GT(data->gaps(0).end_unix_ns() - data->gaps(0).start_unix_ns(), 500000000);
  ASSERT_FALSE(ContributedWarningSentences(*backend).empty());
  bool reconnected = false;
  for (const std::string& w : ContributedWarningSentences(*backend))
    reconnected |= w.find("reconnected") != std::string::npos;
  EXPECT_TRUE(reconnected);
  // Samples from before the loss are kept; the new scheduler was polled too.
  ASSERT_GE(data->workers_size(), 1);
  EXPECT_GE(data->workers(0).time_unix_ns_size(), 1);
  EXPECT_GT(data->worker_count_time_unix_ns(data->worker_count_size() - 1),
            data->gaps(0).end_unix_ns());
}

}  // namespace
}  // namespace roastcoffea
