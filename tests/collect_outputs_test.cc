// End to end: a run is never lost at save time (#27 items 3-5). Everything about --name and
// --output_dir that can be checked is checked before the run; a name is claimed for the run, so
// that of runs started together with one name only one runs; a measurement that cannot be saved
// where asked is saved in $TMPDIR/roastcoffea-unsaved (exit 6). The runs measure a command with
// the taskvine backend over the synthetic logs: the command shows whether the run happened and
// can damage the output directory while it runs.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool WriteFileForTest(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  std::fputs("x\n", file);
  return std::fclose(file) == 0;
}

std::string Collect() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
}

std::string LogsFlag() {
  const std::string source =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  return absl::StrCat("--taskvine_logs=", source, "synthetic-1-transactions.txt,", source,
                      "synthetic-1-performance.txt");
}

std::vector<std::string> Environment(const std::string& tmpdir) {
  return {absl::StrCat("TEST_TMPDIR=", TempDir()), "PATH=/usr/bin:/bin",
          absl::StrCat("HOME=", TempDir()), absl::StrCat("TMPDIR=", tmpdir)};
}

bool Exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

// A run of `shell` measured with --name=`name`; its exit status, its output in `log`.
int MeasureCommand(const std::string& output, const std::string& name, const std::string& shell,
                   const std::string& log, const std::string& tmpdir = TempDir()) {
  ChildProcess collect({Collect(), "--backend=taskvine", LogsFlag(), "--output_dir=" + output,
                        "--name=" + name, "--", "/bin/sh", "-c", shell},
                       Environment(tmpdir), log);
  if (!collect.started()) return -1;
  return collect.Wait(absl::Seconds(120));
}

TEST(CollectOutputsTest, BadNamesAreRefusedBeforeTheRun) {
  const std::string output = TempDir() + "/bad-names";
  const std::string marker = TempDir() + "/bad-names-ran";
  for (const std::string& name :
       {std::string(".hidden"), std::string(".x"), std::string(228, 'a'), std::string("a\x1b[2Jb"),
        std::string("a\xC2\x9B"
                    "31m")}) {
    const std::string log = TempDir() + "/bad-names.log";
    EXPECT_EQ(MeasureCommand(output, name, "touch '" + marker + "'", log), 2) << ReadFile(log);
    EXPECT_THAT(ReadFile(log), HasSubstr("--name: invalid measurement name"));
    EXPECT_FALSE(Exists(marker)) << "the command ran for --name=" << name;
  }
  // The longest accepted name runs and saves.
  const std::string log = TempDir() + "/long-name.log";
  EXPECT_EQ(MeasureCommand(output, std::string(227, 'a'), "true", log), 0) << ReadFile(log);
  EXPECT_TRUE(LoadMeasurement(output + "/" + std::string(227, 'a')).ok()) << ReadFile(log);

  // The thread pool too: nothing is analysed.
  const CollectOutcome sample = RunCollect(
      {"--threads=2", "--events_per_file=100000", "--output_dir=" + output, "--name=.hidden"});
  EXPECT_EQ(sample.exit_code, 2) << sample.err;
  EXPECT_THAT(sample.err, HasSubstr("--name"));
  EXPECT_THAT(sample.err, Not(HasSubstr("sample analysis on")));
}

TEST(CollectOutputsTest, AnOutputDirectoryThatCannotBeCreatedIsRefusedBeforeTheRun) {
  const std::string file = TempDir() + "/a-file";
  ASSERT_TRUE(WriteFileForTest(file));
  const std::string marker = TempDir() + "/unwritable-ran";
  const std::string log = TempDir() + "/unwritable.log";
  EXPECT_EQ(MeasureCommand(file + "/out", "run", "touch '" + marker + "'", log), 1)
      << ReadFile(log);
  EXPECT_THAT(ReadFile(log), HasSubstr("--output_dir"));
  EXPECT_FALSE(Exists(marker));
}

