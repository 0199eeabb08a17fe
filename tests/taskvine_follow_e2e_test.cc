// collect --backend=taskvine --follow end to end (#27): a followed log replaced under collect by
// something that is not a log, and collect attached to a run already going. Logs are the
// synthetic run of //backends/taskvine:synthetic_logs, written live into a scratch folder.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

std::string Collect() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
}

std::string Testdata() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
}

std::vector<std::string> Environment() {
  return {absl::StrCat("TEST_TMPDIR=", TempDir()), "PATH=/usr/bin:/bin",
          absl::StrCat("HOME=", TempDir())};
}

void Shell(const std::string& command) { ASSERT_EQ(system(command.c_str()), 0) << command; }

// A run still going in DIR/transactions (+ DIR/performance): the synthetic run without its
// MANAGER END record.
void WriteLiveRun(const std::string& dir) {
  Shell(absl::StrCat("mkdir -p ", dir, " && grep -v 'MANAGER [0-9]* END' ", Testdata(),
                     "synthetic-1-transactions.txt > ", dir, "/transactions && cp ", Testdata(),
                     "synthetic-1-performance.txt ", dir, "/performance"));
}

bool HasWarning(const v1::Measurement& m, const std::string& code, const std::string& text) {
  for (const v1::Warning& w : m.warnings()) {
    if (w.code() == code && w.message().find(text) != std::string::npos) return true;
  }
  return false;
}

// The log is replaced while collect follows it; `end` ends the run (SIGINT or --duration).
void ReplacedLogIsSaved(const std::string& name,
                        const std::function<void(const std::string&)>& replace,
                        const std::string& what, bool end_with_signal) {
  const std::string logs = TempDir() + "/" + name;
  WriteLiveRun(logs);
  const std::string output = TempDir() + "/" + name + "-out";
  const std::string log = TempDir() + "/" + name + ".log";
  std::vector<std::string> argv = {
      Collect(),
      "--backend=taskvine",
      "--follow",
      absl::StrCat("--taskvine_logs=", logs, "/transactions,", logs, "/performance"),
      "--interval=0.1",
      "--output_dir=" + output,
      "--name=m"};
  if (!end_with_signal) argv.push_back("--duration=3");
  ChildProcess collect(argv, Environment(), log);
  ASSERT_TRUE(collect.started());
  absl::SleepFor(absl::Milliseconds(1200));
  Shell(absl::StrCat("mv ", logs, "/transactions ", logs, "/transactions.1"));
  replace(logs + "/transactions");
  absl::SleepFor(absl::Milliseconds(600));
  const absl::Time ending = absl::Now();
  if (end_with_signal) {
    ASSERT_EQ(kill(collect.pid(), SIGINT), 0);  // the first signal only
  }
  const int exit_code = collect.Wait(absl::Seconds(40));
  EXPECT_EQ(exit_code, 0) << ReadFile(log);
  EXPECT_LT(absl::Now() - ending, absl::Seconds(end_with_signal ? 12 : 15)) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/m");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_GT(saved->chunks_size(), 0);
  EXPECT_TRUE(
      HasWarning(*saved, "taskvine_log_replaced", logs + "/transactions was replaced by " + what))
      << ReadFile(log);
}

TEST(TaskVineFollowE2e, LogRotatedToAFifoEndsAtTheDurationAndIsSaved) {
  ReplacedLogIsSaved(
      "fifo", [](const std::string& p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); }, "a FIFO",
      /*end_with_signal=*/false);
}

TEST(TaskVineFollowE2e, LogRotatedToDevZeroEndsAtTheFirstSignalAndIsSaved) {
  ReplacedLogIsSaved(
      "devzero", [](const std::string& p) { ASSERT_EQ(symlink("/dev/zero", p.c_str()), 0); },
      "a character device", /*end_with_signal=*/true);
}

TEST(TaskVineFollowE2e, LogRotatedToADirectoryIsSaved) {
  ReplacedLogIsSaved(
      "dir", [](const std::string& p) { ASSERT_EQ(mkdir(p.c_str(), 0700), 0); }, "a directory",
      /*end_with_signal=*/false);
}

