#include "host/host_facts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace host {
namespace {

TEST(TakeHostSnapshotTest, ThisMachine) {
  const HostSnapshot start = TakeHostSnapshot();
  ASSERT_TRUE(start.online_cpus.has_value());
  EXPECT_GE(*start.online_cpus, 1);
  ASSERT_TRUE(start.affinity_cpus.has_value());
  EXPECT_GE(*start.affinity_cpus, 1);
  EXPECT_TRUE(start.memory_total_bytes.has_value());
  EXPECT_TRUE(start.load_average_1m.has_value());
  EXPECT_TRUE(start.steal_ticks.has_value());
  EXPECT_FALSE(start.kernel.empty());

  const v1::HostFacts facts = HostFactsOverRun(start, TakeHostSnapshot(), 0.5);
  EXPECT_EQ(facts.online_cpus(), *start.online_cpus);
  EXPECT_GT(facts.usable_cpus(), 0);
  EXPECT_LE(facts.usable_cpus(), facts.online_cpus());
  EXPECT_LE(facts.usable_cpus(), facts.affinity_cpus());
  EXPECT_GT(facts.memory_total_bytes(), 0);
  EXPECT_TRUE(facts.has_load_average_1m_start());
  EXPECT_TRUE(facts.has_load_average_1m_end());
  ASSERT_TRUE(facts.has_steal_seconds());
  EXPECT_GE(facts.steal_seconds(), 0);
  ASSERT_TRUE(facts.has_steal_fraction());
  EXPECT_GE(facts.steal_fraction(), 0);
  EXPECT_EQ(facts.kernel(), start.kernel);
}

class FakeProcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One tree per test: tests of a fixture share TEST_TMPDIR.
    const std::string root = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options_.proc_root = root + "/proc";
    options_.cgroup_root = root + "/cgroup";
    std::filesystem::create_directories(options_.proc_root);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(options_.proc_root + "/" + name) << text;
  }

  HostSnapshotOptions options_;
};

TEST_F(FakeProcTest, StealOverTheRunFromTwoStatTexts) {
  Write("stat", "cpu  100 0 50 1000 10 0 5 400 0 0\ncpu0 1 2 3 4 5 6 7 8\n");
  Write("loadavg", "0.50 0.40 0.30 1/100 1234\n");
  Write("cpuinfo", "model name\t: Test CPU\n");
  HostSnapshot start = TakeHostSnapshot(options_);
  Write("stat", "cpu  200 0 60 1100 10 0 5 700 0 0\n");
  Write("loadavg", "3.25 0.40 0.30 1/100 1234\n");
  HostSnapshot end = TakeHostSnapshot(options_);
  ASSERT_EQ(start.steal_ticks, std::optional<int64_t>(400));
  ASSERT_EQ(end.steal_ticks, std::optional<int64_t>(700));

  // Fixed CPUs and clock, so that the arithmetic is exact: 300 ticks at 100 Hz = 3 s of steal
  // over 2 CPUs x 10 s.
  start.online_cpus = 2;
  start.ticks_per_second = 100;
  const v1::HostFacts facts = HostFactsOverRun(start, end, 10.0);
  EXPECT_EQ(facts.cpu_model(), "Test CPU");
  EXPECT_DOUBLE_EQ(facts.load_average_1m_start(), 0.5);
  EXPECT_DOUBLE_EQ(facts.load_average_1m_end(), 3.25);
  EXPECT_DOUBLE_EQ(facts.steal_seconds(), 3.0);
  EXPECT_DOUBLE_EQ(facts.steal_fraction(), 0.15);
}

TEST_F(FakeProcTest, UnreadableFilesLeaveFieldsAbsent) {
  Write("stat", "garbage\n");
  const HostSnapshot start = TakeHostSnapshot(options_);  // no loadavg, no cpuinfo
  EXPECT_FALSE(start.steal_ticks.has_value());
  EXPECT_FALSE(start.load_average_1m.has_value());
  EXPECT_EQ(start.cpu_model, "");
  EXPECT_FALSE(start.cgroup_cpu_quota_cores.has_value());
  EXPECT_FALSE(start.cgroup_memory_limit_bytes.has_value());
  const v1::HostFacts facts = HostFactsOverRun(start, start, 1.0);
  EXPECT_FALSE(facts.has_steal_seconds());
  EXPECT_FALSE(facts.has_steal_fraction());
  EXPECT_FALSE(facts.has_load_average_1m_start());
  EXPECT_FALSE(facts.has_load_average_1m_end());
  EXPECT_FALSE(facts.has_cgroup_cpu_quota_cores());
  EXPECT_FALSE(facts.has_cgroup_memory_limit_bytes());
}

TEST(HostFactsOverRunTest, UsableCpusAreAffinityCappedByQuota) {
  HostSnapshot snapshot;
  snapshot.online_cpus = 8;
  snapshot.affinity_cpus = 4;
  EXPECT_DOUBLE_EQ(HostFactsOverRun(snapshot, snapshot, 1).usable_cpus(), 4);
  snapshot.cgroup_cpu_quota_cores = 1.5;
  v1::HostFacts facts = HostFactsOverRun(snapshot, snapshot, 1);
  EXPECT_DOUBLE_EQ(facts.usable_cpus(), 1.5);
  EXPECT_DOUBLE_EQ(facts.cgroup_cpu_quota_cores(), 1.5);
  snapshot.cgroup_cpu_quota_cores = 16;
  EXPECT_DOUBLE_EQ(HostFactsOverRun(snapshot, snapshot, 1).usable_cpus(), 4);
  snapshot.affinity_cpus.reset();
  EXPECT_DOUBLE_EQ(HostFactsOverRun(snapshot, snapshot, 1).usable_cpus(), 8);
}

TEST(UsableCpusTest, UnknownWhenNothingWasRead) {
  HostSnapshot snapshot;
  EXPECT_FALSE(UsableCpus(snapshot).has_value());
  snapshot.cgroup_cpu_quota_cores = 0.5;
  EXPECT_DOUBLE_EQ(*UsableCpus(snapshot), 0.5);
}

TEST(HostFactsOverRunTest, StealCounterGoingBackwardsOrNoTimeIsNotAFraction) {
  HostSnapshot start;
  start.online_cpus = 2;
  start.steal_ticks = 500;
  HostSnapshot end = start;
  end.steal_ticks = 400;
  EXPECT_FALSE(HostFactsOverRun(start, end, 1).has_steal_seconds());
  end.steal_ticks = 600;
  const v1::HostFacts facts = HostFactsOverRun(start, end, 0);
  EXPECT_DOUBLE_EQ(facts.steal_seconds(), 1.0);
  EXPECT_FALSE(facts.has_steal_fraction());
}

}  // namespace
}  // namespace host
}  // namespace roastcoffea

namespace roastcoffea::host {
namespace {

TEST(UsableWholeCpusTest, UsableCpusRoundedDownAndAtLeastOne) {
  const int cpus = UsableWholeCpus();
  EXPECT_GE(cpus, 1);
  if (const std::optional<double> usable = UsableCpus(TakeHostSnapshot())) {
    EXPECT_EQ(cpus, std::max(1, static_cast<int>(std::floor(*usable))));
  }
  EXPECT_EQ(UsableWholeCpus(), cpus);  // one snapshot per process
}

}  // namespace
}  // namespace roastcoffea::host
