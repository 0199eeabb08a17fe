// End to end: a run is never lost at save time (#27 items 3-5). Everything about --name and
// --output_dir that can be checked is checked before the run; a name is claimed for the run, so
// that of runs started together with one name only one runs; a measurement that cannot be saved
// where asked is saved in $TMPDIR/roastcoffea-unsaved (exit 6). The runs measure a command with
// the taskvine backend over the synthetic logs: the command shows whether the run happened and
// can damage the output directory while it runs.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
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
    // Root writes through modes: a read-only directory of /proc stands in.
    const std::string output = TempDir() + "/root-ro";
    const std::string tmpdir = TempDir() + "/tmp-root";
    ASSERT_EQ(mkdir(tmpdir.c_str(), 0777), 0);
    const std::string log = TempDir() + "/root-ro.log";
    // A directory of /proc is read-only even for root: nothing can be created in it.
    const std::string shell = absl::StrCat("rm -rf '", output, "' && ln -s /proc/1 '", output, "'");
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

// A saved measurement with one worker's profile, for show, report and profile.
std::string SavedRun(const std::string& name) {
  v1::Measurement run;
  run.mutable_metadata()->set_name(name);
  run.mutable_metadata()->set_backend("dask");
  v1::Profile& profile = *run.add_profiles();
  profile.set_worker("tcp://127.0.0.1:40001");
  profile.set_sampling_interval_seconds(0.01);
  profile.add_nodes()->set_parent(-1);
  profile.mutable_nodes(0)->set_frame(-1);
  profile.add_frames()->set_function("process");
  v1::ProfileNode& node = *profile.add_nodes();
  node.set_parent(0);
  node.set_frame(0);
  node.set_count(10);
  const absl::StatusOr<std::string> saved = SaveMeasurement(run, TempDir() + "/saved", name);
  EXPECT_TRUE(saved.ok()) << saved.status();
  return saved.ok() ? *saved : "";
}

// Reliability study 2, N5: outputs replaced a device node or a symlink with a regular file.
TEST(CollectOutputsTest, OutputsNeverReplaceADeviceNodeOrALink) {
  const std::string run = SavedRun("outputs");
  const std::string dir = TempDir() + "/fakedev";
  ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
  // A character device where the test may make one (root); a FIFO otherwise.
  for (const char* name : {"null", "null.json"}) {
    const std::string path = dir + "/" + name;
    if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
      ASSERT_EQ(mkfifo(path.c_str(), 0666), 0);
    }
  }
  const std::string precious = dir + "/precious";
  ASSERT_TRUE(WriteFileForTest(precious));
  ASSERT_EQ(symlink(precious.c_str(), (dir + "/link.html").c_str()), 0);
  ASSERT_EQ(symlink(precious.c_str(), (dir + "/link.pftrace").c_str()), 0);

  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"report", run, "--html_output=" + dir + "/null"},
        {"show", run, "--trace=" + dir + "/null.json"},
        {"report", run, "--html_output=" + dir + "/link.html"},
        {"show", run, "--trace=" + dir + "/link.pftrace"}}) {
    const CollectOutcome outcome = RunCollect(arguments);
    EXPECT_EQ(outcome.exit_code, 1) << arguments.back() << "\n" << outcome.err;
    EXPECT_THAT(outcome.err, HasSubstr("refusing to write")) << outcome.err;
  }
  struct stat info;
  for (const char* name : {"null", "null.json"}) {
    ASSERT_EQ(lstat((dir + "/" + name).c_str(), &info), 0);
    EXPECT_FALSE(S_ISREG(info.st_mode)) << name << " was replaced";
  }
  for (const char* name : {"link.html", "link.pftrace"}) {
    ASSERT_EQ(lstat((dir + "/" + name).c_str(), &info), 0);
    EXPECT_TRUE(S_ISLNK(info.st_mode)) << name << " was replaced";
  }
  EXPECT_EQ(ReadFile(precious), "x\n");
}

// N6: `show M --trace=M/measurement.pb` replaced the measurement it showed.
TEST(CollectOutputsTest, ATraceNeverOverwritesTheMeasurementsOwnFiles) {
  const std::string run = SavedRun("traced");
  const std::string pb = ReadFile(run + "/measurement.pb");
  const std::string json = ReadFile(run + "/measurement.json");
  for (const char* file : {"measurement.pb", "measurement.json"}) {
    const CollectOutcome outcome = RunCollect({"show", run, "--trace=" + run + "/" + file});
    EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
    EXPECT_THAT(outcome.err, HasSubstr("--trace: refusing to write"));
    EXPECT_THAT(outcome.err, HasSubstr("a file of a saved measurement"));
  }
  EXPECT_EQ(ReadFile(run + "/measurement.pb"), pb);
  EXPECT_EQ(ReadFile(run + "/measurement.json"), json);
  const CollectOutcome shown = RunCollect({"show", run});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  // A new file there is an output like any other.
  const CollectOutcome traced = RunCollect({"show", run, "--trace=" + run + "/trace.json"});
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_TRUE(Exists(run + "/trace.json"));
}

