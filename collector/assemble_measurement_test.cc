#include "collector/assemble_measurement.h"

#include <utility>

#include "collector/tool_build.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::Not;
using ::testing::Property;

RawRun EmptyRun() {
  const RunStopwatch stopwatch;
  RawRun run;
  run.window = stopwatch.Stop();
  run.backend = "test";
  return run;
}

TEST(RunStopwatchTest, StopReadsTheHost) {
  const RunWindow window = RunStopwatch().Stop();
  ASSERT_TRUE(window.host_facts.has_value());
  EXPECT_GE(window.host_facts->online_cpus(), 1);
  EXPECT_GT(window.host_facts->usable_cpus(), 0);
  EXPECT_LE(window.host_facts->usable_cpus(), window.host_facts->online_cpus());
}

TEST(AssembleMeasurementTest, HostFactsToolBuildAndNoAnalysisBuildByDefault) {
  absl::StatusOr<v1::Measurement> measurement = AssembleMeasurement(EmptyRun());
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  const v1::MeasurementMetadata& metadata = measurement->metadata();
  EXPECT_TRUE(metadata.has_host_facts());
  ASSERT_TRUE(metadata.has_tool_build());
  EXPECT_EQ(metadata.tool_build().SerializeAsString(), ToolBuildInfo().SerializeAsString());
  // An external analysis: its build is unknown, and the tool's says nothing about it.
  EXPECT_FALSE(metadata.has_analysis_build());
  EXPECT_THAT(measurement->warnings(),
              Not(Contains(Property(&v1::Warning::code, "unoptimized_build"))));
  EXPECT_THAT(measurement->warnings(),
              Not(Contains(Property(&v1::Warning::code, "oversubscribed"))));
}

TEST(AssembleMeasurementTest, InProcessThreadsAndAnalysisBuildFeedTheWarnings) {
  RawRun run = EmptyRun();
  run.in_process_worker_threads = 100000;  // more than any machine's CPUs
  v1::BuildInfo unoptimized;
  unoptimized.set_compiler("gcc 12.2.0");
  unoptimized.set_build_mode("fastbuild");
  unoptimized.set_optimized(false);
  run.analysis_build = unoptimized;
  absl::StatusOr<v1::Measurement> measurement = AssembleMeasurement(std::move(run));
  ASSERT_TRUE(measurement.ok()) << measurement.status();
  EXPECT_EQ(measurement->metadata().analysis_build().build_mode(), "fastbuild");
  EXPECT_THAT(measurement->warnings(), Contains(Property(&v1::Warning::code, "oversubscribed")));
  EXPECT_THAT(measurement->warnings(), Contains(Property(&v1::Warning::code, "unoptimized_build")));
}

}  // namespace
}  // namespace roastcoffea
