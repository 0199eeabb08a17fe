#include "tools/dask_collect.h"

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, scheduler);
ABSL_DECLARE_FLAG(double, dask_read_timeout);
ABSL_DECLARE_FLAG(int, dask_max_message_mib);
ABSL_DECLARE_FLAG(std::vector<std::string>, dask_profile_prefixes);
ABSL_DECLARE_FLAG(double, dask_profile_interval);
ABSL_DECLARE_FLAG(double, dask_profile_timeout);
ABSL_DECLARE_FLAG(double, dask_end_timeout);

namespace roastcoffea {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(DaskCollectTest, BuildsTheBackendFromValidFlags) {
  absl::SetFlag(&FLAGS_scheduler, "tcp://127.0.0.1:8786");
  absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> backend = MakeDaskBackendFromFlags();
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "dask");
}

TEST(DaskCollectTest, EveryBadFlagIsNamed) {
  absl::SetFlag(&FLAGS_scheduler, "");
  absl::SetFlag(&FLAGS_dask_read_timeout, -1);
  absl::SetFlag(&FLAGS_dask_max_message_mib, 0);
  absl::Status s = MakeDaskBackendFromFlags().status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("--scheduler is required"), HasSubstr("--dask_read_timeout"),
                    HasSubstr("--dask_max_message_mib")));
  absl::SetFlag(&FLAGS_dask_read_timeout, 10);
  absl::SetFlag(&FLAGS_dask_max_message_mib, 256);
  absl::SetFlag(&FLAGS_scheduler, "ws://127.0.0.1:8786");
  EXPECT_THAT(MakeDaskBackendFromFlags().status().message(),
              AllOf(HasSubstr("--scheduler"), HasSubstr("only tcp://")));
}

TEST(DaskCollectTest, ProfileFlagsAreChecked) {
  absl::SetFlag(&FLAGS_scheduler, "tcp://127.0.0.1:8786");
  absl::SetFlag(&FLAGS_dask_profile_prefixes, std::vector<std::string>{"process", "load"});
  EXPECT_TRUE(MakeDaskBackendFromFlags().ok());
  absl::SetFlag(&FLAGS_dask_profile_prefixes, std::vector<std::string>{"process", ""});
  absl::SetFlag(&FLAGS_dask_profile_interval, 0);
  absl::SetFlag(&FLAGS_dask_profile_timeout, -1);
  absl::Status s = MakeDaskBackendFromFlags().status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), AllOf(HasSubstr("--dask_profile_prefixes has an empty prefix"),
                                 HasSubstr("--dask_profile_interval must be > 0"),
                                 HasSubstr("--dask_profile_timeout must be > 0 seconds, got -1")));
  absl::SetFlag(&FLAGS_dask_profile_timeout, 30);
  absl::SetFlag(&FLAGS_dask_profile_prefixes, std::vector<std::string>{});
  absl::SetFlag(&FLAGS_dask_profile_interval, 0.01);
}

TEST(DaskCollectTest, EndTimeoutIsChecked) {
  absl::SetFlag(&FLAGS_scheduler, "tcp://127.0.0.1:8786");
  absl::SetFlag(&FLAGS_dask_end_timeout, 3);
  EXPECT_TRUE(MakeDaskBackendFromFlags().ok());
  absl::SetFlag(&FLAGS_dask_end_timeout, -1);
  EXPECT_THAT(MakeDaskBackendFromFlags().status().message(),
              HasSubstr("--dask_end_timeout must be >= 0 seconds, got -1"));
  absl::SetFlag(&FLAGS_dask_end_timeout, 0);
  EXPECT_TRUE(MakeDaskBackendFromFlags().ok());
}

}  // namespace
}  // namespace roastcoffea
