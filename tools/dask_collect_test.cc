#include "tools/dask_collect.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

DaskConfig Valid() {
  DaskConfig config;
  config.scheduler = "tcp://127.0.0.1:8786";
  return config;
}

TEST(DaskCollectTest, BuildsTheBackendFromAValidConfig) {
  absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> backend = MakeDaskBackend(Valid());
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "dask");
}

TEST(DaskCollectTest, EveryBadFlagIsNamed) {
  DaskConfig config;
  config.read_timeout = -1;
  config.max_message_mib = 0;
  absl::Status s = MakeDaskBackend(config).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("--scheduler is required"), HasSubstr("--dask_read_timeout"),
                    HasSubstr("--dask_max_message_mib")));
  config = Valid();
  config.scheduler = "ws://127.0.0.1:8786";
  EXPECT_THAT(MakeDaskBackend(config).status().message(),
              AllOf(HasSubstr("--scheduler"), HasSubstr("only tcp://")));
}

TEST(DaskCollectTest, ProfileFlagsAreChecked) {
  DaskConfig config = Valid();
  config.profile_prefixes = {"process", "load"};
  EXPECT_TRUE(MakeDaskBackend(config).ok());
  config.profile_prefixes = {"process", ""};
  config.profile_interval = 0;
  config.profile_timeout = -1;
  absl::Status s = MakeDaskBackend(config).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), AllOf(HasSubstr("--dask_profile_prefixes has an empty prefix"),
                                 HasSubstr("--dask_profile_interval must be > 0"),
                                 HasSubstr("--dask_profile_timeout must be > 0 seconds, got -1")));
}

TEST(DaskCollectTest, EndTimeoutIsChecked) {
  DaskConfig config = Valid();
  config.end_timeout = 3;
  EXPECT_TRUE(MakeDaskBackend(config).ok());
  config.end_timeout = -1;
  EXPECT_THAT(MakeDaskBackend(config).status().message(),
              HasSubstr("--dask_end_timeout must be >= 0 seconds, got -1"));
  config.end_timeout = 0;
  EXPECT_TRUE(MakeDaskBackend(config).ok());
}

}  // namespace
}  // namespace roastcoffea
