#include "aggregation/measure.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::Property;

RawRun EmptyRun() {
  RawRun run;
  run.window.start = absl::FromUnixSeconds(1'700'000'000);
  run.window.end = run.window.start + absl::Seconds(2);
  run.window.elapsed_seconds = 2;
  run.window.host_facts.emplace().set_online_cpus(4);
  run.window.host_facts->set_usable_cpus(4);
  run.backend = "test";
  run.tool_build.set_build_mode("opt");
  run.tool_build.set_optimized(true);
  return run;
}

v1::ChunkRecord Instrumented(const std::string& task_id, int64_t entry_start) {
  v1::ChunkRecord r;
  r.set_dataset("ttbar");
  r.set_file("f.root");
  r.set_entry_start(entry_start);
  r.set_entry_stop(entry_start + 100);
  r.set_events(100);
  r.set_task_id(task_id);
  r.set_start_unix_ns(1'700'000'000'000'000'000 + entry_start);
  r.set_end_unix_ns(r.start_unix_ns() + 500'000'000);
  r.set_duration_seconds(0.5);
  r.set_cpu_seconds(0.4);
  r.set_status(v1::CHUNK_STATUS_OK);
  return r;
}

v1::ChunkRecord EngineTask(const std::string& id, uint32_t attempt) {
  v1::ChunkRecord r;
  r.set_uuid("taskvine-task-" + id);
  r.set_task_id(id);
  r.set_attempt(attempt);
  r.set_worker("worker-" + id);
  r.set_status(v1::CHUNK_STATUS_OK);
  return r;
}

TEST(MeasureTest, HostFactsToolBuildAndNoAnalysisBuildByDefault) {
  absl::StatusOr<v1::Measurement> measurement = Measure(EmptyRun(), MeasureOptions());
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  const v1::MeasurementMetadata& metadata = measurement->metadata();
  EXPECT_EQ(metadata.schema_version(), 1);
  EXPECT_EQ(metadata.start_time().seconds(), 1'700'000'000);
  EXPECT_EQ(metadata.backend(), "test");
  EXPECT_EQ(metadata.host_facts().online_cpus(), 4);
  EXPECT_EQ(metadata.tool_build().build_mode(), "opt");
  // An external analysis: its build is unknown, and the tool's says nothing about it.
  EXPECT_FALSE(metadata.has_analysis_build());
  EXPECT_THAT(measurement->warnings(),
              Not(Contains(Property(&v1::Warning::code, "unoptimized_build"))));
  EXPECT_THAT(measurement->warnings(),
              Not(Contains(Property(&v1::Warning::code, "oversubscribed"))));
}

TEST(MeasureTest, InProcessThreadsAndAnalysisBuildFeedTheWarnings) {
  RawRun run = EmptyRun();
  run.in_process_worker_threads = 100000;  // more than any machine's CPUs
  v1::BuildInfo unoptimized;
  unoptimized.set_compiler("gcc 12.2.0");
  unoptimized.set_build_mode("fastbuild");
  unoptimized.set_optimized(false);
  run.analysis_build = unoptimized;
  absl::StatusOr<v1::Measurement> measurement = Measure(std::move(run), MeasureOptions());
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_EQ(measurement->metadata().analysis_build().build_mode(), "fastbuild");
  EXPECT_THAT(measurement->warnings(), Contains(Property(&v1::Warning::code, "oversubscribed")));
  EXPECT_THAT(measurement->warnings(), Contains(Property(&v1::Warning::code, "unoptimized_build")));
}

TEST(MeasureTest, JoinsEngineRecordsThenAttributesProfilesToTheJoinedRecords) {
  RawRun run = EmptyRun();
  run.engine_chunks = ChunkTableOf({EngineTask("7", 2), EngineTask("8", 0)});
  run.chunks = ChunkTableOf({Instrumented("7", 0), Instrumented("8", 100)});
  MeasureOptions options;
  std::vector<std::string> seen_workers;
  options.profiles_of_chunks = [&seen_workers](const ChunkTable& chunks) {
    chunks.ForEachRecord(
        [&](const v1::ChunkRecord& chunk) { seen_workers.push_back(chunk.worker()); });
    v1::Profile profile;
    profile.set_worker("worker-7");
    return std::vector<v1::Profile>{profile};
  };
  absl::StatusOr<v1::Measurement> measurement = Measure(std::move(run), options);
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  ASSERT_EQ(measurement->chunks_size(), 2);
  EXPECT_EQ(measurement->chunks(0).attempt(), 2u);  // the engine's manager retries
  EXPECT_EQ(measurement->chunks(0).dataset(), "ttbar");
  // The profile source saw the records after the join (the engine's workers on them).
  EXPECT_EQ(seen_workers, (std::vector<std::string>{"worker-7", "worker-8"}));
  ASSERT_EQ(measurement->profiles_size(), 1);
  EXPECT_EQ(measurement->profiles(0).worker(), "worker-7");
}

TEST(MeasureTest, JoinWarningsCarryTheChunkJoinCode) {
  RawRun run = EmptyRun();
  run.engine_chunks = ChunkTableOf({EngineTask("7", 0)});
  run.chunks = ChunkTableOf(
      {Instrumented("7", 0), Instrumented("77", 100)});  // task 77 unknown to the engine
  absl::StatusOr<v1::Measurement> measurement = Measure(std::move(run), MeasureOptions());
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_THAT(measurement->warnings(), Contains(Property(&v1::Warning::code, "chunk_join")));
}

TEST(MeasureTest, ChunkRecordsAreTheReportOnlyWithoutOneOfTheRuns) {
  RawRun run = EmptyRun();
  run.chunks = ChunkTableOf({Instrumented("", 0), Instrumented("", 100)});
  absl::StatusOr<v1::Measurement> from_chunks = Measure(std::move(run), MeasureOptions());
  ASSERT_TRUE(from_chunks.ok()) << from_chunks.status();
  EXPECT_EQ(from_chunks->report().events(), 200);
  EXPECT_EQ(from_chunks->report().chunks(), 2);

  run = EmptyRun();
  run.chunks = ChunkTableOf({Instrumented("", 0), Instrumented("", 100)});
  run.report.emplace().set_events(5000);
  run.report->set_chunks(50);
  absl::StatusOr<v1::Measurement> reported = Measure(std::move(run), MeasureOptions());
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_EQ(reported->report().events(), 5000);
  EXPECT_EQ(reported->report().chunks(), 50);
}

TEST(MeasureTest, MeasureRunHoldsTheRecordsAsATableAndRejectsTheImpossibleOnes) {
  RawRun run = EmptyRun();
  v1::ChunkRecord backwards = Instrumented("", 100);
  backwards.set_end_unix_ns(backwards.start_unix_ns() - 1);
  run.chunks = ChunkTableOf({Instrumented("", 0), backwards, Instrumented("", 200)});
  absl::StatusOr<MeasuredRun> measured = MeasureRun(std::move(run), MeasureOptions());
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_EQ(measured->measurement.chunks_size(), 0);
  ASSERT_EQ(measured->chunks.size(), 2u);
  EXPECT_EQ(measured->chunks.Int(chunk_field::kEntryStart, 1), 200);
  ASSERT_EQ(measured->measurement.rejected_chunks_size(), 1);
  EXPECT_EQ(measured->measurement.rejected_chunks(0).SerializeAsString(),
            backwards.SerializeAsString());
  EXPECT_THAT(measured->measurement.warnings(),
              Contains(Property(&v1::Warning::code, "invalid_chunk_record")));
  // The report and the figures count the two records kept.
  EXPECT_EQ(measured->measurement.report().chunks(), 2);
  EXPECT_EQ(measured->measurement.report().events(), 200);
  EXPECT_EQ(measured->measurement.metrics().chunks().num_chunks(), 2);
}

}  // namespace
}  // namespace roastcoffea
