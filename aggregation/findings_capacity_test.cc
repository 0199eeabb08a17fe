// The capacity rules (findings_capacity.h) on small timelines whose expected figures are worked
// out by hand in each test's comment. The real TaskVine runs are in
// tools/taskvine_capacity_findings_test.cc.
#include "aggregation/findings_capacity.h"

#include <string>
#include <utility>
#include <vector>

#include "aggregation/capacity.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/findings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
int64_t At(double seconds) { return kT0 + static_cast<int64_t>(seconds * 1e9); }

// A worker's step series: cores throughout, executing tasks changing at the given instants,
// from `connect` to `end`.
struct WorkerShape {
  std::string id;
  std::string host = "h1";
  double cores = 1;
  double connect = 0, end = 10;
  std::vector<std::pair<double, int>> executing;  // (instant, tasks executing from then)
};

class Timeline {
 public:
  Timeline& Worker(const WorkerShape& shape) {
    v1::WorkerSeries& w = *tracking_.add_workers();
    w.set_worker(shape.id);
    w.set_host(shape.host);
    w.set_kind(v1::SERIES_KIND_STEP);
    const auto add = [&](double t, int executing) {
      w.add_time_unix_ns(At(t));
      w.add_cores(shape.cores);
      w.add_executing_tasks(executing);
    };
    int now = 0;
    add(shape.connect, 0);
    for (const auto& [t, executing] : shape.executing) {
      add(t, now);
      add(t, executing);
      now = executing;
    }
    add(shape.end, now);
    return *this;
  }
  // The ready queue: `waiting` tasks from each instant on.
  Timeline& Queue(std::vector<std::pair<double, int>> steps) {
    tracking_.set_worker_count_kind(v1::SERIES_KIND_STEP);
    for (const auto& [t, waiting] : steps) {
      tracking_.add_worker_count_time_unix_ns(At(t));
      tracking_.add_worker_count(1);
      tracking_.add_queued_chunks(waiting);
    }
    return *this;
  }
  Timeline& Chunk(int task, const std::string& worker, double start, double end, int attempt = 0) {
    v1::ChunkRecord& c = *chunks_.Add();
    c.set_task_id(std::to_string(task));
    c.set_worker(worker);
    c.set_start_unix_ns(At(start));
    c.set_end_unix_ns(At(end));
    c.set_duration_seconds(end - start);
    c.set_attempt(attempt);
    c.set_status(v1::CHUNK_STATUS_OK);
    return *this;
  }
  Timeline& LostWork(const std::string& worker, double seconds) {
    v1::ActivityTotal& t = *metrics_.mutable_fine()->add_by_worker();
    t.set_context("taskvine-worker");
    t.set_worker(worker);
    t.set_activity("lost-task-seconds");
    t.set_unit("core-seconds");
    t.set_value(seconds);
    return *this;
  }
  v1::TrackingData& tracking() { return tracking_; }
  google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks() { return chunks_; }
  v1::AggregatedMetrics& metrics() { return metrics_; }
  google::protobuf::RepeatedPtrField<v1::Warning>& warnings() { return warnings_; }

  // `with_columns`: the records' columns handed in, as Aggregate does (else made inside).
  FindingsOutcome Evaluate(bool with_tracking = true, bool with_columns = false) {
    FindingsInputs in;
    in.metrics = &metrics_;
    in.chunks = &chunks_;
    in.tracking = with_tracking ? &tracking_ : nullptr;
    in.warnings = &warnings_;
    in.elapsed_seconds = 10;
    const ChunkColumns columns = ColumnsOf(chunks_);
    if (with_columns) in.columns = &columns;
    return EvaluateFindings(in);
  }

 private:
  v1::TrackingData tracking_;
  v1::AggregatedMetrics metrics_;
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks_;
  google::protobuf::RepeatedPtrField<v1::Warning> warnings_;
};

std::vector<std::string> Codes(const FindingsOutcome& o) {
  std::vector<std::string> codes;
  for (const v1::Finding& f : o.findings) codes.push_back(f.code());
  return codes;
}

const v1::Finding* Find(const FindingsOutcome& o, const std::string& code) {
  for (const v1::Finding& f : o.findings) {
    if (f.code() == code) return &f;
  }
  return nullptr;
}

