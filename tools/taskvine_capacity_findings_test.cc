// The capacity findings (aggregation/findings_capacity.h) on three real TaskVine runs
// (backends/taskvine/testdata/real/<run>/), measured end to end as
//   collect --backend=taskvine --taskvine_logs=TRANSACTIONS,PERFORMANCE
// does. Every expected figure comes from tools/testdata/capacity_reference.py, which reads the
// transactions log on its own (no code shared with the C++ parser or the rules); its output:
//
// runA (steady, one task exceeds its disk and TaskVine retries it):
//   span 35.981 s, mean slots 5.9996, worker-bound 15.564 s (43.3 %), dispatch-bound 15.235 s,
//   free slot-s while waiting 79.956 (37.0 % of 215.872); no dead workers.
//   Task 45's retry is READY at +16.40 s and RUNNING only at +31.57 s with 6 slots free.
//   replay 61 chunks, none before its first READY: 6 slots 17.895 s, 12 slots 9.797 s (all
//   ready at 0 it would say 17.076 s and 8.977 s: the processing tasks come after the
//   preprocessing).
// runB (churn, two workers SIGKILLed):
//   span 52.624 s, mean slots 3.8044, worker-bound 48.315 s (91.8 %), dispatch-bound 1.295 s,
//   free slot-s while waiting 1.373 (0.7 %); replay 80 chunks: 4 slots 42.440 s, 8 slots
//   21.871 s; dead: worker-31b19891 (FAILURE, 3 running, +12.53 s), worker-f30d3735 (FAILURE,
//   2 running, +20.76 s). expected-runB.md: exec lost 20.930 s.
// runB-hung (a worker killed without its children: no DISCONNECTION, no MANAGER END):
//   the reference keeps the silent worker busy to the log's end (span 355.3 s); worker-bound
//   50.105 s as the tool's. It finds worker-536daacc (FAILURE, 1 running, +17.80 s) dead; the
//   tool also ends worker-412bde50 at its last record (the backend's silent-death rule).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/taskvine/taskvine_backend.h"
#include "export/worker_tables.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/taskvine_run.h"
#include "schema/measurement.pb.h"
#include "tools/external_run.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

v1::Measurement Collect(const std::string& run) {
  const std::string dir = absl::StrCat("backends/taskvine/testdata/real/", run, "/");
  TaskVineRunOptions options;
  options.logs = absl::StrCat(dir, "transactions,", dir, "performance");
  SessionOptions session;
  session.interval = absl::Seconds(1);
  absl::StatusOr<ExternalRunResult> result = MeasureFinishedRun(
      "taskvine", [&options] { return ReadFinishedTaskVineRun(options); }, session);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->run.measurement : v1::Measurement();
}

std::vector<std::string> Codes(const v1::Measurement& m) {
  std::vector<std::string> codes;
  for (const v1::Finding& f : m.metrics().findings()) codes.push_back(f.code());
  return codes;
}

const v1::Finding& Get(const v1::Measurement& m, const std::string& code) {
  for (const v1::Finding& f : m.metrics().findings()) {
    if (f.code() == code) return f;
  }
  ADD_FAILURE() << "no finding " << code;
  static const v1::Finding none;
  return none;
}

double NumberOf(const v1::Finding& f, const std::string& key) {
  for (const v1::FindingNumber& n : f.numbers()) {
    if (n.key() == key) return n.value();
  }
  ADD_FAILURE() << "no number " << key << " in " << f.code();
  return -1;
}

bool Evaluated(const v1::Measurement& m, const std::string& code) {
  for (const v1::RuleEvaluation& e : m.metrics().rule_evaluations()) {
    if (e.code() == code) return e.evaluated();
  }
  ADD_FAILURE() << "no evaluation of " << code;
  return false;
}