// The same run measured post hoc, and followed by collect started after the run (attached
// late, through most-recent and through the run's own directory) or before it: the same window
// and the same figures (one window: the run's own record).
v1::Measurement Followed(const std::string& name, const std::string& spec, bool run_first) {
  const std::string run_info = TempDir() + "/" + name + "/vine-run-info";
  const std::string run = run_info + "/2026-01-01T010000";
  Shell(absl::StrCat("mkdir -p ", run_info, "/vine-cache ", run_info,
                     "/2026-01-01T000000/vine-logs"));
  Shell(absl::StrCat("cp ", Testdata(), "synthetic-2-transactions.txt ", run_info,
                     "/2026-01-01T000000/vine-logs/transactions"));  // an earlier, finished run
  if (run_first) WriteLiveRun(run + "/vine-logs");
  Shell(absl::StrCat("ln -sfn 2026-01-01T010000 ", run_info, "/most-recent"));
  const std::string output = TempDir() + "/" + name + "-out";
  const std::string log = TempDir() + "/" + name + ".log";
  ChildProcess collect({Collect(), "--backend=taskvine", "--follow",
                        "--taskvine_logs=" + (spec == "DIR" ? run : run_info + "/" + spec),
                        "--taskvine_category=processing", "--duration=2.5", "--interval=0.1",
                        "--output_dir=" + output, "--name=m"},
                       Environment(), log);
  EXPECT_TRUE(collect.started());
  absl::SleepFor(absl::Milliseconds(700));
  if (!run_first) WriteLiveRun(run + "/vine-logs");
  absl::SleepFor(absl::Milliseconds(500));
  Shell(absl::StrCat("grep 'MANAGER [0-9]* END' ", Testdata(), "synthetic-1-transactions.txt >> ",
                     run, "/vine-logs/transactions"));
  EXPECT_EQ(collect.Wait(absl::Seconds(40)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/m");
  EXPECT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  if (run_first && saved.ok()) {
    EXPECT_TRUE(HasWarning(*saved, "taskvine_attached_late", "read from its start"));
  }
  return saved.ok() ? *saved : v1::Measurement();
}

TEST(TaskVineFollowE2e, AttachedLateOrNotTheFiguresAreThePostHocOnes) {
  const std::string finished = TempDir() + "/posthoc";
  Shell(absl::StrCat("mkdir -p ", finished, " && cp ", Testdata(), "synthetic-1-transactions.txt ",
                     finished, "/transactions && cp ", Testdata(), "synthetic-1-performance.txt ",
                     finished, "/performance"));
  const CollectOutcome posthoc = RunCollect(
      {"--backend=taskvine",
       absl::StrCat("--taskvine_logs=", finished, "/transactions,", finished, "/performance"),
       "--output_dir=" + TempDir() + "/posthoc-out", "--name=m"});
  ASSERT_EQ(posthoc.exit_code, 0) << posthoc.err;
  absl::StatusOr<v1::Measurement> expected = LoadMeasurement(TempDir() + "/posthoc-out/m");
  ASSERT_TRUE(expected.ok()) << expected.status();
  const v1::WorkerMetrics& e = expected->metrics().workers();

  for (const auto& [name, spec, run_first] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"late-most-recent", "most-recent", true},
           {"late-dir", "DIR", true},
           {"before", "most-recent", false}}) {
    SCOPED_TRACE(name);
    const v1::Measurement m = Followed(name, spec, run_first);
    const v1::WorkerMetrics& w = m.metrics().workers();
    EXPECT_NEAR(m.metadata().elapsed_seconds(), expected->metadata().elapsed_seconds(), 1e-6);
    EXPECT_NEAR(w.window_seconds(), e.window_seconds(), 1e-6);
    EXPECT_NEAR(w.avg_workers_over_window(), e.avg_workers_over_window(), 1e-6);
    EXPECT_NEAR(w.avg_cores_over_window(), e.avg_cores_over_window(), 1e-6);
    EXPECT_NEAR(m.metrics().efficiency().task_execution_core_efficiency_fraction(),
                expected->metrics().efficiency().task_execution_core_efficiency_fraction(), 1e-9);
    EXPECT_LE(m.metrics().efficiency().task_execution_core_efficiency_fraction(), 1.0);
    EXPECT_EQ(m.chunks_size(), expected->chunks_size());
  }
}

// A live run read without --follow: collect says it has not ended, not that it is a finished
// run, and the performance log's lag is not reported as a cross-check disagreement.
TEST(TaskVineFollowE2e, ALiveRunReadWithoutFollowIsSaidToBeGoing) {
  const std::string logs = TempDir() + "/live-posthoc";
  WriteLiveRun(logs);
  Shell(absl::StrCat("head -n 20 ", Testdata(), "synthetic-1-performance.txt > ", logs,
                     "/performance"));  // lagging, as on a live run
  const CollectOutcome outcome =
      RunCollect({"--backend=taskvine",
                  absl::StrCat("--taskvine_logs=", logs, "/transactions,", logs, "/performance"),
                  "--output_dir=" + TempDir() + "/live-posthoc-out", "--name=m"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::HasSubstr("has not ended (no MANAGER END record"));
  EXPECT_THAT(outcome.err, ::testing::Not(::testing::HasSubstr("finished run")));
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(TempDir() + "/live-posthoc-out/m");
  ASSERT_TRUE(saved.ok()) << saved.status();
  for (const v1::Warning& w : saved->warnings()) EXPECT_NE(w.code(), "taskvine_cross_check");
}

}  // namespace
}  // namespace roastcoffea
