#include "backends/dask/dask_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "backends/contributed_testing.h"
#include "backends/dask/fake_scheduler.h"
#include "backends/dask/fixtures.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"
#include "schema/raw_run.h"

namespace roastcoffea {
namespace {

using dask::Value;
using dask::testing::FakeScheduler;
using dask::testing::FixtureBytes;
using ::testing::Contains;
using ::testing::HasSubstr;

double NowSeconds() { return absl::ToUnixMicros(absl::Now()) / 1e6; }

// A scripted cluster: what the fake scheduler answers.
struct Cluster {
  struct Worker {
    std::string address;
    int nthreads;
    int64_t memory_limit;
    double last_seen;
  };
  std::mutex mutex;
  std::vector<Worker> workers;
  std::vector<Value> task_records;
  int stream_calls = 0;
  double digest_thread_cpu = 0;   // > 0: send ≥ 2023.4-style per-heartbeat digests
  std::string identity_override;  // non-empty: raw bytes sent as the identity reply
  std::vector<Value> profile_requests;
  bool profile_error = false;   // answer `profile` with an error reply
  std::string profile_failing;  // this worker fails to answer `profile`
  int profile_chain = 0;        // > 0: trees are a chain of this many frames
  // get_cluster_state: each worker's cumulative executing seconds of prefix "inc" (grows by
  // digest_thread_cpu per heartbeat); off: the op is unknown (nil), as on a server without it.
  bool has_cluster_state = false;
  std::string versions_override;        // non-empty: raw bytes of the versions reply
  std::optional<int64_t> stream_index;  // set: answers get_task_stream_index (≥ 2026.6)
  std::vector<Value> stream_requests;
  std::map<std::string, double> cumulative;
  std::vector<std::string> digest_prefixes = {"inc"};  // prefixes of the execute digests
  // Raw bytes of the dump_state replies with the task groups / the tasks' annotations; empty:
  // none of either (as on a cluster with no tasks).
  std::string task_groups_reply;
  std::string tasks_reply;

  static bool Excludes(const Value& request, const std::string& field) {
    const Value* exclude = request.Find("exclude");
    if (exclude == nullptr) return false;
    for (const Value& v : exclude->items()) {
      if (v.text() == field) return true;
    }
    return false;
  }

  // A chain of `frames` frames under a root: 2 msgpack levels per frame.
  static Value ProfileChain(int frames) {
    Value node = Value::Map();
    for (int d = frames; d >= 0; --d) {
      const std::string id = d == 0 ? "root" : "f" + std::to_string(d) + ";deep.py;1";
      Value description = Value::Map();
      description.Insert(Value::Str("name"), Value::Str(id.substr(0, id.find(';'))));
      Value children = Value::Map();
      if (d < frames) children.Insert(Value::Str(node.Find("identifier")->text()), node);
      Value parent = Value::Map();
      parent.Insert(Value::Str("count"), Value::Int(d < frames ? 1 : 0));
      parent.Insert(Value::Str("identifier"), Value::Str(id));
      parent.Insert(Value::Str("description"), std::move(description));
      parent.Insert(Value::Str("children"), std::move(children));
      node = std::move(parent);
    }
    return node;
  }

  // A worker's tree: root count 100 + nthreads, one frame named after the key (or "compute").
  static Value ProfileTree(const Worker& w, const std::string& key) {
    const std::string name = key.empty() ? "compute" : key;
    Value description = Value::Map();
    description.Insert(Value::Str("filename"), Value::Str("job.py"));
    description.Insert(Value::Str("name"), Value::Str(name));
    description.Insert(Value::Str("line_number"), Value::Int(4));
    description.Insert(Value::Str("line"), Value::Str("return work()\n"));
    Value child = Value::Map();
    child.Insert(Value::Str("count"), Value::Int(5));
    child.Insert(Value::Str("identifier"), Value::Str(name + ";job.py;3"));
    child.Insert(Value::Str("description"), description);
    child.Insert(Value::Str("children"), Value::Map());
    Value children = Value::Map();
    children.Insert(Value::Str(name + ";job.py;3"), child);
    Value root = Value::Map();
    root.Insert(Value::Str("count"), Value::Int(100 + w.nthreads));
    root.Insert(Value::Str("identifier"), Value::Str("root"));
    root.Insert(Value::Str("description"), Value::Str("root"));
    root.Insert(Value::Str("children"), children);
    return root;
  }

