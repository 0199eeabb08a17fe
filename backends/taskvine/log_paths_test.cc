#include "backends/taskvine/log_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using ::testing::HasSubstr;

std::string Root() {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/paths";
}

void Touch(const std::string& path, const char* text) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  fputs(text, f);
  fclose(f);
}

class LogPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = Root();
    mkdir(root_.c_str(), 0755);
    mkdir((root_ + "/vine-run-info").c_str(), 0755);
    mkdir((root_ + "/vine-run-info/2026-11-13T120000").c_str(), 0755);
    logs_ = root_ + "/vine-run-info/2026-11-13T120000/vine-logs";
    mkdir(logs_.c_str(), 0755);
    Touch(logs_ + "/transactions", "# time manager_pid MANAGER\n");
    Touch(logs_ + "/performance", "# timestamp workers_connected\n");
    unlink((root_ + "/vine-run-info/most-recent").c_str());
    ASSERT_EQ(symlink((root_ + "/vine-run-info/2026-11-13T120000").c_str(),
                      (root_ + "/vine-run-info/most-recent").c_str()),
              0);
    mkdir((root_ + "/wq").c_str(), 0755);
    Touch(root_ + "/wq/my.txn.log", "1 2 MANAGER START\n");
    Touch(root_ + "/wq/my.stats.log", "# timestamp workers_connected\n");
  }
  std::string root_, logs_;
};

TEST_F(LogPathsTest, EveryWayToNameATaskVineRun) {
  for (const std::string& spec :
       {root_ + "/vine-run-info/most-recent", root_ + "/vine-run-info/most-recent/",
        root_ + "/vine-run-info", root_ + "/vine-run-info/2026-11-13T120000", logs_,
        logs_ + "/transactions", logs_ + "/performance," + logs_ + "/transactions"}) {
    absl::StatusOr<LogPaths> paths = ResolveLogPaths(spec);
    ASSERT_TRUE(paths.ok()) << spec << ": " << paths.status();
    EXPECT_THAT(paths->transactions, HasSubstr("vine-logs/transactions")) << spec;
    EXPECT_THAT(paths->performance, HasSubstr("vine-logs/performance")) << spec;
  }
}

TEST_F(LogPathsTest, WorkQueueFilesAreRecognisedByContent) {
  absl::StatusOr<LogPaths> paths =
      ResolveLogPaths(root_ + "/wq/my.stats.log," + root_ + "/wq/my.txn.log");
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_EQ(paths->transactions, root_ + "/wq/my.txn.log");
  EXPECT_EQ(paths->performance, root_ + "/wq/my.stats.log");
  paths = ResolveLogPaths(root_ + "/wq/my.txn.log");
  ASSERT_TRUE(paths.ok());
  EXPECT_EQ(paths->performance, "");
}

TEST_F(LogPathsTest, Errors) {
  EXPECT_EQ(ResolveLogPaths("").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<LogPaths> missing = ResolveLogPaths(root_ + "/nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nope"));
  EXPECT_EQ(ResolveLogPaths(root_ + "/wq").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ResolveLogPaths(logs_ + "/performance").status().message()),
              HasSubstr("is a performance log"));
  EXPECT_EQ(ResolveLogPaths(logs_ + "/transactions," + root_ + "/wq/my.txn.log").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveLogPaths("a,b,c").status().code(), absl::StatusCode::kInvalidArgument);
}

// Issue #16: /dev/zero or a FIFO was reported as "does not exist". Each is named by its type,
// and the FIFO is not opened (the test would block if it were).
TEST_F(LogPathsTest, FifosAndDevicesAreNamedByTheirType) {
  absl::StatusOr<LogPaths> paths = ResolveLogPaths("/dev/zero");
  EXPECT_EQ(paths.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(paths.status().message(),
            "/dev/zero is a character device, not a regular file or a directory of logs");
  const std::string fifo = root_ + "/fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  paths = ResolveLogPaths(fifo);
  EXPECT_EQ(paths.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(paths.status().message(), HasSubstr(fifo + " is a FIFO, not a regular file"));
  paths = ResolveLogPaths(logs_ + "/transactions," + fifo);
  EXPECT_EQ(paths.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(paths.status().message(), "log file " + fifo + " is a FIFO, not a regular file");
  paths = ResolveLogPaths(root_ + "/missing");
  EXPECT_EQ(paths.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(paths.status().message(), HasSubstr("missing does not exist"));
}

TEST(TransactionsLogHasEnded, OnlyAWholeLogEndsWithManagerEnd) {
  const std::string dir = Root() + "-has-ended";
  mkdir(dir.c_str(), 0755);
  const std::string log = dir + "/transactions";
  const std::string head =
      "# time manager_pid MANAGER manager_pid START|END time_from_origin\n"
      "1763035200000000 48213 MANAGER 48213 START 0\n"
      "1763035200100000 48213 WORKER worker-1 CONNECTION 127.0.0.1:9000\n";
  Touch(log, head.c_str());
  EXPECT_FALSE(TransactionsLogHasEnded(log));  // still going
  Touch(log, (head + "1763035260980194 48213 MANAGER 48213 END 60983299\n\n").c_str());
  EXPECT_TRUE(TransactionsLogHasEnded(log));
  EXPECT_FALSE(TransactionsLogHasEnded(dir + "/missing"));
  const std::string fifo = dir + "/fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(TransactionsLogHasEnded(fifo));  // never opened, so never blocks
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
