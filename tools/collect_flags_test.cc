#include "tools/collect_flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

// Sets --name=value as the command line would.
void SetFromText(const std::string& name, const std::string& value) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  ASSERT_NE(flag, nullptr) << name;
  std::string error;
  ASSERT_TRUE(flag->ParseFrom(value, &error)) << name << ": " << error;
}

TEST(CollectFlagsTest, EveryRunFlagIsADefinedFlagListedOnce) {
  std::vector<std::string> names;
  for (const RunFlag& flag : RunFlags()) {
    EXPECT_NE(absl::FindCommandLineFlag(flag.name), nullptr) << flag.name;
    EXPECT_NE(flag.read, nullptr) << flag.name;
    names.push_back(flag.name);
  }
  for (const std::string& name : names) {
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 1) << name;
  }
}

// A flag defined beside a backend's factory cannot be left out of the run's config.
TEST(CollectFlagsTest, EveryBackendFlagIsARunFlag) {
  std::vector<std::string> names;
  for (const RunFlag& flag : RunFlags()) names.push_back(flag.name);
  int backend_flags = 0;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    const std::string file = flag->Filename();
    for (const char* defined_in :
         {"tools/dask_collect.cc", "tools/taskvine_collect.cc", "tools/threadpool_collect.cc",
          "tools/workqueue/workqueue_flags.cc", "tools/trace_flag.cc"}) {
      if (absl::EndsWith(file, defined_in)) {
        EXPECT_THAT(names, Contains(std::string(name))) << file;
        ++backend_flags;
      }
    }
  }
  EXPECT_EQ(backend_flags, 12 + 3 + 3 + 9 + 1);
}

TEST(CollectFlagsTest, EachEnginesFlagsReachItsConfig) {
  SetFromText("backend", "dask");
  SetFromText("scheduler", "tcp://127.0.0.1:8786");
  SetFromText("dask_profile_prefixes", "process,load");
  SetFromText("dask_end_timeout", "7");
  SetFromText("taskvine_logs", "vine-run-info/most-recent");
  SetFromText("follow", "true");
  SetFromText("taskvine_category", "chunks");
  SetFromText("workers", "3");
  SetFromText("wq_stall_timeout", "9");
  SetFromText("wq_testing_fault", "kill:2");
  SetFromText("threads", "5");
  SetFromText("profile_hz", "250");
  SetFromText("trace", "run.pftrace");
  const RunConfig config = RunConfigFromFlags();
  EXPECT_EQ(config.backend, "dask");
  EXPECT_EQ(config.dask.scheduler, "tcp://127.0.0.1:8786");
  EXPECT_THAT(config.dask.profile_prefixes, ElementsAre("process", "load"));
  EXPECT_EQ(config.dask.end_timeout, 7);
  EXPECT_EQ(config.dask.read_timeout, DaskConfig{}.read_timeout);
  EXPECT_EQ(config.taskvine.logs, "vine-run-info/most-recent");
  EXPECT_TRUE(config.taskvine.follow);
  EXPECT_EQ(config.taskvine.chunk_category, "chunks");
  EXPECT_EQ(config.workqueue.workers, 3);
  EXPECT_EQ(config.workqueue.stall_timeout, 9);
  EXPECT_EQ(config.workqueue.testing_fault, "kill:2");
  EXPECT_EQ(config.threadpool.threads, 5);
  EXPECT_EQ(config.threadpool.profile_hz, 250);
  EXPECT_EQ(config.trace, "run.pftrace");
  EXPECT_EQ(ShowConfigFromFlags().trace, "run.pftrace");
}

// The typed configs' defaults are the flags' (the flags take them from the configs).
TEST(CollectFlagsTest, ConfigDefaultsAreTheFlagDefaults) {
  for (const char* name : {"dask_connect_timeout", "dask_profile_prefixes", "taskvine_category",
                           "wq_connect_timeout", "chunks_per_task"}) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    ASSERT_NE(flag, nullptr) << name;
    std::string error;
    ASSERT_TRUE(flag->ParseFrom(flag->DefaultValue(), &error)) << name << ": " << error;
  }
  const RunConfig config = RunConfigFromFlags();
  EXPECT_EQ(config.dask.connect_timeout, 5);
  EXPECT_THAT(config.dask.profile_prefixes, ElementsAre("*"));
  EXPECT_EQ(config.taskvine.chunk_category, "processing");
  EXPECT_EQ(config.workqueue.connect_timeout, 60);
  EXPECT_EQ(config.workqueue.chunks_per_task, 1);
}

}  // namespace
}  // namespace roastcoffea

// Its own main: the Work Queue library that the run's config links brings a main() of its own,
// which the linker would otherwise take from the archive before gtest_main's.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
