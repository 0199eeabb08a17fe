#include "tools/threadpool_engine.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ThreadPoolEngineTest, MakesThePoolFromOptionsWithoutFlags) {
  ThreadPoolEngineOptions options;
  options.threads = 2;
  absl::StatusOr<ThreadPoolEngine> engine = MakeThreadPoolEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_NE(engine->executor, nullptr);
  EXPECT_NE(engine->backend, nullptr);
}

TEST(ThreadPoolEngineTest, DefaultOptionsHaveNoProblems) {
  EXPECT_THAT(ThreadPoolEngineProblems(ThreadPoolEngineOptions{}), IsEmpty());
}

TEST(ThreadPoolEngineTest, NamesEveryBadFieldByItsFlag) {
  ThreadPoolEngineOptions options;
  options.threads = 0;
  options.profile_hz = 1001;
  EXPECT_THAT(ThreadPoolEngineProblems(options),
              ElementsAre("--threads must be at least 1, got 0",
                          "--profile_hz must be in [1, 1000], got 1001"));
  absl::StatusOr<ThreadPoolEngine> engine = MakeThreadPoolEngine(options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("--threads must be at least 1"));
}

}  // namespace
}  // namespace roastcoffea
