#include "host/linux_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace host {
namespace {

using ::testing::HasSubstr;

TEST(ParseCgroupMemoryLimitTest, NumbersMaxAndHugeValues) {
  absl::StatusOr<std::optional<int64_t>> limit = ParseCgroupMemoryLimit("2147483648\n");
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(*limit, std::optional<int64_t>(2147483648));
  limit = ParseCgroupMemoryLimit("max\n");
  ASSERT_TRUE(limit.ok());
  EXPECT_FALSE(limit->has_value());
  // cgroup v1's "unlimited" is a page-aligned INT64_MAX: a number, capped later.
  limit = ParseCgroupMemoryLimit("9223372036854771712\n");
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(*limit, std::optional<int64_t>(9223372036854771712));
  limit = ParseCgroupMemoryLimit("18446744073709551615");
  ASSERT_TRUE(limit.ok());
  EXPECT_FALSE(limit->has_value());
  limit = ParseCgroupMemoryLimit("lots");
  ASSERT_FALSE(limit.ok());
  EXPECT_THAT(limit.status().message(), HasSubstr("lots"));
}

TEST(ParseCgroupPathTest, FindsV2AndV1Lines) {
  constexpr char kCgroups[] =
      "9:name=systemd:/\n"
      "4:cpu,memory:/process_api/abc\n"
      "0::/user.slice/session-1.scope\n";
  absl::StatusOr<std::string> v2 = ParseCgroupPath(kCgroups, "");
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(*v2, "/user.slice/session-1.scope");
  absl::StatusOr<std::string> v1 = ParseCgroupPath(kCgroups, "memory");
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(*v1, "/process_api/abc");
  absl::StatusOr<std::string> missing = ParseCgroupPath(kCgroups, "hugetlb");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("hugetlb"));
  EXPECT_FALSE(ParseCgroupPath("4:memory:/x\n", "").ok());
}

TEST(ParseCgroupV2CpuMaxTest, QuotaOverPeriodAndMax) {
  absl::StatusOr<std::optional<double>> cores = ParseCgroupV2CpuMax("50000 100000\n");
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_EQ(*cores, std::optional<double>(0.5));
  cores = ParseCgroupV2CpuMax("200000 100000");
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_EQ(*cores, std::optional<double>(2.0));
  cores = ParseCgroupV2CpuMax("max 100000\n");
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_FALSE(cores->has_value());
}

TEST(ParseCgroupV2CpuMaxTest, MalformedIsAnErrorNamingTheText) {
  for (const char* text :
       {"", "max", "50000", "lots 100000", "50000 0", "-5 100000", "50000 100000 7"}) {
    absl::StatusOr<std::optional<double>> cores = ParseCgroupV2CpuMax(text);
    EXPECT_FALSE(cores.ok()) << "'" << text << "'";
  }
  EXPECT_THAT(ParseCgroupV2CpuMax("lots 100000").status().message(), HasSubstr("lots"));
}

TEST(ParseCgroupV1CpuQuotaTest, QuotaOverPeriodAndNoQuota) {
  absl::StatusOr<std::optional<double>> cores = ParseCgroupV1CpuQuota("150000\n", "100000\n");
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_EQ(*cores, std::optional<double>(1.5));
  cores = ParseCgroupV1CpuQuota("-1\n", "100000\n");
  ASSERT_TRUE(cores.ok()) << cores.status();
  EXPECT_FALSE(cores->has_value());
  EXPECT_FALSE(ParseCgroupV1CpuQuota("x", "100000").ok());
  EXPECT_FALSE(ParseCgroupV1CpuQuota("0", "100000").ok());
  EXPECT_FALSE(ParseCgroupV1CpuQuota("50000", "0").ok());
  EXPECT_THAT(ParseCgroupV1CpuQuota("50000", "y").status().message(), HasSubstr("\"y\""));
}

TEST(ParseCpuModelTest, FirstModelName) {
  constexpr char kCpuinfo[] =
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "model name\t: AMD EPYC 7B13 64-Core Processor\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: something else\n";
  absl::StatusOr<std::string> model = ParseCpuModel(kCpuinfo);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(*model, "AMD EPYC 7B13 64-Core Processor");
  EXPECT_EQ(*ParseCpuModel("Processor\t: ARMv7 Processor rev 4 (v7l)\n"),
            "ARMv7 Processor rev 4 (v7l)");
  EXPECT_EQ(ParseCpuModel("processor\t: 0\n").status().code(), absl::StatusCode::kNotFound);
}