double NumberOf(const v1::Finding& f, const std::string& key) {
  for (const v1::FindingNumber& n : f.numbers()) {
    if (n.key() == key) return n.value();
  }
  ADD_FAILURE() << "no number " << key << " in " << f.code();
  return -1;
}

const v1::RuleEvaluation* Evaluation(const FindingsOutcome& o, const std::string& code) {
  for (const v1::RuleEvaluation& e : o.evaluations) {
    if (e.code() == code) return &e;
  }
  return nullptr;
}

TEST(ReplayMakespanTest, ListSchedulesInOrder) {
  // 10 tasks of 2 s: 5 waves on 2 slots (10 s), 3 waves on 4 slots (6 s).
  const std::vector<double> tens(10, 2.0);
  EXPECT_DOUBLE_EQ(ReplayMakespan(tens, 2), 10.0);
  EXPECT_DOUBLE_EQ(ReplayMakespan(tens, 4), 6.0);
  // 3, 1, 1, 1 on 2 slots: slot A runs 3; slot B runs 1, 1, 1 -> 3.
  EXPECT_DOUBLE_EQ(ReplayMakespan({3, 1, 1, 1}, 2), 3.0);
  EXPECT_DOUBLE_EQ(ReplayMakespan(std::vector<double>{}, 2), 0.0);
  EXPECT_DOUBLE_EQ(ReplayMakespan(std::vector<double>{1}, 0), 0.0);
}

TEST(ReplayMakespanTest, NeverStartsATaskBeforeItsSubmission) {
  // Two 2 s tasks ready at 0, two ready at 5: 0-2 twice, then 5-7 twice, on 2 slots or 4.
  const std::vector<ReplayTask> late = {{0, 2}, {0, 2}, {5, 2}, {5, 2}};
  EXPECT_DOUBLE_EQ(ReplayMakespan(late, 2), 7.0);
  EXPECT_DOUBLE_EQ(ReplayMakespan(late, 4), 7.0);
  // 3 s ready at 0, three 1 s ready at 1 on 2 slots: A 0-3; B 1-2, 2-3; the last on the first
  // to free (both at 3) 3-4.
  EXPECT_DOUBLE_EQ(ReplayMakespan(std::vector<ReplayTask>{{0, 3}, {1, 1}, {1, 1}, {1, 1}}, 2), 4.0);
  // A negative (before the timeline) ready time counts as 0.
  EXPECT_DOUBLE_EQ(ReplayMakespan(std::vector<ReplayTask>{{-4, 1}}, 1), 1.0);
}

// One 2-core worker busy on both cores for 10 s; tasks wait from 0 to 8 s. Worker-bound 8 of
// 10 s (80 % >= 50 %). Ten 2 s chunks: 10 s on 2 slots, 6 s on 4 (saving 4 s = 40 % >= 10 %).
Timeline WorkerBoundRun() {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 10, {{0, 2}}});
  run.Queue({{0, 8}, {2, 6}, {4, 4}, {6, 2}, {8, 0}, {10, 0}});
  for (int i = 0; i < 10; ++i) run.Chunk(i + 1, "w1", 2.0 * (i / 2), 2.0 * (i / 2) + 2);
  return run;
}

// The same run, but the application submitted each pair of chunks only when the previous pair
// ended (ready at 0, 0, 2, 2, 4, 4, 6, 6, 8, 8): the last pair, submitted at 8 s, ends at 10 s
// on any number of slots, so twice the slots save nothing and worker_bound does not fire.
TEST(CapacityTest, WorkerBoundReplayRespectsSubmission) {
  Timeline run = WorkerBoundRun();
  for (int i = 0; i < run.chunks().size(); ++i) {
    run.chunks().Mutable(i)->set_ready_unix_ns(At(2.0 * (i / 2)));
  }
  const FindingsOutcome o = run.Evaluate();
  EXPECT_THAT(Codes(o), Not(Contains("worker_bound")));
  const v1::RuleEvaluation* e = Evaluation(o, "worker_bound");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->evaluated());
}

