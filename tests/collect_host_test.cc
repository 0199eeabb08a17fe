// End to end: what the real `collect` binary says about its host and its build: --version, the
// host facts and builds in a saved measurement, and the "oversubscribed" warning of a run with
// more threads than CPUs.
#include <sched.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> SmallRun(int threads, const std::string& name) {
  return {absl::StrCat("--threads=", threads),
          "--events_per_file=6000",
          "--files_per_dataset=1",
          "--chunk_size=2000",
          "--interval=0.02",
          "--cache_dir=" + TempDir() + "/cache",
          "--output_dir=" + TempDir() + "/measurements",
          "--name=" + name,
          "--tables=ascii"};
}

// Restricts this process, and so the collect it starts, to one CPU while it lives.
class OneCpu {
 public:
  OneCpu() {
    ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0;
    int first = 0;
    while (ok_ && first < CPU_SETSIZE && !CPU_ISSET(first, &saved_)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ok_ = ok_ && first < CPU_SETSIZE && sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~OneCpu() {
    if (ok_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

TEST(CollectVersionTest, NamesTheVersionBuildModeAndCompiler) {
  const CollectOutcome outcome = RunCollect({"--version"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  // e.g. "roastcoffea collect 0.1.0 (opt, gcc 12.2.0)"
  // gmock's POSIX matcher rather than <regex>, which GCC 12 warns about at -O1 (ASan build).
  EXPECT_THAT(outcome.out, ::testing::MatchesRegex("roastcoffea collect [0-9]+\\.[0-9]+\\.[0-9]+ "
                                                   "\\((opt|fastbuild|dbg), (gcc|clang) "
                                                   "[0-9]+\\.[0-9]+\\.[0-9]+\\)\n"));
}

TEST(CollectHostTest, MeasurementHasHostFactsBuildsAndOversubscribedWarning) {
  CollectOutcome run;
  {
    const OneCpu one_cpu;
    ASSERT_TRUE(one_cpu.ok());
    run = RunCollect(SmallRun(2, "two-threads-one-cpu"));
  }
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("collect: warning: 2 worker threads on 1 usable CPU: threads "
                                 "wait for a CPU; CPU efficiency and speedup are limited to 1 "
                                 "core\n"));

  absl::StatusOr<v1::Measurement> loaded =
      LoadMeasurement(TempDir() + "/measurements/two-threads-one-cpu");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const v1::MeasurementMetadata& metadata = loaded->metadata();
  ASSERT_TRUE(metadata.has_host_facts());
  const v1::HostFacts& host = metadata.host_facts();
  EXPECT_GE(host.online_cpus(), 1);
  EXPECT_EQ(host.affinity_cpus(), 1);
  EXPECT_LE(host.usable_cpus(), 1);
  EXPECT_GT(host.memory_total_bytes(), 0);
  EXPECT_TRUE(host.has_load_average_1m_start());
  EXPECT_TRUE(host.has_load_average_1m_end());
  EXPECT_FALSE(host.kernel().empty());

  // The sample analysis is compiled into collect: one build for both.
  ASSERT_TRUE(metadata.has_tool_build());
  ASSERT_TRUE(metadata.has_analysis_build());
  EXPECT_EQ(metadata.tool_build().SerializeAsString(),
            metadata.analysis_build().SerializeAsString());
  EXPECT_FALSE(metadata.tool_build().compiler().empty());
  EXPECT_FALSE(metadata.tool_build().build_mode().empty());

  bool oversubscribed = false;
  bool unoptimized = false;
  for (const v1::Warning& warning : loaded->warnings()) {
    oversubscribed |= warning.code() == "oversubscribed";
    unoptimized |= warning.code() == "unoptimized_build";
    EXPECT_THAT(run.err, HasSubstr("collect: warning: " + warning.message() + "\n"));
  }
  EXPECT_TRUE(oversubscribed);
  EXPECT_EQ(unoptimized, !metadata.tool_build().optimized());
}

TEST(CollectHostTest, NoOversubscribedWarningWithOneThreadPerCpu) {
  const CollectOutcome run = RunCollect(SmallRun(1, "one-thread"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(TempDir() + "/measurements/one-thread");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const v1::Warning& warning : loaded->warnings()) {
    EXPECT_NE(warning.code(), "oversubscribed") << warning.message();
  }
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("worker threads on")));
}

}  // namespace
}  // namespace roastcoffea
