// collect under a file size limit (ulimit -f, RLIMIT_FSIZE): a write past it fails like a
// full disk (EFBIG) instead of killing collect by SIGXFSZ mid-run; what was measured stays.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/checkpoint.h"
#include "tests/child_process.h"
#include "tests/collect_runner.h"

namespace roastcoffea {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

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
  std::vector<std::string> argv = {
      "/bin/sh",
      "-c",
      "ulimit -f 48; exec \"$@\"",
      "sh",
      std::string(std::getenv("TEST_SRCDIR")) + "/roastcoffea/tools/collect",
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

}  // namespace
}  // namespace roastcoffea