TEST(TaskVineCapacityFindingsTest, RunAIsHeldUpByARetryNotByTooFewWorkers) {
  const v1::Measurement m = Collect("runA");
  // Worker-bound 43.3 % < 50 %: no advice to add workers; the old rule said "Queue wait: tasks
  // waited for a worker 448% of execute time ... add workers".
  EXPECT_THAT(Codes(m), Not(Contains("worker_bound")));
  EXPECT_TRUE(Evaluated(m, "worker_bound"));
  for (const v1::Finding& f : m.metrics().findings()) {
    EXPECT_THAT(f.title(), Not(HasSubstr("Queue wait"))) << f.code();
    EXPECT_THAT(f.suggestion(), Not(HasSubstr("add workers"))) << f.code();
  }
  const v1::Finding& retry = Get(m, "retry_penalty");
  // The transactions log: TASK 45 READY (attempt 2) at 1795440764.985308, RUNNING at
  // 1795440780.158115: held back 15.1728 s with slots free (all of the reference's 15.235 s of
  // dispatch-bound time but 0.06 s).
  EXPECT_NEAR(NumberOf(retry, "retry_penalty_seconds"), 15.1728, 0.001);
  EXPECT_THAT(retry.evidence(), HasSubstr("task 45"));
  // The 15.2 s stall is the retry's: dispatch-bound does not fire on its own.
  EXPECT_THAT(Codes(m), Not(Contains("dispatch_bound")));
  EXPECT_THAT(Get(m, "limiting_cause").title(), HasSubstr("retry penalty"));
  // The idle tail waits for the retried task 45: its advice is not smaller chunks.
  EXPECT_THAT(Get(m, "idle_tail").suggestion(), HasSubstr("The last chunk was a retry"));
  EXPECT_THAT(Codes(m), Not(Contains("dead_workers")));
}

TEST(TaskVineCapacityFindingsTest, RunBIsWorkerBoundAndNamesItsDeadWorkers) {
  const v1::Measurement m = Collect("runB");
  const v1::Finding& bound = Get(m, "worker_bound");
  EXPECT_NEAR(NumberOf(bound, "worker_bound_seconds"), 48.315, 0.01);
  EXPECT_NEAR(NumberOf(bound, "replayed_makespan_seconds"), 42.440, 0.01);
  EXPECT_NEAR(NumberOf(bound, "replayed_makespan_2x_seconds"), 21.871, 0.01);
  EXPECT_THAT(Codes(m), Not(Contains("dispatch_bound")));
  const v1::Finding& dead = Get(m, "dead_workers");
  EXPECT_EQ(NumberOf(dead, "dead_workers"), 2);
  EXPECT_NEAR(NumberOf(dead, "lost_work_seconds"), 20.930, 0.01);
  EXPECT_THAT(dead.evidence(),
              HasSubstr("worker-31b19891c41fd68bac2dd7fc3a9b4bfe (127.0.0.1) at 12.5 s with 3"));
  EXPECT_THAT(dead.evidence(),
              HasSubstr("worker-f30d3735e2299f80e380c912b5914b26 (127.0.0.1) at 20.8 s with 2"));
  // The killed workers are no idle slots: the old rule said "2 of 4 worker slots sat idle at
  // the end, 39%".
  EXPECT_THAT(Codes(m), Not(Contains("idle_tail")));
  EXPECT_TRUE(Evaluated(m, "idle_tail"));
  // The retry finding reports the work lost (20.93 s), not the reruns' time (14.9 s).
  EXPECT_NEAR(NumberOf(Get(m, "retried_chunks"), "lost_work_seconds"), 20.930, 0.01);
  EXPECT_THAT(Get(m, "limiting_cause").title(), HasSubstr("worker-bound"));
  // Workers joined and died during the run: over the time they were connected the surviving
  // slots were all busy, so no imbalance (by plain chunk time the old rule said 2.66x).
  EXPECT_THAT(Codes(m), Not(Contains("load_imbalance")));
  EXPECT_TRUE(Evaluated(m, "load_imbalance"));
}

