#include "collector/run_stopwatch.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(RunStopwatchTest, StopReadsTheHost) {
  const RunWindow window = RunStopwatch().Stop();
  ASSERT_TRUE(window.host_facts.has_value());
  EXPECT_GE(window.host_facts->online_cpus(), 1);
  EXPECT_GT(window.host_facts->usable_cpus(), 0);
  EXPECT_LE(window.host_facts->usable_cpus(), window.host_facts->online_cpus());
}

}  // namespace
}  // namespace roastcoffea
