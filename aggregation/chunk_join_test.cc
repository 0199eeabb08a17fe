#include "aggregation/chunk_join.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::ChunkRecord EngineTask(const std::string& id, uint32_t attempt, bool failed = false) {
  v1::ChunkRecord r;
  r.set_uuid("taskvine-task-" + id);
  r.set_task_id(id);
  r.set_attempt(attempt);
  r.set_worker("worker-" + id);
  r.set_start_unix_ns(1000);
  r.set_end_unix_ns(3000);
  r.set_duration_seconds(2e-6);
  r.set_cpu_seconds(1.5);
  r.set_memory_peak_bytes(4096);
  r.set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  if (failed) r.set_error_text("TaskVine task " + id + " ended with result SUCCESS, exit code 1");
  return r;
}

v1::ChunkRecord Instrumented(const std::string& task_id, int64_t start_ns, int64_t entry_start = 0,
                             bool failed = false) {
  v1::ChunkRecord r;
  r.set_dataset("ttbar");
  r.set_file("root://a/f.root");
  r.set_entry_start(entry_start);
  r.set_entry_stop(entry_start + 100);
  r.set_events(100);
  r.set_task_id(task_id);
  r.set_start_unix_ns(start_ns);
  r.set_end_unix_ns(start_ns + 500);
  r.set_duration_seconds(5e-7);
  r.set_cpu_seconds(0.4);
  r.set_status(failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  if (failed) r.set_error_text("ValueError: bad jet");
  return r;
}

// JoinChunkRecords, checked against JoinChunkTables on the same input: the same records, to
// the byte, in the same order, and the same warnings.
ChunkJoinResult Join(std::vector<v1::ChunkRecord> engine,
                     std::vector<v1::ChunkRecord> instrumented) {
  ChunkTable engine_table, instrumented_table;
  for (const v1::ChunkRecord& r : engine) engine_table.Append(r);
  for (const v1::ChunkRecord& r : instrumented) instrumented_table.Append(r);
  ChunkJoinResult joined = JoinChunkRecords(std::move(engine), std::move(instrumented));
  const ChunkTableJoinResult from_tables =
      JoinChunkTables(engine_table, std::move(instrumented_table));
  EXPECT_EQ(from_tables.warnings, joined.warnings);
  EXPECT_EQ(from_tables.table.size(), joined.records.size());
  for (size_t i = 0; i < joined.records.size() && i < from_tables.table.size(); ++i) {
    EXPECT_EQ(from_tables.table.Record(i).SerializeAsString(),
              joined.records[i].SerializeAsString())
        << "record " << i << ":\n"
        << from_tables.table.Record(i).DebugString() << "against\n"
        << joined.records[i].DebugString();
  }
  return joined;
}

TEST(ChunkJoinTest, InstrumentedRecordTakesTheEnginesAttemptsWorkerAndFailure) {
  ChunkJoinResult joined = Join({EngineTask("7", 2, /*failed=*/true)}, {Instrumented("7", 10'000)});
  ASSERT_EQ(joined.records.size(), 1u);
  const v1::ChunkRecord& r = joined.records[0];
  EXPECT_EQ(r.dataset(), "ttbar");  // the chunk's identity stays the instrumentation's
  EXPECT_EQ(r.events(), 100);
  EXPECT_EQ(r.attempt(), 2u);  // manager retries
  EXPECT_EQ(r.worker(), "worker-7");
  EXPECT_EQ(r.start_unix_ns(), 10'000);  // its own, finer, times are kept
  EXPECT_DOUBLE_EQ(r.cpu_seconds(), 0.4);
  EXPECT_EQ(r.memory_peak_bytes(), 4096);  // the instrumentation had none
  EXPECT_EQ(r.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_THAT(r.error_text(), HasSubstr("exit code 1"));
  EXPECT_THAT(joined.warnings, IsEmpty());
}

// The resource monitor's machine load and the task's submission come only from the engine.
TEST(ChunkJoinTest, InstrumentedRecordTakesTheMachineLoadAndSubmission) {
  v1::ChunkRecord engine = EngineTask("8", 0);
  engine.set_machine_load(4);
  engine.set_machine_cpus(2);
  engine.set_ready_unix_ns(500);
  ChunkJoinResult joined = Join({engine}, {Instrumented("8", 10'000)});
  ASSERT_EQ(joined.records.size(), 1u);
  EXPECT_DOUBLE_EQ(joined.records[0].machine_load(), 4);
  EXPECT_DOUBLE_EQ(joined.records[0].machine_cpus(), 2);
  EXPECT_EQ(joined.records[0].ready_unix_ns(), 500);
  // Without them the joined record has none.
  joined = Join({EngineTask("9", 0)}, {Instrumented("9", 10'000)});
  EXPECT_FALSE(joined.records[0].has_machine_cpus());
  EXPECT_FALSE(joined.records[0].has_ready_unix_ns());
}

TEST(ChunkJoinTest, BothFailuresAreKept) {
  ChunkJoinResult joined =
      Join({EngineTask("7", 0, /*failed=*/true)}, {Instrumented("7", 10'000, 0, /*failed=*/true)});
  ASSERT_EQ(joined.records.size(), 1u);
  EXPECT_EQ(joined.records[0].error_text(),
            "ValueError: bad jet; TaskVine task 7 ended with result SUCCESS, exit code 1");
}

TEST(ChunkJoinTest, ApplicationRetriesUnderNewTaskIdsBecomeOneRecord) {
  // Chunk [0, 100) failed as task 3 (after one manager retry), then the application resubmitted
  // it as task 9, which succeeded at the first attempt. Chunk [100, 200) ran once as task 4.
  ChunkJoinResult joined =
      Join({EngineTask("3", 1, /*failed=*/true), EngineTask("4", 0), EngineTask("9", 0)},
           {Instrumented("3", 10'000, 0, /*failed=*/true), Instrumented("4", 11'000, 100),
            Instrumented("9", 20'000, 0)});
  ASSERT_EQ(joined.records.size(), 2u);
  const v1::ChunkRecord& retried = joined.records[0];
  EXPECT_EQ(retried.task_id(), "9");
  EXPECT_THAT(retried.retried_task_ids(), ElementsAre("3"));
  EXPECT_EQ(retried.attempt(), 2u);  // 2 attempts of task 3 + 1 of task 9, counted from 0
  EXPECT_EQ(retried.status(), v1::CHUNK_STATUS_OK);
  EXPECT_EQ(retried.start_unix_ns(), 20'000);
  EXPECT_EQ(joined.records[1].task_id(), "4");
  EXPECT_EQ(joined.records[1].attempt(), 0u);
  EXPECT_THAT(joined.warnings, IsEmpty());
}

TEST(ChunkJoinTest, AChunkThatFailsEveryRetryKeepsEveryError) {
  ChunkJoinResult joined =
      Join({}, {Instrumented("b", 2'000, 0, true), Instrumented("a", 1'000, 0, true),
                Instrumented("c", 3'000, 0, true)});
  ASSERT_EQ(joined.records.size(), 1u);
  const v1::ChunkRecord& r = joined.records[0];
  EXPECT_EQ(r.task_id(), "c");
  EXPECT_THAT(r.retried_task_ids(), ElementsAre("a", "b"));  // oldest first
  EXPECT_EQ(r.attempt(), 2u);
  EXPECT_EQ(r.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(
      r.error_text(),
      "ValueError: bad jet (earlier: task a: ValueError: bad jet; task b: ValueError: bad jet)");
}

TEST(ChunkJoinTest, RecordsWithoutTaskIdsAreNeverFolded) {
  // The same chunk processed twice without task ids: two records, as the original keeps them.
  ChunkJoinResult joined =
      Join({EngineTask("1", 0)}, {Instrumented("", 1'000), Instrumented("", 2'000)});
  ASSERT_EQ(joined.records.size(), 3u);
  EXPECT_EQ(joined.records[2].task_id(), "1");  // the engine's record, unmatched, kept
  EXPECT_THAT(joined.warnings, IsEmpty());      // nothing was joined: no claim of a mismatch
}

TEST(ChunkJoinTest, MismatchesAreReported) {
  ChunkJoinResult joined = Join({EngineTask("1", 0), EngineTask("2", 0)},
                                {Instrumented("1", 1'000), Instrumented("77", 2'000, 100)});
  ASSERT_EQ(joined.records.size(), 3u);
  ASSERT_EQ(joined.warnings.size(), 2u);
  EXPECT_THAT(joined.warnings[0], HasSubstr("first: task 77"));
  EXPECT_THAT(joined.warnings[1],
              HasSubstr("1 engine task of the chunk category have no chunk record"));
}

TEST(ChunkJoinTest, EngineRecordsAloneAreUnchanged) {
  ChunkJoinResult joined = Join({EngineTask("1", 3), EngineTask("2", 0)}, {});
  ASSERT_EQ(joined.records.size(), 2u);
  EXPECT_EQ(joined.records[0].attempt(), 3u);
  EXPECT_THAT(joined.warnings, IsEmpty());
}

// A task that processed several chunks (Work Queue --chunks_per_task): one record per chunk,
// each with the task's attempts and worker; only the same chunk twice is suspicious.
TEST(ChunkJoinTest, ATaskOfSeveralChunksGivesEachItsRecord) {
  ChunkJoinResult joined =
      Join({EngineTask("5", 1)}, {Instrumented("5", 1'000, 0), Instrumented("5", 2'000, 100)});
  ASSERT_EQ(joined.records.size(), 2u);
  EXPECT_THAT(joined.warnings, IsEmpty());
  for (const v1::ChunkRecord& r : joined.records) {
    EXPECT_EQ(r.attempt(), 1u);
    EXPECT_EQ(r.worker(), "worker-5");
  }
  joined = Join({EngineTask("5", 0)}, {Instrumented("5", 1'000, 0), Instrumented("5", 2'000, 0)});
  ASSERT_EQ(joined.warnings.size(), 1u);
  EXPECT_THAT(joined.warnings[0], HasSubstr("share a task id"));
}

// The engine's worker goes to every record of a task that names none, whichever of them comes
// first (it is moved to the first that needs it, then copied from there).
TEST(ChunkJoinTest, EveryRecordOfATaskWithoutAWorkerGetsTheEngines) {
  v1::ChunkRecord own = Instrumented("5", 1'000, 0);
  own.set_worker("host:42");
  ChunkJoinResult joined = Join(
      {EngineTask("5", 0)}, {own, Instrumented("5", 2'000, 100), Instrumented("5", 3'000, 200)});
  ASSERT_EQ(joined.records.size(), 3u);
  EXPECT_EQ(joined.records[0].worker(), "host:42");
  EXPECT_EQ(joined.records[1].worker(), "worker-5");
  EXPECT_EQ(joined.records[2].worker(), "worker-5");
  own.set_entry_start(200);
  own.set_entry_stop(300);
  joined =
      Join({EngineTask("5", 0)}, {Instrumented("5", 1'000, 0), own, Instrumented("5", 3'000, 100)});
  ASSERT_EQ(joined.records.size(), 3u);
  EXPECT_EQ(joined.records[0].worker(), "worker-5");
  EXPECT_EQ(joined.records[1].worker(), "host:42");
  EXPECT_EQ(joined.records[2].worker(), "worker-5");
  EXPECT_THAT(joined.warnings, IsEmpty());
}

// Many tasks on a few workers: each record without a worker takes its own task's worker (the
// worker names interned once into the instrumented table), one with a worker keeps it, and a
// task the engine saw on no worker leaves it empty.
TEST(ChunkJoinTest, RecordsOfManyTasksOnFewWorkersTakeTheirTasksWorker) {
  std::vector<v1::ChunkRecord> engine, instrumented;
  for (int t = 1; t <= 40; ++t) {
    v1::ChunkRecord task = EngineTask(absl::StrCat(t), 0);
    task.set_worker(t % 7 == 0 ? "" : absl::StrCat("host-", t % 3));
    engine.push_back(task);
    v1::ChunkRecord record = Instrumented(absl::StrCat(t), 1'000 * t, 100 * t);
    if (t % 5 == 0) record.set_worker("own");
    instrumented.push_back(record);
  }
  const ChunkJoinResult joined = Join(engine, instrumented);
  ASSERT_EQ(joined.records.size(), 40u);
  for (int t = 1; t <= 40; ++t) {
    const std::string expected =
        t % 5 == 0 ? "own" : (t % 7 == 0 ? "" : absl::StrCat("host-", t % 3));
    EXPECT_EQ(joined.records[t - 1].worker(), expected) << "task " << t;
  }
}

// The third record of a task repeats the first one's chunk: compared with every earlier record
// of the task, not only the one before.
TEST(ChunkJoinTest, AChunkRepeatedLaterUnderOneTaskIsReported) {
  ChunkJoinResult joined = Join(
      {EngineTask("5", 0)},
      {Instrumented("5", 1'000, 0), Instrumented("5", 2'000, 100), Instrumented("5", 3'000, 0)});
  ASSERT_EQ(joined.warnings.size(), 1u);
  EXPECT_THAT(joined.warnings[0], HasSubstr("1 chunk record share a task id"));
  ASSERT_EQ(joined.records.size(), 2u);  // [0, 100) twice: folded
  EXPECT_EQ(joined.records[0].start_unix_ns(), 3'000);
  EXPECT_THAT(joined.records[0].retried_task_ids(), ElementsAre("5"));
}

// Ten thousand tasks of one chunk each, every ninth chunk (the first thousand) retried under a
// new task id: the hash-map paths checked record by record.
TEST(ChunkJoinTest, ManyTasksWithRetriesJoinRecordByRecord) {
  std::vector<v1::ChunkRecord> engine, instrumented;
  for (int i = 0; i < 10'000; ++i) {
    engine.push_back(EngineTask(absl::StrCat(i), 0));
    instrumented.push_back(Instrumented(absl::StrCat(i), 1'000 + i, (i % 9'000) * 100));
  }
  ChunkJoinResult joined = Join(std::move(engine), std::move(instrumented));
  EXPECT_THAT(joined.warnings, IsEmpty());
  ASSERT_EQ(joined.records.size(), 9'000u);
  for (int i = 0; i < 9'000; ++i) {
    const v1::ChunkRecord& r = joined.records[static_cast<size_t>(i)];
    ASSERT_EQ(r.entry_start(), i * 100);
    if (i < 1'000) {
      EXPECT_EQ(r.task_id(), absl::StrCat(i + 9'000));
      EXPECT_THAT(r.retried_task_ids(), ElementsAre(absl::StrCat(i)));
      EXPECT_EQ(r.attempt(), 1u);
    } else {
      EXPECT_EQ(r.task_id(), absl::StrCat(i));
      EXPECT_THAT(r.retried_task_ids(), IsEmpty());
    }
    EXPECT_EQ(r.worker(), absl::StrCat("worker-", r.task_id()));
  }
}

// Task ids are compared as strings whether the engine's ids are all numbers (joined through a
// vector indexed by the number) or not (a hash map): "007" is not task 7, the first of two
// engine records with one id is the one joined, and a very sparse numbering works too.
TEST(ChunkJoinTest, TaskIdsMatchAsTextWhetherOrNotTheEnginesAreNumbers) {
  for (const std::string extra_engine_id : {"", "x", "999999999"}) {
    std::vector<v1::ChunkRecord> engine = {EngineTask("1", 0), EngineTask("2", 1),
                                           EngineTask("3", 2), EngineTask("2", 3)};
    if (!extra_engine_id.empty()) engine.push_back(EngineTask(extra_engine_id, 4));
    std::vector<v1::ChunkRecord> instrumented = {
        Instrumented("2", 100, 0), Instrumented("007", 200, 100), Instrumented("4", 300, 200),
        Instrumented("", 400, 300), Instrumented("3", 500, 400)};
    ChunkJoinResult joined = Join(std::move(engine), std::move(instrumented));
    SCOPED_TRACE(extra_engine_id);
    ASSERT_GE(joined.records.size(), 5u);
    EXPECT_EQ(joined.records[0].attempt(), 1u);  // the first engine record of "2"
    EXPECT_EQ(joined.records[0].worker(), "worker-2");
    EXPECT_EQ(joined.records[1].worker(), "");  // "007" names no task
    EXPECT_EQ(joined.records[2].worker(), "");  // nor does "4"
    EXPECT_EQ(joined.records[3].worker(), "");  // no task id: never joined
    EXPECT_EQ(joined.records[4].attempt(), 2u);
    EXPECT_EQ(joined.records[4].worker(), "worker-3");
    EXPECT_THAT(joined.warnings, testing::Contains(HasSubstr("2 chunk records name a task the "
                                                             "engine's records do not have "
                                                             "(first: task 007)")));
  }
}

// Random mixes of what the join meets (numeric and other task ids, unknown and repeated ones,
// records without a task id or a worker, failures on either side, retries of one chunk, engine
// figures the instrumentation lacks, rare fields): JoinChunkTables gives what JoinChunkRecords
// gives (Join checks it).
TEST(ChunkJoinTest, TablesJoinAsRecordsDoOnRandomInputs) {
  std::mt19937_64 rng(25);
  for (int round = 0; round < 200; ++round) {
    const bool numbers = rng() % 2 == 0;
    const auto task_id = [&](int n) { return numbers ? absl::StrCat(n) : absl::StrCat("k", n); };
    std::vector<v1::ChunkRecord> engine, instrumented;
    const int tasks = 1 + static_cast<int>(rng() % 30);
    for (int t = 0; t < tasks; ++t) {
      v1::ChunkRecord r = EngineTask(task_id(static_cast<int>(rng() % 40)),
                                     static_cast<uint32_t>(rng() % 3), rng() % 4 == 0);
      if (rng() % 5 == 0) r.clear_worker();
      if (rng() % 4 == 0) r.set_machine_cpus(4), r.set_machine_load(6.5);
      if (rng() % 4 == 0) r.set_ready_unix_ns(500);
      if (rng() % 6 == 0) r.set_error_text("lost an attempt");
      engine.push_back(r);
    }
    const int records = static_cast<int>(rng() % 40);
    for (int i = 0; i < records; ++i) {
      v1::ChunkRecord r =
          Instrumented(rng() % 8 == 0 ? "" : task_id(static_cast<int>(rng() % 45)),
                       static_cast<int64_t>(rng() % 5) * 1000,
                       // Half the rounds without retries: the in-place join.
                       static_cast<int64_t>(round % 2 ? rng() % 6 : i) * 100, rng() % 5 == 0);
      if (rng() % 3 == 0) r.set_worker(absl::StrCat("own-", rng() % 3));
      if (rng() % 5 == 0) r.set_start_unix_ns(0), r.set_end_unix_ns(0);
      if (rng() % 4 == 0) r.set_cpu_seconds(0);
      if (rng() % 6 == 0) r.add_retried_task_ids(task_id(100 + i));
      if (rng() % 6 == 0) r.add_accessed_branches("Jet_pt");
      if (rng() % 7 == 0) r.clear_file(), r.set_entry_stop(0);
      instrumented.push_back(r);
    }
    SCOPED_TRACE(round);
    Join(std::move(engine), std::move(instrumented));
  }
}

}  // namespace
}  // namespace roastcoffea