  std::optional<std::string> Reply(const Value& request) {
    std::lock_guard<std::mutex> lock(mutex);
    const std::string op = request.Find("op")->text();
    if (op == "versions" && !versions_override.empty()) return versions_override;
    if (op == "get_task_stream_index" && stream_index.has_value()) {
      return dask::EncodeMessage(Value::Int(*stream_index));
    }
    if (op == "versions") {
      Value packages = Value::Map();
      packages.Insert(Value::Str("distributed"), Value::Str("2022.12.1+ds.1"));
      Value reply = Value::Map();
      reply.Insert(Value::Str("packages"), packages);
      return dask::EncodeMessage(reply);
    }
    if (op == "identity" && !identity_override.empty()) return identity_override;
    if (op == "identity") {
      Value ws = Value::Map();
      for (const Worker& w : workers) {
        Value metrics = Value::Map();
        metrics.Insert(Value::Str("memory"), Value::Int(1000 + w.nthreads));
        metrics.Insert(Value::Str("cpu"), Value::Float(50));
        if (digest_thread_cpu > 0) {
          Value digests = Value::Map();
          for (const std::string& prefix : digest_prefixes) {
            digests.Insert(Value::Array({Value::Str("execute"), Value::Str(prefix),
                                         Value::Str("thread-cpu"), Value::Str("seconds")}),
                           Value::Float(digest_thread_cpu));
          }
          metrics.Insert(Value::Str("digests_total_since_heartbeat"), digests);
        }
        Value info = Value::Map();
        info.Insert(Value::Str("host"), Value::Str("127.0.0.1"));
        info.Insert(Value::Str("name"), Value::Str("w-" + w.address.substr(w.address.size() - 4)));
        info.Insert(Value::Str("nthreads"), Value::Int(w.nthreads));
        info.Insert(Value::Str("memory_limit"), Value::Int(w.memory_limit));
        info.Insert(Value::Str("last_seen"), Value::Float(w.last_seen));
        info.Insert(Value::Str("metrics"), metrics);
        ws.Insert(Value::Str(w.address), info);
      }
      Value reply = Value::Map();
      reply.Insert(Value::Str("workers"), ws);
      return dask::EncodeMessage(reply);
    }
    if (op == "processing") {
      Value reply = Value::Map();
      for (const Worker& w : workers) {
        reply.Insert(Value::Str(w.address), Value::Array({Value::Str("slow-1")}));
      }
      return dask::EncodeMessage(reply);
    }
    if (op == "dump_state" && Excludes(request, "workers")) {
      // The task groups (tasks excluded) or the tasks' annotations: recorded replies.
      const bool groups = Excludes(request, "tasks");
      const std::string& recorded = groups ? task_groups_reply : tasks_reply;
      if (!recorded.empty()) return recorded;
      Value reply = Value::Map();
      reply.Insert(Value::Str(groups ? "task_groups" : "tasks"), Value::Map());
      return dask::EncodeMessage(reply);
    }
    if (op == "dump_state") {
      Value ws = Value::Map();
      for (const Worker& w : workers) {
        Value info = Value::Map();
        info.Insert(Value::Str("occupancy"), Value::Float(0.5));
        ws.Insert(Value::Str(w.address), info);
      }
      Value reply = Value::Map();
      reply.Insert(Value::Str("workers"), ws);
      return dask::EncodeMessage(reply);
    }
    if (op == "profile") {
      profile_requests.push_back(request);
      if (profile_error) {
        Value reply = Value::Map();
        reply.Insert(Value::Str("status"), Value::Str("error"));
        reply.Insert(Value::Str("exception_text"), Value::Str("OSError('profile boom')"));
        return dask::EncodeMessage(reply);
      }
      const Value* key = request.Find("key");
      std::vector<std::string> asked;
      std::vector<Value> trees;
      for (const Worker& w : workers) {
        bool wanted = false;
        for (const Value& a : request.Find("workers")->items()) wanted |= a.text() == w.address;
        if (!wanted) continue;
        asked.push_back(w.address);
        if (w.address == profile_failing) continue;
        trees.push_back(profile_chain > 0 ? ProfileChain(profile_chain)
                                          : ProfileTree(w, key != nullptr ? key->text() : ""));
      }
      // Like get_profile in distributed 2022.12: failed workers are dropped from the results,
      // which are then zipped with the addresses.
      Value reply = Value::Map();
      for (size_t i = 0; i < trees.size(); ++i) reply.Insert(Value::Str(asked[i]), trees[i]);
      return dask::EncodeMessage(reply);
    }
    if (op == "get_cluster_state" && has_cluster_state) {
      Value ws = Value::Map();
      for (const Worker& w : workers) {
        Value elapsed = Value::Map();
        elapsed.Insert(Value::Str("['inc', 'executing']"), Value::Float(cumulative[w.address]));
        elapsed.Insert(Value::Str("['inc', 'memory']"), Value::Float(99));
        Value info = Value::Map();
        info.Insert(Value::Str("task_cumulative_elapsed"), elapsed);
        ws.Insert(Value::Str(w.address), info);
      }
      Value reply = Value::Map();
      reply.Insert(Value::Str("workers"), ws);
      return dask::EncodeMessage(reply);
    }
    if (op == "get_task_stream") {
      ++stream_calls;
      stream_requests.push_back(request);
      // Like the real plugin: the whole buffer from `start` on (here: everything).
      return dask::EncodeMessage(Value::Array(task_records));
    }
    return dask::EncodeMessage(Value::Nil());
  }

  // `n` heartbeats at once: a poller sees only the last one's digests.
  void Heartbeat(int n = 1) {
    std::lock_guard<std::mutex> lock(mutex);
    for (Worker& w : workers) {
      w.last_seen += 0.5 * n;
      cumulative[w.address] += digest_thread_cpu * n;
    }
  }
  void AddTask(const std::string& key, const std::string& worker, double start, double stop) {
    Value ss = Value::Map();
    ss.Insert(Value::Str("action"), Value::Str("compute"));
    ss.Insert(Value::Str("start"), Value::Float(start));
    ss.Insert(Value::Str("stop"), Value::Float(stop));
    Value r = Value::Map();
    r.Insert(Value::Str("key"), Value::Str(key));
    r.Insert(Value::Str("worker"), Value::Str(worker));
    r.Insert(Value::Str("status"), Value::Str("OK"));
    r.Insert(Value::Str("nbytes"), Value::Int(28));
    r.Insert(Value::Str("startstops"), Value::Array({ss}));
    std::lock_guard<std::mutex> lock(mutex);
    task_records.push_back(r);
  }
};

DaskBackendOptions OptionsFor(const FakeScheduler& scheduler) {
  DaskBackendOptions options;
  options.scheduler_address = scheduler.address();
  options.comm.connect_timeout = absl::Seconds(1);
  options.comm.read_timeout = absl::Seconds(1);
  options.reconnect_initial_backoff = absl::Milliseconds(20);
  options.reconnect_max_backoff = absl::Milliseconds(100);
  return options;
}

// Waits (bounded) until `done` holds; the tests never assert on durations.
template <typename F>
void WaitFor(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The warnings that qualify the fine metrics (codes "dask_fine_metrics_*").
std::vector<v1::Warning> FineMetricWarnings(DaskMetricsBackend& backend) {
  std::vector<v1::Warning> out;
  for (const v1::Warning& warning : ContributedWarnings(backend)) {
    if (absl::StartsWith(warning.code(), "dask_fine_metrics_")) out.push_back(warning);
  }
  return out;
}

TEST(DaskBackendTest, RejectsBadAddressesIntervalsAndOrder) {
  DaskBackendOptions tls;
  tls.scheduler_address = "tls://x:1";
  EXPECT_THAT(DaskMetricsBackend::Create(tls).status().message(), HasSubstr("tls://x:1"));
  Cluster cluster;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  EXPECT_TRUE(absl::IsInvalidArgument(backend->StartTracking(absl::ZeroDuration())));
  EXPECT_TRUE(absl::IsFailedPrecondition(backend->StopTracking().status()));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(20)).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(backend->StartTracking(absl::Milliseconds(20))));
  EXPECT_TRUE(backend->StopTracking().ok());
  EXPECT_TRUE(absl::IsNotFound(backend->EndSpan("nope")));
  EXPECT_TRUE(absl::IsNotFound(backend->GetSpanMetrics("nope").status()));
}

TEST(DaskBackendTest, UnreachableSchedulerIsAClearError) {
  int port;
  {
    FakeScheduler gone([](const Value&) { return std::nullopt; });
    port = gone.port();
  }
  DaskBackendOptions options;
  options.scheduler_address = "tcp://127.0.0.1:" + std::to_string(port);
  auto backend = *DaskMetricsBackend::Create(options);
  absl::Status s = backend->StartTracking(absl::Milliseconds(20));
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_THAT(s.message(), HasSubstr(options.scheduler_address));
}

TEST(DaskBackendTest, SamplesOnlyNewHeartbeatsAndTracksDepartures) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 100.0},
                     {"tcp://127.0.0.1:1002", 1, 2000000000, 100.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 40; });  // many polls, no new heartbeat
  cluster.Heartbeat();
  WaitFor([&] { return scheduler.ops().size() > 80; });
  {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.workers.pop_back();  // worker 1002 leaves
  }
  WaitFor([&] { return scheduler.ops().size() > 120; });
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->backend(), "dask");
  EXPECT_EQ(data->worker_count_kind(), v1::SERIES_KIND_SAMPLED);  // polled, not change points
  EXPECT_FALSE(data->workers_share_process());
  ASSERT_EQ(data->workers_size(), 2);
  const v1::WorkerSeries& stays = data->workers(0);
  EXPECT_EQ(stays.worker(), "tcp://127.0.0.1:1001");
  // Exactly two distinct heartbeats were seen, however many polls ran.
  ASSERT_EQ(stays.time_unix_ns_size(), 2);
  EXPECT_EQ(stays.cores(0), 2);
  EXPECT_EQ(stays.memory_limit_bytes(0), 4e9);
  EXPECT_EQ(stays.memory_bytes(0), 1002);
  EXPECT_EQ(stays.active_tasks(0), 1);
  EXPECT_EQ(stays.occupancy_seconds(1), 0.5);
  EXPECT_EQ(stays.last_seen_unix_seconds(1), 100.5);
  EXPECT_EQ(stays.cpu_percent_size(), 2);
  EXPECT_EQ(stays.spilled_bytes_size(), 0);  // not reported by this cluster: left empty
  EXPECT_EQ(data->workers(1).cores(0), 1);
  EXPECT_GT(data->worker_count_size(), 10);
  EXPECT_EQ(data->worker_count(0), 2);
  EXPECT_EQ(data->worker_count(data->worker_count_size() - 1), 1);
  EXPECT_EQ(data->gaps_size(), 0);
  const std::vector<std::string> warnings = ContributedWarningSentences(*backend);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("tcp://127.0.0.1:1002 left mid-run"));
  EXPECT_TRUE(scheduler.WaitForOp("close"));
}