TEST(CapacityTest, WorkerBoundPredictsTwiceTheSlots) {
  Timeline run = WorkerBoundRun();
  const std::optional<CapacityTimeline> t = AnalyseCapacity(run.tracking());
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->worker_bound_seconds, 8.0);
  EXPECT_DOUBLE_EQ(t->dispatch_bound_seconds, 0.0);
  EXPECT_DOUBLE_EQ(t->mean_slots, 2.0);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "worker_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "replayed_makespan_seconds"), 10.0);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "replayed_makespan_2x_seconds"), 6.0);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "saving_seconds"), 4.0);
  EXPECT_THAT(f->suggestion(), HasSubstr("More workers"));
  EXPECT_THAT(Codes(o), Not(Contains("dispatch_bound")));
  const v1::Finding* top = Find(o, "limiting_cause");
  ASSERT_NE(top, nullptr);
  EXPECT_THAT(top->title(), HasSubstr("worker-bound"));
  EXPECT_DOUBLE_EQ(NumberOf(*top, "cost_seconds"), 4.0);
}

// The worker-bound run whose chunks waited for a CPU half their time (run-queue wait 1 s of
// each 2 s chunk, 50 % >= kStarvationShare): more workers on those CPUs would not help.
TEST(CapacityTest, WorkerBoundOnStarvedCpusDoesNotAdviseMoreWorkers) {
  Timeline run = WorkerBoundRun();
  google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks = run.chunks();
  for (v1::ChunkRecord& c : chunks) c.set_run_queue_wait_seconds(1.0);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "worker_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->suggestion(), HasSubstr("Not more workers on the same CPUs"));
  EXPECT_THAT(f->suggestion(), HasSubstr("50%"));
}

// The same worker runs one task at a time while tasks wait 0..8 s: one slot free for 8 s, 8 of
// 20 slot-seconds (40 % >= 10 %), never worker-bound: more workers must not be advised.
TEST(CapacityTest, DispatchBoundWhenSlotsSatFreeWhileTasksWaited) {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 10, {{0, 1}}});
  run.Queue({{0, 4}, {8, 0}, {10, 0}});
  for (int i = 0; i < 5; ++i) run.Chunk(i + 1, "w1", 2.0 * i, 2.0 * i + 2);
  const std::optional<CapacityTimeline> t = AnalyseCapacity(run.tracking());
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->dispatch_bound_seconds, 8.0);
  EXPECT_DOUBLE_EQ(t->free_slot_seconds_while_waiting, 8.0);
  EXPECT_DOUBLE_EQ(t->worker_bound_seconds, 0.0);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "dispatch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->suggestion(), HasSubstr("More workers would not help"));
  EXPECT_DOUBLE_EQ(NumberOf(*f, "longest_stall_seconds"), 8.0);
  EXPECT_THAT(Codes(o), Not(Contains("worker_bound")));
  ASSERT_NE(Evaluation(o, "worker_bound"), nullptr);
  EXPECT_TRUE(Evaluation(o, "worker_bound")->evaluated());
  EXPECT_FALSE(Evaluation(o, "worker_bound")->fired());
}

// Queue empty from 2 to 5 s with the slot free, refilled at 5 s: underfed 3 s of 10 (30 %).
TEST(CapacityTest, UnderfedWhenTheQueueRanDryAndFilledAgain) {
  Timeline run;
  run.Worker({"w1", "h1", 1, 0, 10, {{0, 1}, {2, 0}, {5, 1}}});
  run.Queue({{0, 1}, {1, 0}, {5, 0}, {5, 1}, {6, 0}, {10, 0}});
  run.Chunk(1, "w1", 0, 2).Chunk(2, "w1", 5, 10);
  const std::optional<CapacityTimeline> t = AnalyseCapacity(run.tracking());
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->underfed_seconds, 3.0);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "dispatch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->title(), HasSubstr("Underfed"));
}