TEST(TaskVineCapacityFindingsTest, RunBHungNamesTheSilentWorker) {
  const v1::Measurement m = Collect("runB-hung");
  EXPECT_THAT(Get(m, "silent_workers").evidence(),
              HasSubstr("worker-412bde5046ab7559f23b41ea7a7d3188"));
  EXPECT_NEAR(NumberOf(Get(m, "worker_bound"), "worker_bound_seconds"), 50.105, 0.01);
  const v1::Finding& dead = Get(m, "dead_workers");
  EXPECT_THAT(dead.evidence(), HasSubstr("worker-536daaccfb34987c63dc27836808c816"));
  EXPECT_THAT(dead.evidence(), HasSubstr("worker-412bde5046ab7559f23b41ea7a7d3188"));
  // The worker table says since when each dead worker was silent.
  const std::vector<SummaryTable> tables = BuildWorkerTables(m);
  ASSERT_EQ(tables.size(), 1u);
  // worker-412bde50 was killed without its children: no DISCONNECTION, nothing from it after
  // +11.0 s; worker-536daacc was declared lost promptly.
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows[0][0], "worker-412bde5046ab7559f23b41ea7a7d3188");
  EXPECT_EQ(tables[0].rows[0][4], "11.0 s (never declared lost)");
  EXPECT_EQ(tables[0].rows[1][0], "worker-536daaccfb34987c63dc27836808c816");
  EXPECT_EQ(tables[0].rows[1][4], "no");
  // Not evaluated: one host only, and no machine load measured.
  EXPECT_FALSE(Evaluated(m, "slow_hosts"));
  EXPECT_FALSE(Evaluated(m, "cpu_contention"));
}

// runC-monitored: manager.py scenario C (shared/engines/taskvine, resource monitoring on, 3
// workers of 2 cores on a 2-CPU VM under other builds' load), 30 busy-loop chunks. Each
// RETRIEVED holds the resource monitor's machine_load 4 on machine_cpus 2.
// tools/testdata/contention_reference.py (its own reading of the transactions log):
//   tasks 30 contended 29 span 6.501709 covered 5.702543 share 0.877084 wait 14.262891
//   cost 2.851272
// runA and runB ran without the monitor: not evaluated, with the reason.
TEST(TaskVineCapacityFindingsTest, RunCMonitoredShowsCpuContentionOnTheWorkers) {
  const v1::Measurement m = Collect("runC-monitored");
  const v1::Finding& f = Get(m, "cpu_contention");
  EXPECT_NEAR(NumberOf(f, "contended_share"), 0.877084, 1e-4);
  EXPECT_NEAR(NumberOf(f, "wait_seconds"), 14.262891, 1e-3);
  EXPECT_NEAR(NumberOf(f, "cost_seconds"), 2.851272, 1e-3);
  EXPECT_EQ(NumberOf(f, "contended_chunks"), 29);
  EXPECT_THAT(f.evidence(), HasSubstr("load 4.00 on 2 CPUs"));
  // The busy-loop tasks ran 29 % of their time on CPU: the rest was waiting for one, not I/O.
  const v1::Finding& off = Get(m, "io_bound");
  EXPECT_THAT(off.title(), HasSubstr("Off CPU: chunks were off CPU"));
  EXPECT_THAT(off.suggestion(), HasSubstr("Fix the CPU contention first"));
  // Worker-bound too, but more workers on the same loaded machines would not help; contention
  // cost more (2.85 s) than the slots (846 ms).
  EXPECT_THAT(Get(m, "worker_bound").suggestion(),
              HasSubstr("Not more workers on the same machines"));
  EXPECT_THAT(Get(m, "limiting_cause").title(), HasSubstr("CPU contention on the workers"));
  // The run ends on task 13, killed (exit 137, OUTPUT_MISSING) after 5.02 s while the other
  // 29 tasks had finished by +6.2 s (transactions: RETRIEVED at 1795752283.579648): the tail
  // is that failure, and smaller chunks would not have shortened it.
  const v1::Finding& tail = Get(m, "idle_tail");
  EXPECT_THAT(tail.evidence(), HasSubstr("task 13"));
  EXPECT_THAT(tail.evidence(), HasSubstr("(failed)"));
  EXPECT_THAT(tail.suggestion(), HasSubstr("The last chunk failed after"));
  EXPECT_THAT(tail.suggestion(), Not(HasSubstr("smaller chunk size")));

  const v1::Measurement a = Collect("runA");
  EXPECT_FALSE(Evaluated(a, "cpu_contention"));
  for (const v1::RuleEvaluation& e : a.metrics().rule_evaluations()) {
    if (e.code() == "cpu_contention") {
      EXPECT_THAT(e.reason(), HasSubstr("resource monitor"));
    }
  }
}

}  // namespace
}  // namespace roastcoffea