TEST(DaskBackendTest, TaskStreamBecomesSpanMetricsWithoutDuplicates) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  // An old record (before tracking) must not count.
  cluster.AddTask("old-1", "tcp://127.0.0.1:1001", NowSeconds() - 100, NowSeconds() - 99);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const SpanId span = *backend->CreateSpan("analysis");
  const double t = NowSeconds();
  cluster.AddTask("inc-1869629367546c5239c715fa05ca55a6", "tcp://127.0.0.1:1001", t, t + 0.001);
  cluster.AddTask("('mul-1178bae06e2ba99e512008f106de13b8', 0, 0)", "tcp://127.0.0.1:1001", t,
                  t + 0.002);
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    return cluster.stream_calls > 10;  // the same records come back on every poll
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(backend->EndSpan(span).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(backend->EndSpan(span)));
  ASSERT_TRUE(backend->StopTracking().ok());
  const std::vector<dask::TaskRecord> records = backend->task_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].prefix, "mul");
  absl::StatusOr<v1::Span> metrics = backend->GetSpanMetrics(span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->name(), "analysis");
  double inc_compute = 0, mul_tasks = 0;
  for (const v1::FineMetric& m : metrics->metrics()) {
    EXPECT_EQ(m.worker(), "tcp://127.0.0.1:1001");
    if (m.task_prefix() == "inc" && m.activity() == "compute") inc_compute = m.value();
    if (m.task_prefix() == "mul" && m.activity() == "tasks") mul_tasks = m.value();
  }
  EXPECT_NEAR(inc_compute, 0.001, 1e-6);
  EXPECT_EQ(mul_tasks, 1);
}

TEST(DaskBackendTest, AccumulatesPerHeartbeatDigestsOncePerHeartbeat) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds() - 100}};  // before the span
  cluster.digest_thread_cpu = 0.25;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.final_heartbeat_timeout = absl::Milliseconds(100);
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const SpanId span = *backend->CreateSpan("digests");
  for (int heartbeat = 0; heartbeat < 2; ++heartbeat) {
    {
      std::lock_guard<std::mutex> lock(cluster.mutex);
      // NowSeconds() is truncated to microseconds: without the margin the first heartbeat can
      // land just before the span's start.
      cluster.workers[0].last_seen = NowSeconds() + 0.001;
    }
    const size_t polls = scheduler.ops().size();
    WaitFor([&] { return scheduler.ops().size() > polls + 20; });  // polled many times
  }
  ASSERT_TRUE(backend->EndSpan(span).ok());
  ASSERT_TRUE(backend->StopTracking().ok());
  double thread_cpu = 0;
  const absl::StatusOr<v1::Span> metrics = backend->GetSpanMetrics(span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  for (const v1::FineMetric& m : metrics->metrics()) {
    if (m.context() == "execute" && m.task_prefix() == "inc" && m.activity() == "thread-cpu") {
      thread_cpu += m.value();
    }
  }
  EXPECT_DOUBLE_EQ(thread_cpu, 0.5);  // two heartbeats in the span, however many polls
}