// A 2-core worker: both tasks done at 2 s, one failed and was held back: READY 2..8 s with both
// slots free, the retry (attempt 1) starts at 8.01 s. Stall 6 s (>= 1 s and >= 5 % of 10 s);
// the dispatch-bound free time (12 slot-s / 2 slots = 6 s) is all the retry's, so
// dispatch_bound does not fire on its own.
TEST(CapacityTest, RetryPenaltyExplainsTheStall) {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 12, {{0, 2}, {2, 0}, {8, 1}, {10, 0}}});
  run.Queue({{0, 0}, {2, 1}, {8, 0}, {12, 0}});
  run.Chunk(1, "w1", 0, 2).Chunk(2, "w1", 8.01, 10, /*attempt=*/1);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "retry_penalty");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "retry_penalty_seconds"), 6.0);
  EXPECT_THAT(f->evidence(), HasSubstr("task 2"));
  EXPECT_THAT(Codes(o), Not(Contains("dispatch_bound")));
  const v1::Finding* top = Find(o, "limiting_cause");
  ASSERT_NE(top, nullptr);
  EXPECT_THAT(top->title(), HasSubstr("retry penalty"));
}

TEST(CapacityTest, NoRetryPenaltyWithoutARetryAtTheStallsEnd) {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 12, {{0, 2}, {2, 0}, {8, 1}, {10, 0}}});
  run.Queue({{0, 0}, {2, 1}, {8, 0}, {12, 0}});
  run.Chunk(1, "w1", 0, 2).Chunk(2, "w1", 8.01, 10, /*attempt=*/0);
  const FindingsOutcome o = run.Evaluate();
  EXPECT_THAT(Codes(o), Not(Contains("retry_penalty")));
  EXPECT_THAT(Codes(o), Contains("dispatch_bound"));
}

// w1 (1 core) runs chunks 0..10 s; w2 (1 core) runs a chunk 0..2 s, then dies at 3 s with a task
// executing (1 s of work lost). Idle tail: w2's slot was alive idle only 2..3 s: idle 1 s of
// 2 slots x 10 s = 5 % < 10 %, so no idle tail (counting it to the run's end, 8 s = 40 %, would
// fire). dead_workers names w2 with 1 s lost; the retry finding reports that 1 s.
Timeline DeadWorkerRun() {
  Timeline run;
  run.Worker({"w1", "h1", 1, 0, 10, {{0, 1}}});
  run.Worker({"w2", "h1", 1, 0, 3, {{0, 1}}});
  run.Queue({{0, 4}, {2, 3}, {3, 4}, {4, 2}, {6, 1}, {8, 0}, {10, 0}});
  run.Chunk(1, "w1", 0, 2).Chunk(2, "w2", 0, 2).Chunk(3, "w1", 2, 4).Chunk(4, "w1", 4, 6);
  run.Chunk(5, "w1", 6, 8, /*attempt=*/1).Chunk(6, "w1", 8, 10);
  run.LostWork("w2", 1.0);
  run.metrics().mutable_chunks()->set_num_chunks(6);
  run.metrics().mutable_chunks()->set_num_retried_chunks(1);
  return run;
}

TEST(CapacityTest, DeadWorkersAreNamedAndAreNoIdleSlots) {
  Timeline run = DeadWorkerRun();
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* dead = Find(o, "dead_workers");
  ASSERT_NE(dead, nullptr);
  EXPECT_THAT(dead->evidence(), HasSubstr("w2 (h1) at 3.00 s with 1 running, 1.00 s of work lost"));
  EXPECT_DOUBLE_EQ(NumberOf(*dead, "lost_work_seconds"), 1.0);
  EXPECT_THAT(Codes(o), Not(Contains("idle_tail")));
  ASSERT_NE(Evaluation(o, "idle_tail"), nullptr);
  EXPECT_TRUE(Evaluation(o, "idle_tail")->evaluated());
  const v1::Finding* retried = Find(o, "retried_chunks");
  ASSERT_NE(retried, nullptr);
  EXPECT_THAT(retried->evidence(), HasSubstr("lost attempts had run 1.00 s"));
  EXPECT_DOUBLE_EQ(NumberOf(*retried, "lost_work_seconds"), 1.0);
}