// Four runs started together with one name: one runs and saves; the others are refused at
// their start (their commands never run). No run is lost after running.
TEST(CollectOutputsTest, ConcurrentRunsWithOneNameNeverLoseARun) {
  const std::string output = TempDir() + "/same";
  std::vector<std::unique_ptr<ChildProcess>> runs;
  for (int i = 0; i < 4; ++i) {
    runs.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{Collect(), "--backend=taskvine", LogsFlag(),
                                 "--output_dir=" + output, "--name=same", "--", "/bin/sh", "-c",
                                 absl::StrCat("touch '", TempDir(), "/same-ran-", i, "'; sleep 2")},
        Environment(TempDir()), absl::StrCat(TempDir(), "/same-", i, ".log")));
  }
  int saved = 0;
  for (int i = 0; i < 4; ++i) {
    const int exit_code = runs[i]->Wait(absl::Seconds(120));
    const std::string log = ReadFile(absl::StrCat(TempDir(), "/same-", i, ".log"));
    const bool ran = Exists(absl::StrCat(TempDir(), "/same-ran-", i));
    if (exit_code == 0) {
      ++saved;
      EXPECT_THAT(log, HasSubstr("the name 'same' is claimed for this run"));
      EXPECT_TRUE(ran);
    } else {
      // Refused at start: the claim is held (2), or the first run has already saved (1).
      EXPECT_TRUE(exit_code == 2 || exit_code == 1) << exit_code << "\n" << log;
      EXPECT_TRUE(absl::StrContains(log, "another collect run is saving to") ||
                  absl::StrContains(log, "already exists"))
          << log;
      EXPECT_FALSE(ran) << "a refused run ran its command\n" << log;
    }
  }
  EXPECT_EQ(saved, 1);
  EXPECT_TRUE(LoadMeasurement(output + "/same").ok());
  EXPECT_FALSE(Exists(output + "/.same.roastcoffea-claim"));
}

// The output directory becomes unusable during the run (replaced by a regular file: that
// defeats root too, whom chmod does not stop): the measurement is saved in the fallback.
TEST(CollectOutputsTest, AnOutputDirectoryLostDuringTheRunFallsBackToTmpdir) {
  const std::string output = TempDir() + "/vanishing";
  const std::string tmpdir = TempDir() + "/tmp-fallback";
  ASSERT_EQ(mkdir(tmpdir.c_str(), 0777), 0);
  const std::string log = TempDir() + "/vanishing.log";
  const int exit_code = MeasureCommand(
      output, "gone", absl::StrCat("rm -rf '", output, "' && touch '", output, "'"), log, tmpdir);
  EXPECT_EQ(exit_code, 6) << ReadFile(log);
  const std::string fallback = tmpdir + "/roastcoffea-unsaved/gone";
  EXPECT_THAT(ReadFile(log), HasSubstr("saved it instead to " + fallback));
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(fallback);
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_EQ(saved->metadata().name(), "gone");
}

// A read-only output directory (for users other than root, whom chmod does not stop).
TEST(CollectOutputsTest, AReadOnlyOutputDirectoryFallsBackToTmpdir) {
  if (geteuid() == 0) {
    // Root writes through modes: the test above covers root with a path under a file.
    const std::string output = TempDir() + "/root-ro";
    const std::string tmpdir = TempDir() + "/tmp-root";
    ASSERT_EQ(mkdir(tmpdir.c_str(), 0777), 0);
    const std::string log = TempDir() + "/root-ro.log";
    // /proc/self/... cannot take a directory, even for root.
    const std::string shell =
        absl::StrCat("rm -rf '", output, "' && ln -s /proc/1/cmdline '", output, "'");
    EXPECT_EQ(MeasureCommand(output, "ro", shell, log, tmpdir), 6) << ReadFile(log);
    EXPECT_TRUE(LoadMeasurement(tmpdir + "/roastcoffea-unsaved/ro").ok()) << ReadFile(log);
    return;
  }
  const std::string output = TempDir() + "/read-only";
  const std::string tmpdir = TempDir() + "/tmp-ro";
  ASSERT_EQ(mkdir(tmpdir.c_str(), 0777), 0);
  const std::string log = TempDir() + "/read-only.log";
  EXPECT_EQ(MeasureCommand(output, "ro", absl::StrCat("chmod 555 '", output, "'"), log, tmpdir), 6)
      << ReadFile(log);
  chmod(output.c_str(), 0755);
  EXPECT_TRUE(LoadMeasurement(tmpdir + "/roastcoffea-unsaved/ro").ok()) << ReadFile(log);
  EXPECT_FALSE(Exists(output + "/ro"));
}

}  // namespace
}  // namespace roastcoffea