// The workload's spans read from the replies recorded on every version (holder.py: `hold` in
// span held/inner, `nap` in span long), nested in the collect window's span.
TEST(DaskBackendTest, ReadsTheWorkloadsSpansOnEveryVersion) {
  for (const char* version : {"debian-2022.12.1", "2024.12.1", "2025.9.3", "head"}) {
    SCOPED_TRACE(version);
    Cluster cluster;
    cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds() - 100}};
    cluster.digest_thread_cpu = 0.25;
    cluster.digest_prefixes = {"hold", "nap", "other"};
    const std::string dir = std::string("modern/") + version;
    cluster.task_groups_reply = FixtureBytes(dir + "/dump_state_task_groups.reply");
    cluster.tasks_reply = FixtureBytes(dir + "/dump_state_tasks_min.reply");
    FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
    DaskBackendOptions options = OptionsFor(scheduler);
    options.final_heartbeat_timeout = absl::Milliseconds(100);
    options.read_profiles = false;
    auto backend = *DaskMetricsBackend::Create(options);
    ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
    const SpanId span = *backend->CreateSpan("collect window");
    {
      std::lock_guard<std::mutex> lock(cluster.mutex);
      cluster.workers[0].last_seen = NowSeconds() + 0.001;
    }
    const size_t polls = scheduler.ops().size();
    WaitFor([&] { return scheduler.ops().size() > polls + 20; });
    ASSERT_TRUE(backend->EndSpan(span).ok());
    absl::StatusOr<v1::Span> window = backend->GetSpanMetrics(span);
    ASSERT_TRUE(window.ok()) << window.status();
    ASSERT_TRUE(backend->StopTracking().ok());
    EXPECT_EQ(window->kind(), v1::SPAN_KIND_COLLECT_WINDOW);
    EXPECT_EQ(window->name(), "collect window");
    std::vector<std::string> names;
    for (const v1::Span& w : window->workload_spans()) {
      names.push_back(absl::StrJoin(w.name_path(), "/"));
      EXPECT_EQ(w.kind(), v1::SPAN_KIND_WORKLOAD);
      ASSERT_EQ(w.metrics_size(), 1);
      EXPECT_DOUBLE_EQ(w.metrics(0).value(), 0.25);
      EXPECT_EQ(w.metrics(0).task_prefix(), w.name() == "long" ? "nap" : "hold");
    }
    const std::vector<std::string> ops = scheduler.ops();
    const int dump_states = static_cast<int>(std::count(ops.begin(), ops.end(), "dump_state"));
    if (std::string(version) == "debian-2022.12.1") {
      EXPECT_TRUE(names.empty());  // no spans before 2023.6
    } else {
      EXPECT_THAT(names, ::testing::ElementsAre("held", "held/inner", "long"));
      EXPECT_GT(dump_states, 20);  // occupancy and groups at every poll
    }
    for (const std::string& warning : ContributedWarningSentences(*backend)) {
      EXPECT_THAT(warning, ::testing::Not(HasSubstr("spans")));
    }
  }
}

// A span created and forgotten between two polls (real-engines-round-3 D3): the task stream
// holds tasks of a `hold` group no poll saw. The spans given `hold` mark it ambiguous and a
// warning names the prefix and its unseen group.
TEST(DaskBackendTest, ASpanMissedBetweenPollsMarksItsPrefixAmbiguousWithAWarning) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds() - 100}};
  cluster.digest_thread_cpu = 0.25;
  cluster.digest_prefixes = {"hold", "nap"};
  cluster.task_groups_reply = FixtureBytes("modern/2025.9.3/dump_state_task_groups.reply");
  cluster.tasks_reply = FixtureBytes("modern/2025.9.3/dump_state_tasks_min.reply");
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.final_heartbeat_timeout = absl::Milliseconds(100);
  options.read_profiles = false;
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const SpanId span = *backend->CreateSpan("collect window");
  const double t = NowSeconds();
  cluster.AddTask("hold-0123456789abcdef0123456789abcdef", "tcp://127.0.0.1:1001", t, t + 0.001);
  cluster.AddTask("('hold-short', 0)", "tcp://127.0.0.1:1001", t, t + 0.002);
  {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.workers[0].last_seen = NowSeconds() + 0.001;
  }
  const size_t polls = scheduler.ops().size();
  WaitFor([&] { return scheduler.ops().size() > polls + 20; });
  absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE(backend->EndSpan(span).ok());
  absl::StatusOr<v1::Span> window = backend->GetSpanMetrics(span);
  ASSERT_TRUE(window.ok()) << window.status();
  ASSERT_TRUE(backend->StopTracking().ok());
  int holding = 0;
  for (const v1::Span& w : window->workload_spans()) {
    bool has_hold = false;
    for (const v1::FineMetric& m : w.metrics()) has_hold |= m.task_prefix() == "hold";
    if (!has_hold) continue;
    ++holding;
    EXPECT_THAT(w.ambiguous_task_prefixes(), Contains("hold")) << w.name();
  }
  EXPECT_GT(holding, 0);
  bool warned = false;
  for (const v1::Warning& w : ContributedWarnings(*backend)) {
    if (w.code() != "dask_span_missed") continue;
    warned = true;
    EXPECT_THAT(w.message(), HasSubstr("hold (task group(s) hold-short; spans giving it: held"));
  }
  EXPECT_TRUE(warned);
}

double InThreadCpu(const v1::Span& span) {
  double seconds = 0;
  for (const v1::FineMetric& m : span.metrics()) {
    if (m.context() == "execute" && m.task_prefix() == "inc" && m.activity() == "thread-cpu") {
      seconds += m.value();
    }
  }
  return seconds;
}

// Runs a span over: one heartbeat, four at once (three missed), one more; the span ends and
// one heartbeat comes after the end (the one the final read waits for).
absl::StatusOr<v1::Span> SpanWithMissedHeartbeats(Cluster& cluster, FakeScheduler& scheduler,
                                                  DaskMetricsBackend& backend) {
  if (!backend.StartTracking(absl::Milliseconds(10)).ok()) return absl::InternalError("start");
  const SpanId span = *backend.CreateSpan("run");
  for (int n : {1, 4, 1}) {
    cluster.Heartbeat(n);
    const size_t polls = scheduler.ops().size();
    WaitFor([&] { return scheduler.ops().size() > polls + 10; });
  }
  if (!backend.EndSpan(span).ok()) return absl::InternalError("end");
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    cluster.Heartbeat();
  });
  absl::StatusOr<v1::Span> metrics = backend.GetSpanMetrics(span);
  late.join();
  return metrics;
}

