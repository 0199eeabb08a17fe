#include "tools/taskvine_collect.h"

#include <sys/stat.h>

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/raw_run.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

TEST(TaskVineCollect, RequiresLogs) {
  TaskVineConfig config;
  config.chunk_category = "";
  auto backend = MakeTaskVineBackend(config);
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("--taskvine_logs is required"));
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("--taskvine_category"));
}

TEST(TaskVineCollect, MissingLogsOfAFinishedRunAreReported) {
  TaskVineConfig config;
  config.logs = "/nonexistent/vine-run-info/most-recent";
  auto backend = MakeTaskVineBackend(config);
  EXPECT_TRUE(LogsAreOfAFinishedRun(config));
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(std::string(backend.status().message()),
              HasSubstr("/nonexistent/vine-run-info/most-recent"));
  // Followed logs may appear later.
  config.follow = true;
  EXPECT_FALSE(LogsAreOfAFinishedRun(config));
  backend = MakeTaskVineBackend(config);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "taskvine");
}

TEST(TaskVineCollect, FinishedRunFromItsLogs) {
  TaskVineConfig config;
  config.logs =
      "backends/taskvine/testdata/synthetic-1-transactions.txt,"
      "backends/taskvine/testdata/synthetic-1-performance.txt";
  auto backend = MakeTaskVineBackend(config);
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_TRUE((*backend)->StartTracking(absl::Seconds(1)).ok());
  auto tracking = (*backend)->StopTracking();
  ASSERT_TRUE(tracking.ok());
  EXPECT_EQ(tracking->workers_size(), 3);
  RawRun run;
  (*backend)->Contribute(run);
  EXPECT_EQ(run.engine_chunks.size(), 15u);
  // The same logs through the finished-run importer, as collect reads them without a command.
  absl::StatusOr<RawRun> read = ReadFinishedTaskVineRun(config, absl::Seconds(1));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->engine_chunks.size(), 15u);
}

}  // namespace
}  // namespace roastcoffea