TEST(ParseStealTicksTest, EighthValueOfTheCpuLine) {
  constexpr char kStat[] =
      "cpu  71135 0 11473 33492 418 0 94 433 0 0\n"
      "cpu0 35501 0 5484 17274 59 0 9 225 0 0\n"
      "intr 123\n";
  absl::StatusOr<int64_t> steal = ParseStealTicks(kStat);
  ASSERT_TRUE(steal.ok()) << steal.status();
  EXPECT_EQ(*steal, 433);
  EXPECT_FALSE(ParseStealTicks("cpu0 1 2 3 4 5 6 7 8\n").ok()) << "no aggregate line";
  EXPECT_THAT(ParseStealTicks("cpu  1 2 3 4 5 6 7\n").status().message(), HasSubstr("7 values"));
  EXPECT_FALSE(ParseStealTicks("cpu  1 2 3 4 5 6 7 x\n").ok());
}

TEST(ParseLoadAverage1mTest, FirstValue) {
  absl::StatusOr<double> load = ParseLoadAverage1m("0.38 1.11 0.70 1/127 9265\n");
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_DOUBLE_EQ(*load, 0.38);
  EXPECT_FALSE(ParseLoadAverage1m("").ok());
  EXPECT_FALSE(ParseLoadAverage1m("high 1 1").ok());
  EXPECT_FALSE(ParseLoadAverage1m("-1 1 1").ok());
}

TEST(ReadSmallFileTest, MissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<std::string> text = ReadSmallFile("/nonexistent/roastcoffea/file");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("/nonexistent/roastcoffea/file"));
}

// /proc files say they are empty: the read itself is what is capped. A device is refused.
TEST(ReadSmallFileTest, ReadsProcAndRefusesDevices) {
  absl::StatusOr<std::string> text = ReadSmallFile("/proc/self/status");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("Pid:"));
  text = ReadSmallFile("/dev/zero");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(text.status().message(), HasSubstr("'/dev/zero' is a character device"));
}

// A fake /proc and /sys/fs/cgroup under the test's temporary directory.
class FakeTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    roots_.proc = root_ + "/proc";
    roots_.cgroup = root_ + "/cgroup";
  }
  void Write(const std::string& path, const std::string& text) {
    const std::filesystem::path full = root_ + "/" + path;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full) << text;
  }

  std::string root_;
  LinuxFileRoots roots_;
};

TEST_F(FakeTreeTest, CgroupV2OwnCgroupFirst) {
  Write("proc/self/cgroup", "0::/job/42\n");
  Write("cgroup/job/42/cpu.max", "150000 100000\n");
  Write("cgroup/job/42/memory.max", "1048576\n");
  Write("cgroup/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::optional<double>(1.5));
  EXPECT_EQ(CgroupMemoryLimitBytes(roots_), std::optional<int64_t>(1048576));
}

TEST_F(FakeTreeTest, CgroupV2NamespaceRootWithoutLimits) {
  Write("proc/self/cgroup", "0::/\n");
  Write("cgroup/cpu.max", "max 100000\n");
  Write("cgroup/memory.max", "max\n");
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimitBytes(roots_), std::nullopt);
}

TEST_F(FakeTreeTest, CgroupV1CpuAndMemoryControllers) {
  Write("proc/self/cgroup", "4:memory:/batch/7\n2:cpu,cpuacct:/batch/7\n0::/\n");
  Write("cgroup/cpu,cpuacct/batch/7/cpu.cfs_quota_us", "50000\n");
  Write("cgroup/cpu,cpuacct/batch/7/cpu.cfs_period_us", "100000\n");
  Write("cgroup/memory/batch/7/memory.limit_in_bytes", "2097152\n");
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::optional<double>(0.5));
  EXPECT_EQ(CgroupMemoryLimitBytes(roots_), std::optional<int64_t>(2097152));
}

TEST_F(FakeTreeTest, CgroupV1UnlimitedAndMalformed) {
  Write("proc/self/cgroup", "4:memory:/\n1:cpu:/\n");
  Write("cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  Write("cgroup/cpu/cpu.cfs_period_us", "100000\n");
  Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimitBytes(roots_), std::nullopt);
  Write("cgroup/cpu/cpu.cfs_quota_us", "garbage\n");
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::nullopt);
}

TEST_F(FakeTreeTest, NothingReadableIsUnknownNotACrash) {
  EXPECT_EQ(CgroupCpuQuotaCores(roots_), std::nullopt);
  EXPECT_EQ(CgroupMemoryLimitBytes(roots_), std::nullopt);
}

TEST(LiveReadersTest, ThisMachine) {
  EXPECT_GT(PhysicalMemoryBytes(), 1);
  const std::optional<int64_t> limit = CgroupMemoryLimitBytes();
  EXPECT_LT(limit.value_or(0), PhysicalMemoryBytes());
  const std::optional<double> quota = CgroupCpuQuotaCores();
  EXPECT_NE(quota, std::optional<double>(0.0));
}

}  // namespace
}  // namespace host
}  // namespace roastcoffea