TEST(DaskBackendTest, RestoresTheDigestsOfMissedHeartbeatsFromCumulativeTotals) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds()}};
  cluster.digest_thread_cpu = 0.25;
  cluster.has_cluster_state = true;
  cluster.cumulative["tcp://127.0.0.1:1001"] = 10;  // ran before the span
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  absl::StatusOr<v1::Span> metrics = SpanWithMissedHeartbeats(cluster, scheduler, *backend);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_TRUE(backend->StopTracking().ok());
  // 7 heartbeats of 0.25 s each: 4 seen (the closing one included), 3 restored.
  EXPECT_NEAR(InThreadCpu(*metrics), 1.75, 1e-9);
  const std::vector<v1::Warning> warnings = FineMetricWarnings(*backend);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code(), "dask_fine_metrics_recovered");
  EXPECT_THAT(warnings[0].message(), HasSubstr("3 worker heartbeat(s) were missed"));
  EXPECT_THAT(warnings[0].message(), HasSubstr("0.750 s of the 1.750 s"));
  EXPECT_THAT(ContributedWarningSentences(*backend), Contains(warnings[0].message()));
}

// Every heartbeat seen: the cumulative totals running 4 ms ahead of the digests (0.4 %, above
// RecoverLostDigests' tolerance) are their lag, not lost data: nothing restored or reported.
TEST(DaskBackendTest, NoHeartbeatMissedMeansNoRecovery) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds()}};
  cluster.digest_thread_cpu = 0.25;
  cluster.has_cluster_state = true;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const SpanId span = *backend->CreateSpan("run");
  for (int heartbeat = 0; heartbeat < 3; ++heartbeat) {
    cluster.Heartbeat();
    const size_t polls = scheduler.ops().size();
    WaitFor([&] { return scheduler.ops().size() > polls + 10; });
  }
  {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.cumulative["tcp://127.0.0.1:1001"] += 0.004;
  }
  ASSERT_TRUE(backend->EndSpan(span).ok());
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    cluster.Heartbeat();
  });
  absl::StatusOr<v1::Span> metrics = backend->GetSpanMetrics(span);
  late.join();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_NEAR(InThreadCpu(*metrics), 1.0, 1e-9) << "4 heartbeats seen, nothing added";
  const std::vector<v1::Warning> warnings = FineMetricWarnings(*backend);
  EXPECT_TRUE(warnings.empty()) << warnings[0].message();
}

TEST(DaskBackendTest, WithoutCumulativeTotalsTheLossIsQuantified) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds()}};
  cluster.digest_thread_cpu = 0.25;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  absl::StatusOr<v1::Span> metrics = SpanWithMissedHeartbeats(cluster, scheduler, *backend);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_NEAR(InThreadCpu(*metrics), 1.0, 1e-9);
  const std::vector<v1::Warning> warnings = FineMetricWarnings(*backend);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code(), "dask_fine_metrics_lost");
  EXPECT_THAT(warnings[0].message(), HasSubstr("3 of 7 worker heartbeats were missed"));
}

TEST(DaskBackendTest, TheFinalReadWaitsForAHeartbeatAfterTheEndBounded) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, NowSeconds()}};
  cluster.digest_thread_cpu = 0.25;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.final_heartbeat_timeout = absl::Milliseconds(200);
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const SpanId span = *backend->CreateSpan("run");
  cluster.Heartbeat();
  const size_t polls = scheduler.ops().size();
  WaitFor([&] { return scheduler.ops().size() > polls + 10; });
  ASSERT_TRUE(backend->EndSpan(span).ok());
  ASSERT_TRUE(backend->StopTracking().ok());  // the workers never beat again
  absl::StatusOr<v1::Span> metrics = backend->GetSpanMetrics(span);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NEAR(InThreadCpu(*metrics), 0.25, 1e-9);
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("No heartbeat after the end of span 'run' from Dask worker(s) "
                                 "tcp://127.0.0.1:1001")));
}

// Source installs report no version (distributed: nil); features are probed instead.
TEST(DaskBackendTest, AMissingVersionIsAWarningAndFeaturesAreProbed) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  Value packages = Value::Map();
  packages.Insert(Value::Str("distributed"), Value::Nil());
  Value reply = Value::Map();
  reply.Insert(Value::Str("packages"), packages);
  cluster.versions_override = dask::EncodeMessage(reply);
  cluster.stream_index = 7;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    return cluster.stream_calls > 3;
  });
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_EQ(backend->scheduler_version(), "unknown");
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("distributed version is unknown")));
  // The run gets both: the version for its metadata, the warning after those already there.
  RawRun run;
  run.warnings.emplace_back().set_code("earlier");
  backend->Contribute(run);
  EXPECT_EQ(run.engine_version, "unknown");
  ASSERT_GE(run.warnings.size(), 2u);
  EXPECT_EQ(run.warnings[0].code(), "earlier");
  EXPECT_THAT(WarningSentences(run.warnings),
              Contains(HasSubstr("distributed version is unknown")));
  std::lock_guard<std::mutex> lock(cluster.mutex);
  ASSERT_FALSE(cluster.stream_requests.empty());
  const Value* start_index = cluster.stream_requests[0].Find("start_index");
  ASSERT_NE(start_index, nullptr);
  EXPECT_EQ(*start_index->AsInt64(), 7);
}

// A 2026 version string on a server without get_task_stream_index reads on by `start`.
TEST(DaskBackendTest, AVersionStringDoesNotPickTheTaskStreamPath) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  cluster.versions_override = dask::testing::FixtureBytes("modern/head/versions.reply");
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  cluster.AddTask("inc-1", "tcp://127.0.0.1:1001", NowSeconds(), NowSeconds() + 0.001);
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    return cluster.stream_calls > 5;
  });
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_THAT(backend->scheduler_version(), HasSubstr("2026.7.1"));
  EXPECT_EQ(backend->task_records().size(), 1u);
  std::lock_guard<std::mutex> lock(cluster.mutex);
  for (const Value& r : cluster.stream_requests) EXPECT_EQ(r.Find("start_index"), nullptr);
  EXPECT_NE(cluster.stream_requests.back().Find("start"), nullptr);
}

TEST(DaskBackendTest, HostileRepliesAreGapsOrWarningsNeverCrashes) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  auto set_identity = [&](std::string bytes) {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.identity_override = std::move(bytes);
  };
  auto wait_polls = [&](size_t n) {
    const size_t polls = scheduler.ops().size();
    WaitFor([&] { return scheduler.ops().size() > polls + n; });
  };
  // A well-formed message of the wrong shape: a warning, the connection stays.
  set_identity(dask::EncodeMessage(Value::Str("not an identity")));
  wait_polls(10);
  // An absurd frame length: the stream is unusable, so it is a gap and a reconnection.
  set_identity(
      std::string("\x18\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f", 24));
  wait_polls(10);
  set_identity("");
  wait_polls(10);
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_GE(data->gaps_size(), 1);
  const std::vector<std::string> warnings = ContributedWarningSentences(*backend);
  EXPECT_THAT(warnings, Contains(HasSubstr("identity reply is not a map")));
  EXPECT_THAT(warnings, Contains(HasSubstr("exceed the cap")));
  EXPECT_THAT(warnings, Contains(HasSubstr("reconnected")));
}

