// collect's output going away: under a file size limit (ulimit -f, RLIMIT_FSIZE) a write past it
// fails like a full disk (EFBIG) instead of killing collect by SIGXFSZ mid-run, and a reader
// that went away (`collect | head`) fails the tables' write (EPIPE) instead of killing collect
// by SIGPIPE before it saved; the user's command still gets the default dispositions.
#include <signal.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/checkpoint.h"
#include "store/measurement_io.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

std::string Collect() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect";
}

TEST(CollectFileLimitsTest, AFileSizeLimitEndsTheRunLikeAFullDiskNotBySignal) {
  const std::string cache = TempDir() + "/cache";
  const std::string output = TempDir() + "/limited";
  const std::vector<std::string> dataset = {"--events_per_file=20000", "--files_per_dataset=2",
                                            "--cache_dir=" + cache, "--threads=2",
                                            "--output_dir=" + output};
  std::vector<std::string> generate = dataset;
  generate.push_back("--name=generate");
  ASSERT_EQ(RunCollect(generate).exit_code, 0) << "the dataset, generated without a limit";

  // 48 KiB: room for the checkpoint's first appends, not for the measurement's JSON.
  std::vector<std::string> argv = {"/bin/sh",
                                   "-c",
                                   "ulimit -f 48; exec \"$@\"",
                                   "sh",
                                   Collect(),
                                   "--chunk_size=2000",
                                   "--checkpoint_interval=0.05",
                                   "--name=limited"};
  argv.insert(argv.end(), dataset.begin(), dataset.end());
  const std::string log = TempDir() + "/limited.log";
  ChildProcess collect(argv,
                       {"TEST_TMPDIR=" + TempDir(), "TMPDIR=" + TempDir(), "PATH=/usr/bin:/bin",
                        "HOME=" + TempDir()},
                       log);
  ASSERT_TRUE(collect.started());
  const int exit_code = collect.Wait(absl::Seconds(120));
  ASSERT_NE(exit_code, -1) << "killed by a signal (SIGXFSZ):\n" << ReadFile(log);
  EXPECT_THAT(exit_code, AnyOf(1, 6)) << ReadFile(log);
  EXPECT_THAT(ReadFile(log), HasSubstr("File too large"));
  absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(output + "/limited.checkpoint");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
  EXPECT_GT(checkpoint->chunks.size(), 0u);
  EXPECT_EQ(checkpoint->dropped_tail_bytes, 0);
}

// `collect ... | true`: the reader is gone before the tables are printed, which come before the
// save. The run used to die by SIGPIPE (exit 141) with only its checkpoint left.
TEST(CollectFileLimitsTest, AReaderThatWentAwayDoesNotLoseTheRun) {
  const std::string output = TempDir() + "/piped";
  const std::string log = TempDir() + "/piped.log";
  ChildProcess collect(
      {"/bin/sh", "-c", "\"$@\" | true", "sh", Collect(), "--events_per_file=20000",
       "--files_per_dataset=1", "--cache_dir=" + TempDir() + "/cache", "--threads=2",
       "--output_dir=" + output, "--name=piped"},
      {"TEST_TMPDIR=" + TempDir(), "PATH=/usr/bin:/bin", "HOME=" + TempDir()}, log);
  ASSERT_TRUE(collect.started());
  ASSERT_EQ(collect.Wait(absl::Seconds(120)), 0) << ReadFile(log);
  absl::StatusOr<v1::Measurement> saved = LoadMeasurement(output + "/piped");
  ASSERT_TRUE(saved.ok()) << saved.status() << "\n" << ReadFile(log);
  EXPECT_FALSE(saved->metadata().interrupted());
  EXPECT_GT(saved->chunks_size(), 0);
}

// What collect ignores for itself, its command does not inherit: a `yes | head` in it still ends.
TEST(CollectFileLimitsTest, TheCommandGetsTheDefaultSignalDispositions) {
  const std::string logs =
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/backends/taskvine/testdata/";
  const std::string status = TempDir() + "/command-status";
  const CollectOutcome run = RunCollect(
      {"--backend=taskvine", absl::StrCat("--taskvine_logs=", logs, "synthetic-1-transactions.txt"),
       "--output_dir=" + TempDir() + "/command", "--name=command", "--", "/bin/sh", "-c",
       "grep SigIgn /proc/self/status > " + status});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string line = ReadFile(status);  // "SigIgn:\t0000000000000000\n"
  const size_t tab = line.find('\t');
  ASSERT_NE(tab, std::string::npos) << line;
  uint64_t ignored = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(line.substr(tab + 1, 16), &ignored)) << line;
  EXPECT_EQ(ignored & (uint64_t{1} << (SIGPIPE - 1)), 0u) << "SIGPIPE ignored: " << line;
  EXPECT_EQ(ignored & (uint64_t{1} << (SIGXFSZ - 1)), 0u) << "SIGXFSZ ignored: " << line;
}

}  // namespace
}  // namespace roastcoffea
