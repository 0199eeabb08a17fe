// The cpu_contention rule (findings_contention.h) on small runs whose expected figures are
// worked out by hand in each test's comment. The real runs are in findings_corpus_test.cc and
// tools/taskvine_capacity_findings_test.cc.
#include "aggregation/findings_contention.h"

#include <string>
#include <utility>

#include "aggregation/findings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
int64_t At(double seconds) { return kT0 + static_cast<int64_t>(seconds * 1e9); }

class ChunkRun {
 public:
  explicit ChunkRun(std::string backend) : backend_(std::move(backend)) {}
  // An engine task that ran under the resource monitor.
  v1::ChunkRecord& Task(const std::string& worker, double start, double end, double load,
                        double cpus) {
    v1::ChunkRecord& c = Chunk(worker, 0, start, end);
    c.set_machine_load(load);
    c.set_machine_cpus(cpus);
    return c;
  }
  // An in-process chunk with its thread's CPU time and run-queue wait.
  v1::ChunkRecord& Thread(int thread, double start, double end, double cpu, double wait) {
    v1::ChunkRecord& c =
        Chunk(thread == 0 ? "vm:1" : "vm:1/thread-" + std::to_string(thread), thread, start, end);
    c.set_cpu_seconds(cpu);
    c.set_run_queue_wait_seconds(wait);
    return c;
  }
  v1::ChunkRecord& Chunk(const std::string& worker, int thread, double start, double end) {
    v1::ChunkRecord& c = *chunks_.Add();
    c.set_file("f" + std::to_string(chunks_.size()) + ".root");
    c.set_worker(worker);
    c.set_thread_index(thread);
    c.set_start_unix_ns(At(start));
    c.set_end_unix_ns(At(end));
    c.set_duration_seconds(end - start);
    c.set_status(v1::CHUNK_STATUS_OK);
    return c;
  }
  FindingsOutcome Evaluate() {
    FindingsInputs in;
    in.metrics = &metrics_;
    in.chunks = &chunks_;
    in.backend = backend_;
    return EvaluateFindings(in);
  }

 private:
  std::string backend_;
  v1::AggregatedMetrics metrics_;
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks_;
};

const v1::Finding* Find(const FindingsOutcome& o, const std::string& code) {
  for (const v1::Finding& f : o.findings) {
    if (f.code() == code) return &f;
  }
  return nullptr;
}

const v1::RuleEvaluation* Evaluation(const FindingsOutcome& o, const std::string& code) {
  for (const v1::RuleEvaluation& e : o.evaluations) {
    if (e.code() == code) return &e;
  }
  return nullptr;
}

double NumberOf(const v1::Finding& f, const std::string& key) {
  for (const v1::FindingNumber& n : f.numbers()) {
    if (n.key() == key) return n.value();
  }
  ADD_FAILURE() << "no number " << key;
  return -1;
}

// Two workers on 4-CPU machines. From 0 to 10 s both machines had load 6 (1.5x their CPUs),
// from 10 to 20 s load 2 (0.5x). Contended: [0, 10) of the 20 s run, 50 % >= 25 %. Each
// contended task of 10 s ran 4/6 of the time: it waited 10 x (1 - 1/1.5) = 3.33 s; 6.67 s, two
// at a time (20 s of tasks over the 10 s they cover), costs the run 3.33 s.
TEST(CpuContentionTest, MachineLoadAboveCoresFiresWithItsCost) {
  ChunkRun run("taskvine");
  run.Task("w1", 0, 10, 6, 4);
  run.Task("w2", 0, 10, 6, 4);
  run.Task("w1", 10, 20, 2, 4);
  run.Task("w2", 10, 20, 2, 4);
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "cpu_contention");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "contended_share"), 0.5);
  EXPECT_DOUBLE_EQ(NumberOf(*f, "peak_load_over_cpus"), 1.5);
  EXPECT_NEAR(NumberOf(*f, "wait_seconds"), 20.0 / 3, 1e-9);
  EXPECT_NEAR(NumberOf(*f, "cost_seconds"), 10.0 / 3, 1e-9);
  EXPECT_THAT(f->evidence(), HasSubstr("load 6.00 on 4 CPUs"));
  EXPECT_THAT(f->suggestion(), HasSubstr("more workers on the same machines would not help"));
}