// The polls (one per interval) and the reconnection backoff follow the injected clock: the
// test moves it one interval at a time, without sleeping.
TEST(DaskBackendTest, PollsOncePerIntervalOfTheInjectedClock) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  FakeClock clock;
  DaskBackendOptions options = OptionsFor(scheduler);
  options.clock = &clock;
  options.watch_heartbeats = false;  // the poller alone waits on the clock
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Seconds(1)).ok());  // polls once at once
  const auto identities = [&] {
    const std::vector<std::string> ops = scheduler.ops();
    return std::count(ops.begin(), ops.end(), "identity");
  };
  ASSERT_TRUE(clock.WaitForWaiters(1));
  const auto at_start = identities();
  clock.Advance(absl::Milliseconds(999));
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_EQ(identities(), at_start) << "no poll before the interval is over";
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(1)));
  EXPECT_EQ(identities(), at_start + 1);
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Seconds(1), 3));
  EXPECT_EQ(identities(), at_start + 4);
  ASSERT_TRUE(backend->StopTracking().ok());
}

TEST(DaskBackendTest, SchedulerLossIsAGapThenReconnects) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  auto scheduler =
      std::make_unique<FakeScheduler>([&](const Value& r) { return cluster.Reply(r); });
  const int port = scheduler->port();
  FakeClock clock;
  DaskBackendOptions options = OptionsFor(*scheduler);
  options.clock = &clock;
  options.watch_heartbeats = false;
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(10), 2));
  scheduler.reset();                                             // the scheduler dies
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(10), 3));  // polls that find it gone
  cluster.Heartbeat();
  scheduler = std::make_unique<FakeScheduler>([&](const Value& r) { return cluster.Reply(r); },
                                              port);  // and comes back on the same port
  // Past the longest backoff (100 ms): reconnected, and polled again.
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(10), 15));
  EXPECT_GT(scheduler->ops().size(), 0u);
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->gaps_size(), 1);
  EXPECT_GT(data->gaps(0).end_unix_ns(), data->gaps(0).start_unix_ns());
  EXPECT_THAT(data->gaps(0).reason(), HasSubstr("unreachable"));
  EXPECT_EQ(data->workers(0).time_unix_ns_size(), 2);  // kept from before, plus after
  ASSERT_FALSE(ContributedWarningSentences(*backend).empty());
  EXPECT_THAT(ContributedWarningSentences(*backend)[0], HasSubstr("reconnected"));
}

TEST(DaskBackendTest, SchedulerGoneUntilTheEndLeavesAnOpenGapClosed) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 0, 1.0}};
  auto scheduler =
      std::make_unique<FakeScheduler>([&](const Value& r) { return cluster.Reply(r); });
  FakeClock clock;
  DaskBackendOptions options = OptionsFor(*scheduler);
  options.clock = &clock;
  options.watch_heartbeats = false;
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(10), 2));
  scheduler.reset();
  ASSERT_TRUE(clock.AdvanceInSteps(absl::Milliseconds(10), 3));  // polls that find it gone
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->gaps_size(), 1);
  EXPECT_EQ(data->workers(0).time_unix_ns_size(), 1);
  EXPECT_THAT(ContributedWarningSentences(*backend).back(), HasSubstr("partial"));
}

TEST(DaskBackendTest, ReadsPerWorkerProfilesOfTheTrackedWindow) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0},
                     {"tcp://127.0.0.1:1002", 1, 2000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.profile_task_prefixes = {"inc"};
  options.rebuild_whole_worker_profiles = false;  // the fake's trees are not Dask's sums
  options.profile_interval_seconds = 0.02;
  auto backend = *DaskMetricsBackend::Create(options);
  const double before = NowSeconds();
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 10; });
  EXPECT_TRUE(backend->TakeProfiles({}).empty());  // fetched at the end only
  ASSERT_TRUE(backend->StopTracking().ok());
  const double after = NowSeconds();
  std::vector<v1::Profile> profiles = backend->TakeProfiles({});
  ASSERT_EQ(profiles.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const v1::Profile& p = profiles[i];
    EXPECT_EQ(p.worker(), i % 2 == 0 ? "tcp://127.0.0.1:1001" : "tcp://127.0.0.1:1002");
    EXPECT_EQ(p.worker_name(), i % 2 == 0 ? "w-1001" : "w-1002");
    EXPECT_EQ(p.host(), "127.0.0.1");
    EXPECT_EQ(p.threads(), i % 2 == 0 ? 2 : 1);
    EXPECT_EQ(p.memory_limit_bytes(), i % 2 == 0 ? 4000000000 : 2000000000);
    EXPECT_EQ(p.task_prefix(), i < 2 ? "" : "inc");
    EXPECT_EQ(p.source(), "dask");
    EXPECT_EQ(p.sampling_interval_seconds(), 0.02);
    EXPECT_GE(p.start_unix_ns() / 1e9, before - 1e-3);
    EXPECT_LE(p.end_unix_ns() / 1e9, after + 1e-3);
    EXPECT_LT(p.start_unix_ns(), p.end_unix_ns());
    ASSERT_EQ(p.nodes_size(), 2);
    EXPECT_EQ(p.nodes(0).count(), i % 2 == 0 ? 102 : 101);  // each worker's own tree
    EXPECT_EQ(p.frames(0).function(), i < 2 ? "compute" : "inc");
    EXPECT_EQ(p.frames(0).line(), "return work()");
  }
  EXPECT_TRUE(ContributedWarningSentences(*backend).empty())
      << ContributedWarningSentences(*backend)[0];
  EXPECT_TRUE(backend->TakeProfiles({}).empty());  // handed over once
  // The requests: per worker (merge_workers false), the tracked window in epoch seconds.
  std::lock_guard<std::mutex> lock(cluster.mutex);
  ASSERT_EQ(cluster.profile_requests.size(), 2u);
  const Value& all = cluster.profile_requests[0];
  EXPECT_EQ(all.Find("merge_workers")->type(), Value::Type::kBool);
  EXPECT_FALSE(all.Find("merge_workers")->bool_value());
  EXPECT_EQ(all.Find("key"), nullptr);
  ASSERT_EQ(all.Find("workers")->size(), 2u);
  EXPECT_DOUBLE_EQ(*all.Find("start")->AsDouble(), profiles[0].start_unix_ns() / 1e9);
  EXPECT_DOUBLE_EQ(*all.Find("stop")->AsDouble(), profiles[0].end_unix_ns() / 1e9);
  EXPECT_EQ(cluster.profile_requests[1].Find("key")->text(), "inc");
  EXPECT_TRUE(scheduler.WaitForOp("close"));
}

