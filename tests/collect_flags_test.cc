// End to end: collect's command line (tools/collect_commands.h). An unknown flag, a flag of
// another mode or backend, a bad value or a wrong number of arguments exits 2 (and nothing
// runs); --help is generated per mode from the command table; the exit codes are the ones
// tools/exit_code.h and README.md document.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string SaveRun(const std::string& name) {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  const absl::StatusOr<std::string> saved = SaveMeasurement(run, TempDir() + "/runs", name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

TEST(CollectFlagsTest, UnknownFlagExitsTwoWithTheClosestOne) {
  const CollectOutcome outcome = RunCollect({"show", SaveRun("unknown"), "--formt=csv"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("collect: unknown flag --formt (did you mean --format?)"));
  EXPECT_EQ(outcome.out, "");
  const CollectOutcome run = RunCollect({"--thread=2", "--output_dir=" + TempDir() + "/none"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("unknown flag --thread (did you mean --threads?)"));
  EXPECT_FALSE(std::filesystem::exists(TempDir() + "/none"));
}

TEST(CollectFlagsTest, FlagOfAnotherModeExitsTwoNamingIt) {
  const std::string dir = SaveRun("inapplicable");
  CollectOutcome outcome = RunCollect({"show", dir, "--html_output=" + TempDir() + "/x.html"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--html_output does not apply to 'show' (its flags: "
                                     "--tables, --format, --trace, --serve)"));
  EXPECT_FALSE(std::filesystem::exists(TempDir() + "/x.html"));

  outcome = RunCollect({"report", dir, "--trace=" + TempDir() + "/x.json"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--trace does not apply to 'report'"));
  EXPECT_FALSE(std::filesystem::exists(dir + ".html"));

  outcome = RunCollect({"--top=3", "--output_dir=" + TempDir() + "/top"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--top does not apply to 'run'"));
  EXPECT_FALSE(std::filesystem::exists(TempDir() + "/top"));

  outcome = RunCollect({"compare", dir, dir, "--tables=ascii", "--trace=x.json"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--trace does not apply to 'compare'"));
}

TEST(CollectFlagsTest, BackendFlagWithoutItsBackendExitsTwo) {
  const CollectOutcome outcome =
      RunCollect({"--scheduler=tcp://127.0.0.1:1", "--output_dir=" + TempDir() + "/dask"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err,
              HasSubstr("--scheduler needs --backend=dask (this is --backend=threadpool)"));
  const CollectOutcome workers =
      RunCollect({"--backend=dask", "--workers=2", "--scheduler=tcp://127.0.0.1:1"});
  EXPECT_EQ(workers.exit_code, 2);
  EXPECT_THAT(workers.err, HasSubstr("--workers needs --backend=workqueue"));
}

TEST(CollectFlagsTest, BadValueAndMissingValueExitTwo) {
  CollectOutcome outcome = RunCollect({"--threads=many"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--threads"));
  outcome = RunCollect({"profile", SaveRun("missing-value"), "--top"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("--top needs a value"));
}

TEST(CollectFlagsTest, ArgumentsAndCommandsAreCheckedPerMode) {
  const std::string dir = SaveRun("arguments");
  CollectOutcome outcome = RunCollect({"show", dir, dir});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("usage: collect show DIR (one measurement directory"));
  outcome = RunCollect({"show", dir, "--", "echo"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("'show' takes no command after --"));
  outcome = RunCollect({"run", "extra"});
  EXPECT_EQ(outcome.exit_code, 2);
  outcome = RunCollect({"shwo", dir});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("unknown mode 'shwo' (did you mean 'show'?)"));
  // After "--" the words belong to the measured command, however they look.
  outcome = RunCollect({"--output_dir=" + TempDir() + "/cmd", "--", "--formt"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_THAT(outcome.err, HasSubstr("a command to measure needs --backend=dask"));
  EXPECT_THAT(outcome.err, Not(HasSubstr("unknown flag")));
}

TEST(CollectFlagsTest, ModeHelpListsOnlyThatModesFlags) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"show", "--help"}, {"help", "show"}}) {
    const CollectOutcome help = RunCollect(words);
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_THAT(help.out, HasSubstr("Usage: collect show [flags] DIR"));
    EXPECT_THAT(help.out, HasSubstr("--format ("));
    EXPECT_THAT(help.out, HasSubstr("--trace ("));
    EXPECT_THAT(help.out, Not(HasSubstr("--threads")));
    EXPECT_THAT(help.out, HasSubstr("Exit status:"));
  }
  const CollectOutcome help = RunCollect({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* line : {"  0    done", "  1    cannot run or save", "  2    bad flags",
                           "  3    partial", "  4    the measured COMMAND failed",
                           "  5    compare --fail_on_regression", "  130  interrupted"}) {
    EXPECT_THAT(help.out, HasSubstr(line));
  }
  EXPECT_THAT(help.out, HasSubstr("collect report [flags] DIR"));
}

// "Show it again with: ..." names the binary as run and quotes the directory, so that the line
// runs as printed, even with a quote, a space and a $ in the measurement's name.
TEST(CollectFollowUpTest, PrintedCommandRunsAsPasted) {
  const std::string name = "it's a $HOME run";
  const CollectOutcome run =
      RunCollect({"--threads=1", "--events_per_file=2000", "--files_per_dataset=1",
                  "--chunk_size=1000", "--interval=0.05", "--cache_dir=" + TempDir() + "/cache",
                  "--output_dir=" + TempDir() + "/follow up", "--name=" + name, "--tables=ascii"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string prefix = "Show it again with: ";
  const size_t start = run.out.find(prefix);
  ASSERT_NE(start, std::string::npos) << run.out;
  const size_t end = run.out.find('\n', start);
  const std::string command = run.out.substr(start + prefix.size(), end - start - prefix.size());
  EXPECT_THAT(command, HasSubstr("/tools/collect show '"));
  EXPECT_THAT(command, HasSubstr("/follow up/it'\\''s a $HOME run'"));
  FILE* shell = popen((command + " --tables=ascii 2>&1").c_str(), "r");
  ASSERT_NE(shell, nullptr);
  std::string shown;
  char buffer[4096];
  size_t read;
  while ((read = fread(buffer, 1, sizeof(buffer), shell)) > 0) shown.append(buffer, read);
  EXPECT_EQ(pclose(shell), 0) << command << "\n" << shown;
  EXPECT_THAT(shown, HasSubstr("Measurement: it's a $HOME run")) << shown;
}

// Issue #16: --taskvine_logs=/dev/zero (or a FIFO) said "does not exist (use --follow ...)".
// It names the type, the FIFO is never opened (the test would block), with --follow too.
TEST(CollectFlagsTest, TaskVineLogsOfTheWrongTypeAreNamedByType) {
  const std::string fifo = TempDir() + "/logs-fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string output = "--output_dir=" + TempDir() + "/wrong-type-runs";
  const CollectOutcome zero =
      RunCollect({"--backend=taskvine", "--taskvine_logs=/dev/zero", output});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(zero.err,
                                "--taskvine_logs: /dev/zero is a character device, "
                                "not a regular file or a directory of logs\n"))
      << zero.err;
  EXPECT_FALSE(absl::StrContains(zero.err, "does not exist")) << zero.err;
  for (const char* follow : {"--follow=false", "--follow"}) {
    const CollectOutcome outcome =
        RunCollect({"--backend=taskvine", "--taskvine_logs=" + fifo, follow, output});
    EXPECT_EQ(outcome.exit_code, 2) << follow;
    EXPECT_TRUE(absl::StrContains(outcome.err, fifo + " is a FIFO, not a regular file"))
        << outcome.err;
  }
}

TEST(CollectFlagsTest, VersionStillWorks) {
  const CollectOutcome version = RunCollect({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("roastcoffea collect "));
}

}  // namespace
}  // namespace roastcoffea