// N9: a planted M/profile link sent the profile files into its target.
TEST(CollectOutputsTest, ProfileNeverFollowsAPlantedProfileLink) {
  const std::string run = SavedRun("planted");
  const std::string victim = TempDir() + "/victim";
  ASSERT_EQ(mkdir(victim.c_str(), 0777), 0);
  ASSERT_TRUE(WriteFileForTest(victim + "/profile.folded"));
  ASSERT_EQ(symlink(victim.c_str(), (run + "/profile").c_str()), 0);
  const CollectOutcome outcome = RunCollect({"profile", run});
  EXPECT_THAT(outcome.err, HasSubstr("'" + run + "/profile': a symbolic link (never followed)"));
  EXPECT_EQ(ReadFile(victim + "/profile.folded"), "x\n");
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(victim)) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

// N10: errors quoted the first line of a file linked into a measurement (/etc/shadow).
TEST(CollectOutputsTest, ErrorsNeverQuoteTheFilesThatFailed) {
  const std::string secret = TempDir() + "/secret";
  {
    FILE* file = std::fopen(secret.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("root:SECRET-HASH:20228:0:99999:7:::\nother:x\n", file);
    std::fclose(file);
  }
  // Ours: measurement.json (no .pb) and FORMAT linked to the secret.
  const std::string ours = SavedRun("leaky");
  ASSERT_EQ(unlink((ours + "/measurement.pb").c_str()), 0);
  ASSERT_EQ(unlink((ours + "/measurement.json").c_str()), 0);
  ASSERT_EQ(symlink(secret.c_str(), (ours + "/measurement.json").c_str()), 0);
  CollectOutcome outcome = RunCollect({"show", ours});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.err, HasSubstr("measurement.json' is corrupt"));
  EXPECT_THAT(outcome.err, Not(HasSubstr("SECRET")));
  ASSERT_EQ(unlink((ours + "/FORMAT").c_str()), 0);
  ASSERT_EQ(symlink(secret.c_str(), (ours + "/FORMAT").c_str()), 0);
  outcome = RunCollect({"show", ours});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.err, Not(HasSubstr("SECRET")));
  // The original tool's directory: start_end_time.txt, then metrics.json, linked to it.
  const std::string legacy = TempDir() + "/legacy";
  ASSERT_EQ(mkdir(legacy.c_str(), 0777), 0);
  {
    FILE* file = std::fopen((legacy + "/metrics.json").c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("{}", file);
    std::fclose(file);
  }
  ASSERT_EQ(symlink(secret.c_str(), (legacy + "/start_end_time.txt").c_str()), 0);
  outcome = RunCollect({"show", legacy});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_THAT(outcome.err, HasSubstr("start_end_time.txt: expected one line"));
  EXPECT_THAT(outcome.err, Not(HasSubstr("SECRET")));
  ASSERT_EQ(unlink((legacy + "/metrics.json").c_str()), 0);
  ASSERT_EQ(unlink((legacy + "/start_end_time.txt").c_str()), 0);
  ASSERT_EQ(symlink(secret.c_str(), (legacy + "/metrics.json").c_str()), 0);
  {
    FILE* file = std::fopen((legacy + "/start_end_time.txt").c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("1.0,2.0\n", file);
    std::fclose(file);
  }
  outcome = RunCollect({"show", legacy});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, Not(HasSubstr("SECRET")));
}

// N11: U+009B (8-bit CSI) and the other C1 controls reached the terminal from a saved name.
TEST(CollectOutputsTest, C1ControlsNeverReachTheTerminalOrMarkdown) {
  v1::Measurement run;
  const std::string hostile =
      "X\x1b]0;PWNED\x07\x1b[2J\r\x08\xC2\x9B"
      "31m\xC2\x85"
      "end";
  run.mutable_metadata()->set_name(hostile);
  run.mutable_metadata()->set_host(hostile);
  const absl::StatusOr<std::string> saved = SaveMeasurement(run, TempDir() + "/c1", "c1");
  ASSERT_TRUE(saved.ok()) << saved.status();
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"show", *saved, "--tables=ascii"},
        {"show", *saved, "--format=markdown"}}) {
    const CollectOutcome outcome = RunCollect(arguments);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_THAT(outcome.out, HasSubstr("end")) << arguments.back();
    for (const char* control : {"\xC2\x9B", "\xC2\x85", "\x1b", "\x07", "\x08", "\r"}) {
      EXPECT_THAT(outcome.out, Not(HasSubstr(control))) << arguments.back();
    }
  }
  // Errors name paths, which are data too.
  const CollectOutcome missing = RunCollect({"show", TempDir() + "/no\xC2\x9B"
                                                                 "2Jsuch"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/no?2Jsuch")) << missing.err;
  EXPECT_THAT(missing.err, Not(HasSubstr("\xC2\x9B")));
}

}  // namespace
}  // namespace roastcoffea