TEST(DaskBackendTest, StarAsksForAProfileOfEveryTaskPrefixSeen) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0},
                     {"tcp://127.0.0.1:1002", 1, 2000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.profile_task_prefixes = {"mul", "*"};
  options.max_auto_profile_prefixes = 2;
  auto backend = *DaskMetricsBackend::Create(options);
  cluster.AddTask("old-1", "tcp://127.0.0.1:1001", NowSeconds() - 100, NowSeconds() - 99);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  const double t = NowSeconds();
  // inc: 3 tasks, load: 2, mul: 1; "old" ran before the window.
  for (int i = 0; i < 3; ++i) {
    cluster.AddTask(absl::StrCat("inc-", i), "tcp://127.0.0.1:1001", t, t + 0.001);
  }
  cluster.AddTask("load-1", "tcp://127.0.0.1:1002", t, t + 0.001);
  cluster.AddTask("load-2", "tcp://127.0.0.1:1002", t, t + 0.001);
  cluster.AddTask("mul-1", "tcp://127.0.0.1:1002", t, t + 0.001);
  WaitFor([&] {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    return cluster.stream_calls > 5;
  });
  ASSERT_TRUE(backend->StopTracking().ok());
  std::vector<v1::Profile> profiles = backend->TakeProfiles({});
  // All tasks, then "mul" (named), then the two prefixes that computed longest: inc, load.
  std::vector<std::string> asked;
  {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    for (const Value& request : cluster.profile_requests) {
      const Value* key = request.Find("key");
      asked.push_back(key == nullptr ? "" : key->text());
    }
  }
  EXPECT_THAT(asked, ::testing::ElementsAre("", "mul", "inc", "load"));
  ASSERT_EQ(profiles.size(), 8u);
  EXPECT_EQ(profiles[4].task_prefix(), "inc");
  EXPECT_EQ(profiles[6].task_prefix(), "load");
  // The cap of 2 automatic prefixes left one of the 3 seen (mul, named anyway) out: said once.
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("the 2 task prefixes with the most compute time of the 3 seen")));
  // Each worker's all-tasks profile rebuilt from its per-prefix ones.
  EXPECT_TRUE(profiles[0].rebuilt_from_task_prefixes());
  EXPECT_FALSE(profiles[2].rebuilt_from_task_prefixes());
}

TEST(DaskBackendTest, AShortProfileReplyIsAskedForPerWorker) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0},
                     {"tcp://127.0.0.1:1002", 1, 2000000000, 1.0}};
  cluster.profile_failing = "tcp://127.0.0.1:1001";  // its slot gets 1002's tree
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  ASSERT_TRUE(backend->StopTracking().ok());
  std::vector<v1::Profile> profiles = backend->TakeProfiles({});
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].worker(), "tcp://127.0.0.1:1002");
  EXPECT_EQ(profiles[0].nodes(0).count(), 101);  // its own tree, not mislabelled
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("No profile from Dask worker(s) tcp://127.0.0.1:1001")));
  std::lock_guard<std::mutex> lock(cluster.mutex);
  EXPECT_EQ(cluster.profile_requests.size(), 3u);  // all, then each worker alone
}

// 40 workers, one of which fails, so one call per worker, each answered slowly: the fetch as a
// whole stops at profile_fetch_timeout (reliability study D5: 200 sequential calls).
TEST(DaskBackendTest, TheProfileFetchIsOneBoundedPhase) {
  Cluster cluster;
  for (int i = 0; i < 40; ++i) {
    cluster.workers.push_back({absl::StrCat("tcp://127.0.0.1:", 2000 + i), 1, 1000000000, 1.0});
  }
  cluster.profile_failing = "tcp://127.0.0.1:2000";
  FakeScheduler scheduler([&](const Value& r) {
    if (r.Find("op")->text() == "profile") {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return cluster.Reply(r);
  });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.profile_task_prefixes = {};
  options.profile_fetch_timeout = absl::Milliseconds(800);
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("the profile fetch ran out of its 800ms")));
  std::lock_guard<std::mutex> lock(cluster.mutex);
  EXPECT_GT(cluster.profile_requests.size(), 1u);
  EXPECT_LT(cluster.profile_requests.size(), 20u) << "1 + 40 calls of 100 ms: far beyond 800 ms";
}

// A profile reply dribbled byte by byte: give_up (an interrupted run) ends the fetch.
TEST(DaskBackendTest, TheProfileFetchGivesUpWhenTheRunDoes) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  std::atomic<bool> give_up{false};
  DaskBackendOptions options = OptionsFor(scheduler);
  options.comm.read_timeout = absl::Seconds(60);
  options.profile_fetch_timeout = absl::Seconds(60);
  options.comm.give_up = [&give_up] { return give_up.load(); };
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  scheduler.Dribble(std::chrono::milliseconds(50), {"profile"});
  std::thread signal([&] {
    ASSERT_TRUE(scheduler.WaitForOp("profile"));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    give_up = true;
  });
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  signal.join();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->workers_size(), 1);
  EXPECT_TRUE(backend->TakeProfiles({}).empty());
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("gave up waiting for the scheduler")));
}

TEST(DaskBackendTest, AFailedProfileFetchIsAWarningAndTheRestIsKept) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  cluster.profile_error = true;
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->workers_size(), 1);
  EXPECT_TRUE(backend->TakeProfiles({}).empty());
  EXPECT_THAT(ContributedWarningSentences(*backend), Contains(HasSubstr("profiles were not read")));
  EXPECT_THAT(ContributedWarningSentences(*backend), Contains(HasSubstr("profile boom")));
  EXPECT_TRUE(scheduler.WaitForOp("close"));  // the connection stayed usable
}