TEST(CapacityTest, WithoutTheTimelineTheIdleSlotIsCountedAndNoWorkerIsDead) {
  // The same chunks without tracking: the old reading, w2 idle from 2 s to the end (40 %).
  Timeline run = DeadWorkerRun();
  const FindingsOutcome o = run.Evaluate(/*with_tracking=*/false);
  EXPECT_THAT(Codes(o), Contains("idle_tail"));
  EXPECT_THAT(Codes(o), Not(Contains("dead_workers")));
  for (const char* code : {"worker_bound", "dispatch_bound", "dead_workers", "limiting_cause"}) {
    const v1::RuleEvaluation* e = Evaluation(o, code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_FALSE(e->evaluated()) << code;
    EXPECT_THAT(e->reason(), HasSubstr("no task timeline")) << code;
  }
}

// w2 died at 3 s; its last message at 0.5 s: quiet 2.5 s >= 2 s.
TEST(CapacityTest, SilentWorkerFromItsLastMessage) {
  Timeline run = DeadWorkerRun();
  v1::WorkerSeries& w2 = *run.tracking().mutable_workers(1);
  for (int i = 0; i < w2.time_unix_ns_size(); ++i) w2.add_last_seen_unix_seconds(0);
  w2.set_last_seen_unix_seconds(0, 1e-9 * static_cast<double>(At(0.5)));
  const FindingsOutcome quiet = run.Evaluate();
  const v1::Finding* f = Find(quiet, "silent_workers");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(NumberOf(*f, "quiet_seconds"), 2.5, 1e-6);
  // Heard from at 2.5 s: quiet 0.5 s, no finding, but evaluated.
  w2.set_last_seen_unix_seconds(0, 1e-9 * static_cast<double>(At(2.5)));
  const FindingsOutcome o = run.Evaluate();
  EXPECT_THAT(Codes(o), Not(Contains("silent_workers")));
  EXPECT_TRUE(Evaluation(o, "silent_workers")->evaluated());
  // Neither last-message times nor an inferred silent death: not evaluated.
  Timeline plain = DeadWorkerRun();
  const FindingsOutcome plain_outcome = plain.Evaluate();
  ASSERT_NE(Evaluation(plain_outcome, "silent_workers"), nullptr);
  EXPECT_FALSE(Evaluation(plain_outcome, "silent_workers")->evaluated());
}

// w1 on host a runs 1 s chunks, w2 on host b 2 s chunks (6 each): b's median 2 s is 2x a's
// (>= 1.5x). With 1.2 s chunks on b (1.2x) no finding.
TEST(CapacityTest, SlowHostFromTheHostsMedians) {
  for (const double slow : {2.0, 1.2}) {
    Timeline run;
    run.Worker({"w1", "a", 1, 0, 12, {{0, 1}}});
    run.Worker({"w2", "b", 1, 0, 12, {{0, 1}}});
    run.Queue({{0, 0}, {12, 0}});
    for (int i = 0; i < 6; ++i) {
      run.Chunk(2 * i + 1, "w1", i, i + 1);
      run.Chunk(2 * i + 2, "w2", slow * i, slow * (i + 1));
    }
    const FindingsOutcome o = run.Evaluate();
    EXPECT_TRUE(Evaluation(o, "slow_hosts")->evaluated());
    // The same from the columns Aggregate hands in (each worker's host looked up once).
    const FindingsOutcome from_columns = run.Evaluate(true, /*with_columns=*/true);
    ASSERT_EQ(from_columns.findings.size(), o.findings.size());
    for (size_t k = 0; k < o.findings.size(); ++k) {
      EXPECT_EQ(from_columns.findings[k].SerializeAsString(), o.findings[k].SerializeAsString());
    }
    if (slow == 2.0) {
      const v1::Finding* f = Find(o, "slow_hosts");
      ASSERT_NE(f, nullptr);
      EXPECT_THAT(f->title(), HasSubstr("chunks on b took 2.0x"));
    } else {
      EXPECT_THAT(Codes(o), Not(Contains("slow_hosts")));
    }
  }
}

TEST(CapacityTest, SlowHostsNotEvaluatedOnOneHost) {
  Timeline run = WorkerBoundRun();
  const FindingsOutcome o = run.Evaluate();
  const v1::RuleEvaluation* e = Evaluation(o, "slow_hosts");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
  EXPECT_THAT(e->reason(), HasSubstr("fewer than 2 hosts"));
}

// w1 busy 0..10 s; w2 connects at 1 s while tasks wait (0..8 s) and runs its first task at
// `first`: a start-up of first - 1 s, >= 2 s fires.
TEST(CapacityTest, SlowStartWhileTasksWaited) {
  for (const double first : {4.0, 2.0}) {
    Timeline run;
    run.Worker({"w1", "h1", 1, 0, 10, {{0, 1}}});
    run.Worker({"w2", "h1", 1, 1, 10, {{first, 1}}});
    run.Queue({{0, 5}, {8, 0}, {10, 0}});
    run.Chunk(1, "w1", 0, 5).Chunk(2, "w2", first, 10);
    const FindingsOutcome o = run.Evaluate();
    if (first == 4.0) {
      const v1::Finding* f = Find(o, "slow_start");
      ASSERT_NE(f, nullptr);
      EXPECT_DOUBLE_EQ(NumberOf(*f, "longest_start_seconds"), 3.0);
      EXPECT_THAT(f->evidence(), HasSubstr("w2 (connected 1.00 s into the run) 3.00 s"));
    } else {
      EXPECT_THAT(Codes(o), Not(Contains("slow_start")));
      EXPECT_TRUE(Evaluation(o, "slow_start")->evaluated());
    }
  }
}

// Tasks that take a whole 2-core worker (allocated 2 cores x 10 s = 20 core-s over 10 s of one
// executing task): one task leaves no slot free, so tasks waiting 0..8 s are worker-bound, not
// dispatch-bound (counted in cores, one core would look free for 8 s).
TEST(CapacityTest, TasksThatTakeTheWholeWorkerLeaveNoSlotFree) {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 10, {{0, 1}}});
  run.Queue({{0, 4}, {8, 0}, {10, 0}});
  for (int i = 0; i < 5; ++i) run.Chunk(i + 1, "w1", 2.0 * i, 2.0 * i + 2);
  EXPECT_DOUBLE_EQ(AnalyseCapacity(run.tracking())->dispatch_bound_seconds, 8.0);
  v1::ActivityTotal& allocated = *run.metrics().mutable_fine()->add_by_worker();
  allocated.set_context("taskvine-worker");
  allocated.set_worker("w1");
  allocated.set_activity("allocated-core-seconds");
  allocated.set_value(20.0);
  const CoresPerTask cores = CoresPerTaskFromAllocation(run.tracking(), run.metrics().fine());
  ASSERT_EQ(cores.count("w1"), 1u);
  EXPECT_DOUBLE_EQ(cores.at("w1"), 2.0);
  const std::optional<CapacityTimeline> t = AnalyseCapacity(run.tracking(), &cores);
  EXPECT_DOUBLE_EQ(t->dispatch_bound_seconds, 0.0);
  EXPECT_DOUBLE_EQ(t->worker_bound_seconds, 8.0);
  const FindingsOutcome o = run.Evaluate();
  EXPECT_THAT(Codes(o), Not(Contains("dispatch_bound")));
}

