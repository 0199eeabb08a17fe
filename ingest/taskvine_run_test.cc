#include "ingest/taskvine_run.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

constexpr char kLogs[] =
    "backends/taskvine/testdata/synthetic-1-transactions.txt,"
    "backends/taskvine/testdata/synthetic-1-performance.txt";
// MANAGER START and END of synthetic-1-transactions.txt.
constexpr int64_t kStartUs = 1763035200000000;
constexpr int64_t kEndUs = 1763035260980194;

TEST(ReadFinishedTaskVineRunTest, TheRunAsItsLogsRecordIt) {
  TaskVineRunOptions options;
  options.logs = kLogs;
  absl::StatusOr<RawRun> run = ReadFinishedTaskVineRun(options);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->backend, "taskvine");
  // Framed by its own record, with no host facts: it ran elsewhere, before it was read.
  EXPECT_EQ(absl::ToUnixMicros(run->window.start), kStartUs);
  EXPECT_EQ(absl::ToUnixMicros(run->window.end), kEndUs);
  EXPECT_DOUBLE_EQ(run->window.elapsed_seconds, (kEndUs - kStartUs) * 1e-6);
  EXPECT_FALSE(run->window.host_facts.has_value());
  ASSERT_TRUE(run->tracking.has_value());
  EXPECT_EQ(run->tracking->workers_size(), 3);
  ASSERT_EQ(run->spans.size(), 1u);
  EXPECT_EQ(run->spans[0].name(), kCollectWindowSpanName);
  EXPECT_GT(run->spans[0].metrics_size(), 0);
  // The engine's chunk records wait for the join with the instrumentation's (none here).
  EXPECT_FALSE(run->engine_chunks.empty());
  EXPECT_TRUE(run->chunks.empty());
}

TEST(ReadFinishedTaskVineRunTest, AMissingLogIsNamed) {
  TaskVineRunOptions options;
  options.logs = "/nonexistent/transactions.log";
  absl::StatusOr<RawRun> run = ReadFinishedTaskVineRun(options);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("/nonexistent/transactions.log"));
}

}  // namespace
}  // namespace roastcoffea