TEST(DaskBackendTest, ReadsProfileTreesNestedDeeperThanOtherReplies) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  cluster.profile_chain = 200;  // about 400 msgpack levels; the usual cap is 64
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  ASSERT_TRUE(backend->StopTracking().ok());
  std::vector<v1::Profile> profiles = backend->TakeProfiles({});
  ASSERT_EQ(profiles.size(), 1u) << (ContributedWarningSentences(*backend).empty()
                                         ? ""
                                         : ContributedWarningSentences(*backend)[0]);
  EXPECT_EQ(profiles[0].nodes_size(), 201);
  EXPECT_EQ(profiles[0].frames(199).function(), "f200");
}

TEST(DaskBackendTest, ProfilesCanBeTurnedOff) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.read_profiles = false;
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_TRUE(scheduler.WaitForOp("close"));
  EXPECT_TRUE(backend->TakeProfiles({}).empty());
  EXPECT_THAT(scheduler.ops(), ::testing::Not(Contains("profile")));
}

// A scheduler that answers one byte at a time once the run is under way: StopTracking (the
// poll in flight, the last poll, the profile fetch) still ends within end_timeout, not after
// several 10 s read timeouts, keeps what it had, and says which step was cut short.
TEST(DaskBackendTest, ASlowSchedulerCannotStretchTheEndOfTracking) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.comm.read_timeout = absl::Seconds(10);
  options.comm.connect_timeout = absl::Seconds(10);
  options.end_timeout = absl::Seconds(1);
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  scheduler.Dribble(std::chrono::milliseconds(50),
                    {"handshake", "identity", "processing", "dump_state", "profile"});
  const size_t before = scheduler.ops().size();
  // A poll is now dribbled: an identity request came after the Dribble (the poll asks for it
  // first; its reply takes a byte every 50 ms).
  WaitFor([&] {
    const std::vector<std::string> ops = scheduler.ops();
    return std::find(ops.begin() + static_cast<std::ptrdiff_t>(before), ops.end(), "identity") !=
           ops.end();
  });
  const absl::Time stop = absl::Now();
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  const absl::Duration took = absl::Now() - stop;
  ASSERT_TRUE(data.ok()) << data.status();
  // The bound the option promises (plus the 0.1 s a wait takes to notice), with room for a
  // loaded machine; without it this takes 10 s or more (each dribbled call's read timeout).
  EXPECT_LT(took, absl::Seconds(4)) << absl::FormatDuration(took);
  EXPECT_EQ(data->workers_size(), 1);
  EXPECT_GE(data->workers(0).time_unix_ns_size(), 1);
  EXPECT_THAT(ContributedWarningSentences(*backend),
              Contains(HasSubstr("The end of tracking ran out of its 1s (end_timeout)")));
  EXPECT_THAT(ContributedWarningSentences(*backend), Contains(HasSubstr("was cut short")));
}

// A healthy scheduler: the end of tracking is not cut, the profiles are read.
TEST(DaskBackendTest, AHealthySchedulerIsNotCutShort) {
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  auto backend = *DaskMetricsBackend::Create(OptionsFor(scheduler));
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  ASSERT_TRUE(backend->StopTracking().ok());
  EXPECT_EQ(backend->TakeProfiles({}).size(), 1u);
  for (const std::string& warning : ContributedWarningSentences(*backend)) {
    EXPECT_THAT(warning, ::testing::Not(HasSubstr("cut short")));
  }
}

// Text from the peer (an error reply, a worker's address and name) reaches the warnings and
// the measurement cut to 200 bytes with control bytes escaped (io/untrusted_json.h).
TEST(DaskBackendTest, PeerTextIsCutAndEscapedInWarningsAndSavedFields) {
  const std::string hostile = "tcp://\x1b[31m" + std::string(100000, 'A');
  Cluster cluster;
  cluster.workers = {{"tcp://127.0.0.1:1001", 2, 4000000000, 1.0}};
  FakeScheduler scheduler([&](const Value& r) { return cluster.Reply(r); });
  DaskBackendOptions options = OptionsFor(scheduler);
  options.read_profiles = false;
  auto backend = *DaskMetricsBackend::Create(options);
  ASSERT_TRUE(backend->StartTracking(absl::Milliseconds(10)).ok());
  WaitFor([&] { return scheduler.ops().size() > 5; });
  {
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.workers.push_back({hostile, 1, 1000, 2.0});  // joins mid-run
  }
  WaitFor([&] {
    std::vector<std::string> w = ContributedWarningSentences(*backend);
    return std::any_of(w.begin(), w.end(),
                       [](const std::string& x) { return absl::StrContains(x, "joined mid-run"); });
  });
  {
    Value reply = Value::Map();
    reply.Insert(Value::Str("status"), Value::Str("uncaught-error"));
    reply.Insert(Value::Str("exception_text"), Value::Str("\x07" + std::string(100000, 'E')));
    std::lock_guard<std::mutex> lock(cluster.mutex);
    cluster.identity_override = dask::EncodeMessage(reply);
  }
  WaitFor([&] {
    std::vector<std::string> w = ContributedWarningSentences(*backend);
    return std::any_of(w.begin(), w.end(), [](const std::string& x) {
      return absl::StrContains(x, "A poll of the Dask scheduler failed");
    });
  });
  absl::StatusOr<v1::TrackingData> data = backend->StopTracking();
  ASSERT_TRUE(data.ok()) << data.status();
  const std::vector<std::string> warnings = ContributedWarningSentences(*backend);
  EXPECT_THAT(warnings, Contains(HasSubstr("joined mid-run")));
  EXPECT_THAT(warnings, Contains(HasSubstr("scheduler error for op 'identity': \\x07")));
  for (const std::string& warning : warnings) {
    EXPECT_LT(warning.size(), 1000u) << warning.substr(0, 300);
    EXPECT_EQ(warning.find_first_of("\x07\x1b"), std::string::npos) << warning.substr(0, 300);
  }
  ASSERT_EQ(data->workers_size(), 2);
  const std::string& saved = data->workers(1).worker();
  // 200 bytes: "tcp://", the escape byte, "[31m", then 189 of the 100,000 "A"s.
  EXPECT_EQ(saved, "tcp://\\x1b[31m" + std::string(200 - 11, 'A') + "...");
  EXPECT_EQ(data->workers(0).worker(), "tcp://127.0.0.1:1001");  // ordinary text is as sent
}

}  // namespace
}  // namespace roastcoffea