// Function calls in library instances are not executing tasks of the worker series.
TEST(CapacityTest, ServerlessRunsAreNotEvaluated) {
  Timeline run = WorkerBoundRun();
  v1::ActivityTotal& slots = *run.metrics().mutable_fine()->add_by_task_prefix();
  slots.set_context("taskvine-run");
  slots.set_activity("function-slot-seconds");
  slots.set_value(100);
  const FindingsOutcome o = run.Evaluate();
  EXPECT_THAT(Codes(o), Not(Contains("worker_bound")));
  EXPECT_THAT(Evaluation(o, "worker_bound")->reason(), HasSubstr("serverless"));
}

// w2 connects at 1 s, w3 at 3 s, tasks wait 0..8 s, and both run their first task at 6 s: a
// common start (within 1 s) of workers that joined 2 s apart is the tasks held back, not a
// start-up of 5 and 3 s.
TEST(CapacityTest, SlowStartOfWorkersThatAllBeganAtOnceIsTasksHeldBack) {
  Timeline run;
  run.Worker({"w1", "h1", 1, 0, 10, {{0, 1}}});
  run.Worker({"w2", "h1", 1, 1, 10, {{6, 1}}});
  run.Worker({"w3", "h1", 1, 3, 10, {{6, 1}}});
  run.Queue({{0, 5}, {8, 0}, {10, 0}});
  run.Chunk(1, "w1", 0, 5).Chunk(2, "w2", 6, 10).Chunk(3, "w3", 6, 10);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "slow_start");
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(f->title(), HasSubstr("sat idle while tasks waited until 6.00 s"));
  EXPECT_THAT(f->suggestion(), HasSubstr("Not the workers' start-up"));
  EXPECT_DOUBLE_EQ(NumberOf(*f, "longest_start_seconds"), 5.0);
}