// Contended only from 0 to 4 s of a 20 s run: 20 % < 25 %, evaluated and clear. A load of 4.9 on
// 4 CPUs (1.225x) is below the 1.25x of a contended task.
TEST(CpuContentionTest, BriefOrSlightLoadDoesNotFire) {
  ChunkRun run("taskvine");
  run.Task("w1", 0, 4, 8, 4);
  run.Task("w1", 4, 20, 4.9, 4);
  run.Task("w2", 0, 20, 1, 4);
  const FindingsOutcome o = run.Evaluate();
  EXPECT_EQ(Find(o, "cpu_contention"), nullptr);
  const v1::RuleEvaluation* e = Evaluation(o, "cpu_contention");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->evaluated());
  EXPECT_FALSE(e->fired());
}

// A CPU-starved thread pool: 4 threads whose chunks each ran 1 s of CPU and waited 3 s for one
// (load / CPUs = 4), then short chunks that waited a fifth of their time (1.25x). The slowest chunk
// (thread 0's second, 12 s, 3 s CPU 9 s wait) is a straggler whose advice points to the contention
// finding.
TEST(CpuContentionTest, StarvedThreadPoolFiresAndStragglersPointToIt) {
  ChunkRun run("threadpool");
  for (int thread = 0; thread < 4; ++thread) {
    run.Thread(thread, 0, 4, 1, 3);
    if (thread != 0) run.Thread(thread, 4, 8, 1, 3);
  }
  run.Thread(0, 4, 16, 3, 9);
  for (int i = 0; i < 8; ++i) run.Thread(i % 4, 16, 16.5, 0.4, 0.1);  // 1.25x: contended
  const FindingsOutcome o = run.Evaluate();
  const v1::Finding* f = Find(o, "cpu_contention");
  ASSERT_NE(f, nullptr);
  // Covered: [0, 16) and [16, 16.5) = the whole 16.5 s.
  EXPECT_DOUBLE_EQ(NumberOf(*f, "contended_share"), 1.0);
  // Waited 7 x 3 + 9 + 8 x 0.1 = 30.8 s; the contended chunks' durations sum to 7 x 4 + 12 +
  // 8 x 0.5 = 44 s over the 16.5 s they cover: 2.67 at a time, so 30.8 / 2.67 = 11.55 s.
  EXPECT_NEAR(NumberOf(*f, "cost_seconds"), 30.8 * 16.5 / 44, 1e-9);
  EXPECT_THAT(f->evidence(), HasSubstr("from run-queue wait"));
  const v1::Finding* stragglers = Find(o, "stragglers");
  ASSERT_NE(stragglers, nullptr);
  EXPECT_THAT(stragglers->suggestion(), HasSubstr("see the CPU contention finding"));
}

// Ten 1 s tasks on machines at load 1 on 4 CPUs, and one 10 s task on a machine at load 8 on 4
// (2x): contended over the whole 10 s run. The straggler (10x the 1 s median) says its machine
// was loaded and points to the contention finding.
TEST(CpuContentionTest, EngineStragglerOnALoadedMachinePointsToIt) {
  ChunkRun run("taskvine");
  for (int i = 0; i < 10; ++i) run.Task("w" + std::to_string(i), 0, 1, 1, 4);
  run.Task("slow", 0, 10, 8, 4);
  const FindingsOutcome o = run.Evaluate();
  ASSERT_NE(Find(o, "cpu_contention"), nullptr);
  const v1::Finding* stragglers = Find(o, "stragglers");
  ASSERT_NE(stragglers, nullptr);
  EXPECT_THAT(stragglers->evidence(), HasSubstr("machine load 8.00 on 4 CPUs"));
  EXPECT_THAT(stragglers->suggestion(),
              HasSubstr("1 named chunk ran on a machine loaded beyond its CPUs (see the CPU "
                        "contention finding)"));
}

TEST(CpuContentionTest, NotEvaluatedWithoutEvidenceSaysWhy) {
  ChunkRun engine("taskvine");
  engine.Chunk("w1", 0, 0, 10);
  const FindingsOutcome engine_outcome = engine.Evaluate();
  const v1::RuleEvaluation* e = Evaluation(engine_outcome, "cpu_contention");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
  EXPECT_THAT(e->reason(), HasSubstr("resource monitor"));

  ChunkRun dask("dask");
  const FindingsOutcome o = dask.Evaluate();
  e = Evaluation(o, "cpu_contention");
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->evaluated());
  EXPECT_THAT(e->reason(), HasSubstr("not its machine's load"));
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
