#include "host/host_warnings.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace host {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> Codes(const std::vector<v1::Warning>& warnings) {
  std::vector<std::string> codes;
  for (const v1::Warning& warning : warnings) codes.push_back(warning.code());
  return codes;
}

// A quiet 2-CPU host.
v1::HostFacts QuietHost() {
  v1::HostFacts facts;
  facts.set_online_cpus(2);
  facts.set_affinity_cpus(2);
  facts.set_usable_cpus(2);
  facts.set_load_average_1m_start(0.5);
  facts.set_load_average_1m_end(1.5);
  facts.set_steal_seconds(0.01);
  facts.set_steal_fraction(0.001);
  return facts;
}

v1::BuildInfo Build(bool optimized) {
  v1::BuildInfo build;
  build.set_compiler("gcc 12.2.0");
  build.set_build_mode(optimized ? "opt" : "fastbuild");
  build.set_optimized(optimized);
  build.set_assertions(!optimized);
  return build;
}

TEST(HostWarningsTest, QuietHostAndOptimizedBuildWarnNothing) {
  HostWarningOptions options;
  options.in_process_worker_threads = 2;
  options.measured_build = Build(true);
  EXPECT_THAT(HostWarnings(QuietHost(), options), IsEmpty());
}

TEST(HostWarningsTest, UnknownFactsWarnNothing) {
  HostWarningOptions options;
  options.in_process_worker_threads = 64;
  EXPECT_THAT(HostWarnings(v1::HostFacts(), options), IsEmpty());
}

TEST(HostWarningsTest, OversubscribedWhenThreadsExceedUsableCpus) {
  HostWarningOptions options;
  options.in_process_worker_threads = 4;
  const std::vector<v1::Warning> warnings = HostWarnings(QuietHost(), options);
  ASSERT_THAT(Codes(warnings), ElementsAre("oversubscribed"));
  EXPECT_EQ(warnings[0].message(),
            "4 worker threads on 2 usable CPUs: threads wait for a CPU; CPU efficiency and "
            "speedup are limited to 2 cores");

  v1::HostFacts quota = QuietHost();
  quota.set_usable_cpus(1.5);
  options.in_process_worker_threads = 2;
  EXPECT_THAT(HostWarnings(quota, options)[0].message(), HasSubstr("on 1.5 usable CPUs"));
  // Work that ran elsewhere has no in-process threads to oversubscribe.
  options.in_process_worker_threads.reset();
  EXPECT_THAT(HostWarnings(quota, options), IsEmpty());
}

TEST(HostWarningsTest, HostOverloadedByLoadAtStartOrEnd) {
  HostWarningOptions options;
  v1::HostFacts facts = QuietHost();
  facts.set_load_average_1m_start(2.0);  // equal to the CPUs: not more
  EXPECT_THAT(HostWarnings(facts, options), IsEmpty());
  facts.set_load_average_1m_start(3.5);
  std::vector<v1::Warning> warnings = HostWarnings(facts, options);
  ASSERT_THAT(Codes(warnings), ElementsAre("host_overloaded"));
  EXPECT_EQ(warnings[0].message(),
            "1-minute load average 3.50 at the start on 2 online CPUs: other work competed "
            "for the CPUs; timings are slower and noisier");

  facts = QuietHost();
  facts.set_load_average_1m_end(4.2);
  warnings = HostWarnings(facts, options);
  ASSERT_THAT(Codes(warnings), ElementsAre("host_overloaded"));
  EXPECT_THAT(warnings[0].message(), HasSubstr("4.20 at the end on 2 online CPUs"));
}

TEST(HostWarningsTest, OurOwnWorkersDoNotOverloadTheHost) {
  HostWarningOptions options;
  options.in_process_worker_threads = 2;
  v1::HostFacts facts = QuietHost();
  facts.set_load_average_1m_end(3.9);  // 1.9 without our 2 workers
  EXPECT_THAT(HostWarnings(facts, options), IsEmpty());
  facts.set_load_average_1m_end(4.5);
  const std::vector<v1::Warning> warnings = HostWarnings(facts, options);
  ASSERT_THAT(Codes(warnings), ElementsAre("host_overloaded"));
  EXPECT_THAT(warnings[0].message(), HasSubstr("4.50 at the end (2 of them our worker threads)"));
}

TEST(HostWarningsTest, StealTimeAboveFivePercent) {
  HostWarningOptions options;
  v1::HostFacts facts = QuietHost();
  facts.set_steal_seconds(0.9);
  facts.set_steal_fraction(0.045);
  EXPECT_THAT(HostWarnings(facts, options), IsEmpty());
  facts.set_steal_seconds(1.46);
  facts.set_steal_fraction(0.073);
  const std::vector<v1::Warning> warnings = HostWarnings(facts, options);
  ASSERT_THAT(Codes(warnings), ElementsAre("steal_time"));
  EXPECT_EQ(warnings[0].message(),
            "hypervisor steal took 7.3 % of the CPU time (1.46 s over 2 CPUs): the virtual "
            "machine waited for its host; timings are slower and noisier");
}

TEST(HostWarningsTest, UnoptimizedMeasuredBuild) {
  HostWarningOptions options;
  options.measured_build = Build(false);
  const std::vector<v1::Warning> warnings = HostWarnings(QuietHost(), options);
  ASSERT_THAT(Codes(warnings), ElementsAre("unoptimized_build"));
  EXPECT_EQ(warnings[0].message(),
            "the measured code was built without optimisation (fastbuild, gcc 12.2.0): "
            "timings are not representative; build with -c opt");
  // Without a measured build (an external analysis), nothing is said about it.
  options.measured_build.reset();
  EXPECT_THAT(HostWarnings(QuietHost(), options), IsEmpty());
}

TEST(HostWarningsTest, EveryRuleAtOnceInOrderEachOneLine) {
  HostWarningOptions options;
  options.in_process_worker_threads = 8;
  options.measured_build = Build(false);
  v1::HostFacts facts = QuietHost();
  facts.set_load_average_1m_start(5);
  facts.set_steal_fraction(0.2);
  const std::vector<v1::Warning> warnings = HostWarnings(facts, options);
  EXPECT_THAT(Codes(warnings),
              ElementsAre("oversubscribed", "host_overloaded", "steal_time", "unoptimized_build"));
  for (const v1::Warning& warning : warnings) {
    EXPECT_THAT(warning.message(), Not(HasSubstr("\n")));
  }
}

}  // namespace
}  // namespace host
}  // namespace roastcoffea
