// End to end: deadlines and chunk times do not follow a step of the wall clock (the second
// reliability study's N8). A shim (tests/clock_step_shim.c, LD_PRELOAD) steps CLOCK_REALTIME
// by -60 s or +3600 s shortly after collect starts, as NTP or `date -s` would.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

std::string Runfile(const std::string& path) {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/" + path;
}

std::vector<std::string> SteppedEnvironment(double step_seconds, double after_seconds) {
  return {absl::StrCat("TEST_TMPDIR=", TempDir()),
          "PATH=/usr/bin:/bin",
          absl::StrCat("HOME=", TempDir()),
          absl::StrCat("LD_PRELOAD=", Runfile("tests/libclock_step_shim.so")),
          absl::StrCat("CLOCK_STEP_SECONDS=", step_seconds),
          absl::StrCat("CLOCK_STEP_AFTER_SECONDS=", after_seconds)};
}

// --duration=2 of a TaskVine log followed: 2 s of monotonic time whichever way the wall clock
// steps (a -60 s step made it last 66 s; +3600 s ended it after 2.6 s of a 5 s duration).
TEST(CollectClockStepTest, DurationIsMonotonic) {
  // A run still going (no MANAGER END), as --follow expects.
  const std::string source = Runfile("backends/taskvine/testdata/");
  const std::string logs = TempDir() + "/vine/";
  ASSERT_EQ(system(absl::StrCat("mkdir -p ", logs, " && grep -v 'MANAGER [0-9]* END' ", source,
                                "synthetic-1-transactions.txt > ", logs,
                                "synthetic-1-transactions.txt && cp ", source,
                                "synthetic-1-performance.txt ", logs)
                       .c_str()),
            0);
  for (const double step : {-60.0, 3600.0}) {
    const std::string name = absl::StrCat("follow", step > 0 ? "-forward" : "-back");
    const std::string log = absl::StrCat(TempDir(), "/", name, ".log");
    ChildProcess collect(
        {Runfile("tools/collect"), "--backend=taskvine", "--follow", "--duration=2",
         absl::StrCat("--taskvine_logs=", logs, "synthetic-1-transactions.txt,", logs,
                      "synthetic-1-performance.txt"),
         "--output_dir=" + TempDir() + "/clock", "--name=" + name, "--checkpoint_interval=0"},
        SteppedEnvironment(step, 0.5), log);
    ASSERT_TRUE(collect.started());
    const absl::Time started = absl::Now();  // this process's clock is not stepped
    EXPECT_EQ(collect.Wait(absl::Seconds(40)), 0) << ReadFile(log);
    const absl::Duration took = absl::Now() - started;
    EXPECT_GE(took, absl::Seconds(1.9)) << "step " << step << ": cut short";
    EXPECT_LT(took, absl::Seconds(15)) << "step " << step << ": stretched";
  }
}

// A thread-pool run across a -60 s step keeps every chunk: a chunk's end is its start plus its
// monotonic duration, so none ends before it started ("impossible": 2 chunks were lost).
TEST(CollectClockStepTest, ChunksAcrossAStepAreKept) {
  const std::string out = TempDir() + "/stepped-run";
  const std::string log = TempDir() + "/stepped-run.log";
  const std::vector<std::string> run = {
      Runfile("tools/collect"), "--threads=2",       "--events_per_file=100000",
      "--files_per_dataset=2",  "--chunk_size=2000", "--cache_dir=" + TempDir() + "/cache",
      "--output_dir=" + out};
  // Generated first, unstepped, so that the step lands in the run.
  std::vector<std::string> generate(run.begin() + 1, run.end());
  generate.push_back("--name=generate");
  ASSERT_EQ(RunCollect(generate).exit_code, 0);
  std::vector<std::string> stepped = run;
  stepped.push_back("--name=stepped");
  ChildProcess collect(stepped, SteppedEnvironment(-60, 0.3), log);
  ASSERT_TRUE(collect.started());
  ASSERT_EQ(collect.Wait(absl::Seconds(120)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(out + "/stepped");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->rejected_chunks_size(), 0);
  EXPECT_EQ(saved->metrics().workflow().total_events(), 600000) << ReadFile(log);
  for (const v1::ChunkRecord& chunk : saved->chunks()) {
    EXPECT_NEAR((chunk.end_unix_ns() - chunk.start_unix_ns()) * 1e-9, chunk.duration_seconds(),
                1e-6);
  }
}

}  // namespace
}  // namespace roastcoffea
