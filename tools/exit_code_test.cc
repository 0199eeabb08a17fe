#include "tools/exit_code.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExitCodeTest, ValuesAreTheDocumentedOnes) {
  EXPECT_EQ(ToInt(ExitCode::kOk), 0);
  EXPECT_EQ(ToInt(ExitCode::kFailure), 1);
  EXPECT_EQ(ToInt(ExitCode::kUsage), 2);
  EXPECT_EQ(ToInt(ExitCode::kPartial), 3);
  EXPECT_EQ(ToInt(ExitCode::kCommandFailed), 4);
  EXPECT_EQ(ToInt(ExitCode::kRegression), 5);
  EXPECT_EQ(ToInt(ExitCode::kInterrupted), 130);
}

TEST(ExitCodeTest, OnlyUsageErrorsExitTwo) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), ExitCode::kOk);
  EXPECT_EQ(ExitCodeFor(UsageError("--top must be at least 1")), ExitCode::kUsage);
  // A data parser's InvalidArgument (a corrupt metrics.json) is not a usage error.
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("metrics.json: not JSON")), ExitCode::kFailure);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("no such directory")), ExitCode::kFailure);
  const absl::Status wrapped = AsUsageError(absl::InvalidArgumentError("--format: bad"));
  EXPECT_TRUE(IsUsageError(wrapped));
  EXPECT_EQ(wrapped.message(), "--format: bad");
  EXPECT_TRUE(AsUsageError(absl::OkStatus()).ok());
}

TEST(ExitCodeTest, TableListsEveryCode) {
  const std::string table = ExitCodeTable();
  for (const char* line : {"  0    done", "  1    cannot run", "  2    bad flags", "  3    partial",
                           "  4    the measured COMMAND failed",
                           "  5    compare --fail_on_regression", "  130  interrupted"}) {
    EXPECT_THAT(table, HasSubstr(line));
  }
}

TEST(ExitCodeTest, AModesTableListsOnlyItsCodes) {
  const std::string table = ExitCodeTable({ExitCode::kOk, ExitCode::kUsage, ExitCode::kRegression});
  EXPECT_THAT(table, HasSubstr("  0    done"));
  EXPECT_THAT(table, HasSubstr("  5    compare --fail_on_regression"));
  EXPECT_THAT(table, Not(HasSubstr("COMMAND failed")));
  EXPECT_THAT(table, Not(HasSubstr("130")));
}

}  // namespace
}  // namespace roastcoffea
