#include "tools/run_config.h"

#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/exit_code.h"

namespace roastcoffea {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The flags' defaults.
RunConfig ValidConfig() {
  RunConfig config;
  config.backend = "threadpool";
  config.output_dir = "measurements";
  config.tables = "auto";
  config.interval = 0.25;
  config.grace_period = 2;
  config.checkpoint_interval = 30;
  config.events_per_file = 1000;
  config.files_per_dataset = 2;
  config.chunk_size = 25000;
  return config;
}

TEST(ValidateRunConfigTest, AcceptsTheDefaultsAndTheLimits) {
  EXPECT_TRUE(ValidateRunConfig(ValidConfig()).ok());
  RunConfig config = ValidConfig();
  config.interval = 3600;
  config.grace_period = 0;
  config.checkpoint_interval = 0;
  config.name = "baseline";
  config.label = "v1.2";
  config.trace = "run.pftrace";
  EXPECT_TRUE(ValidateRunConfig(config).ok());
  config.interval = 0.001;
  EXPECT_TRUE(ValidateRunConfig(config).ok());
}

// --interval=1e-12 passed the check, then the session refused its zero duration ("interval must
// be positive, got 0", exit 1) after the dataset was prepared: a usage error up front instead.
TEST(ValidateRunConfigTest, AnIntervalTooShortToSampleIsAUsageError) {
  RunConfig config = ValidConfig();
  for (double interval : {1e-12, 1e-4}) {
    config.interval = interval;
    const absl::Status status = ValidateRunConfig(config);
    EXPECT_TRUE(IsUsageError(status)) << interval;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--interval must be")) << interval;
  }
}

TEST(ValidateRunConfigTest, ChecksTheThreadPoolOptionsOfTheConfigNotTheFlags) {
  RunConfig config = ValidConfig();
  config.threadpool.threads = 0;
  config.threadpool.profile_hz = 0;
  const absl::Status status = ValidateRunConfig(config);
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("--threads must be at least 1, got 0"),
                    HasSubstr("--profile_hz must be in [1, 1000], got 0")));
}

TEST(ValidateRunConfigTest, NamesEveryBadFlagAtOnceAsOneUsageError) {
  RunConfig config = ValidConfig();
  config.interval = 0;
  config.grace_period = -1;
  config.checkpoint_interval = 3601;
  config.chunk_size = 0;
  config.events_per_file = 0;
  config.files_per_dataset = 0;
  config.label = "two\nlines";
  config.name = "a/b";
  config.trace = "run.txt";
  const absl::Status status = ValidateRunConfig(config);
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("--interval must be a number of seconds in [0.001, 3600], got 0"),
                    HasSubstr("--grace_period must be a number of seconds in [0, 3600], got -1"),
                    HasSubstr("--checkpoint_interval must be a number of seconds in [0, 3600], "
                              "got 3601"),
                    HasSubstr("--chunk_size must be at least 1, got 0"),
                    HasSubstr("--events_per_file must be at least 1, got 0"),
                    HasSubstr("--files_per_dataset must be at least 1, got 0"),
                    HasSubstr("--label must be one line"), HasSubstr("--name: "),
                    HasSubstr("--trace must name a file ending in .json")));
}

TEST(ValidateRunConfigTest, RejectsNotANumber) {
  RunConfig config = ValidConfig();
  config.interval = std::numeric_limits<double>::quiet_NaN();
  const absl::Status status = ValidateRunConfig(config);
  EXPECT_THAT(std::string(status.message()), HasSubstr("--interval"));
  EXPECT_THAT(std::string(status.message()), Not(HasSubstr("--grace_period")));
}

}  // namespace
}  // namespace roastcoffea