TEST(CapacityTest, CpuContentionIsNotEvaluatedWithoutMachineLoad) {
  Timeline run = WorkerBoundRun();
  const FindingsOutcome o = run.Evaluate();
  const v1::RuleEvaluation* e = Evaluation(o, "cpu_contention");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
}

// w1 (1 core) connected 0-10 s and busy throughout; w2 joined at 5 s and was busy 5-10 s. By
// chunk time w1 ran 10 s against a mean of 7.5 s (1.33x >= 1.25x), but over their connected
// time both were busy 100 %: no imbalance. w3, connected 0-10 s but busy only 0-4 s (40 %),
// is: rates 1, 1, 0.4, mean 0.8, busiest 1 / 0.8 = 1.25x.
TEST(CapacityTest, LoadImbalanceCountsEachWorkersConnectedTime) {
  // One-second chunks back to back (load_imbalance needs 10 successful chunks).
  const auto chunks = [](Timeline& t, int first_id, const char* worker, int from, int to) {
    for (int s = from; s < to; ++s) t.Chunk(first_id + s, worker, s, s + 1);
  };
  Timeline run;
  run.Worker({"w1", "h1", 1, 0, 10, {{0, 1}}});
  run.Worker({"w2", "h1", 1, 5, 10, {{5, 1}}});
  run.Queue({{0, 0}, {10, 0}});
  chunks(run, 100, "w1", 0, 10);
  chunks(run, 200, "w2", 5, 10);
  FindingsOutcome o = run.Evaluate();
  EXPECT_TRUE(Evaluation(o, "load_imbalance")->evaluated());
  EXPECT_THAT(Codes(o), Not(Contains("load_imbalance")));
  run.Worker({"w3", "h1", 1, 0, 10, {{0, 1}, {4, 0}}});
  chunks(run, 300, "w3", 0, 4);
  o = run.Evaluate();
  const v1::Finding* f = Find(o, "load_imbalance");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(NumberOf(*f, "max_over_mean"), 1.25, 1e-9);
  EXPECT_NEAR(NumberOf(*f, "least_busy_slot_busy_fraction"), 0.4, 1e-9);
  EXPECT_THAT(f->title(), HasSubstr("connected time"));
  // w3 died at 4 s with a task running (its lost attempt is no chunk record): left out, so the
  // two that stayed are both busy 100 % of their connected time.
  Timeline died;
  died.Worker({"w1", "h1", 1, 0, 10, {{0, 1}}});
  died.Worker({"w2", "h1", 1, 5, 10, {{5, 1}}});
  died.Worker({"w3", "h1", 1, 0, 4, {{0, 1}}});
  died.Queue({{0, 0}, {10, 0}});
  chunks(died, 100, "w1", 0, 10);
  chunks(died, 200, "w2", 5, 10);
  died.Chunk(300, "w3", 0, 1);
  EXPECT_THAT(Codes(died.Evaluate()), Not(Contains("load_imbalance")));
}

// A log that runs on long after the last task (no MANAGER END, workers kept connected) adds
// nothing: the timeline ends with the last busy or waiting instant.
TEST(CapacityTest, TimelineEndsWithTheLastWork) {
  Timeline run;
  run.Worker({"w1", "h1", 2, 0, 300, {{0, 2}, {10, 0}}});
  run.Queue({{0, 8}, {8, 0}, {300, 0}});
  const std::optional<CapacityTimeline> t = AnalyseCapacity(run.tracking());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->end_ns - t->start_ns, At(10) - At(0));
  EXPECT_DOUBLE_EQ(t->worker_bound_seconds, 8.0);
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
