#include "tools/taskvine_collect.h"

#include <sys/stat.h>

#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/raw_run.h"

ABSL_DECLARE_FLAG(std::string, taskvine_logs);
ABSL_DECLARE_FLAG(bool, follow);
ABSL_DECLARE_FLAG(std::string, taskvine_category);

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

TEST(TaskVineCollect, RequiresLogs) {
  absl::SetFlag(&FLAGS_taskvine_logs, "");
  absl::SetFlag(&FLAGS_taskvine_category, "");
  auto backend = MakeTaskVineBackendFromFlags();
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("--taskvine_logs is required"));
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("--taskvine_category"));
  absl::SetFlag(&FLAGS_taskvine_category, "processing");
}

TEST(TaskVineCollect, MissingLogsOfAFinishedRunAreReported) {
  absl::SetFlag(&FLAGS_taskvine_logs, "/nonexistent/vine-run-info/most-recent");
  absl::SetFlag(&FLAGS_follow, false);
  auto backend = MakeTaskVineBackendFromFlags();
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(std::string(backend.status().message()),
              HasSubstr("/nonexistent/vine-run-info/most-recent"));
  // Followed logs may appear later.
  absl::SetFlag(&FLAGS_follow, true);
  backend = MakeTaskVineBackendFromFlags();
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "taskvine");
  absl::SetFlag(&FLAGS_follow, false);
}

TEST(TaskVineCollect, FinishedRunFromItsLogs) {
  absl::SetFlag(&FLAGS_taskvine_logs,
                "backends/taskvine/testdata/synthetic-1-transactions.txt,"
                "backends/taskvine/testdata/synthetic-1-performance.txt");
  auto backend = MakeTaskVineBackendFromFlags();
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_TRUE((*backend)->StartTracking(absl::Seconds(1)).ok());
  auto tracking = (*backend)->StopTracking();
  ASSERT_TRUE(tracking.ok());
  EXPECT_EQ(tracking->workers_size(), 3);
  RawRun run;
  (*backend)->Contribute(run);
  EXPECT_EQ(run.engine_chunks.size(), 15u);
}

}  // namespace
}  // namespace roastcoffea
