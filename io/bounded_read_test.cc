#include "io/bounded_read.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

BoundedReadOptions Limit(int64_t max_bytes, absl::string_view what = "this file",
                         bool size_from_stat = true) {
  BoundedReadOptions options;
  options.max_bytes = max_bytes;
  options.what = what;
  options.size_from_stat = size_from_stat;
  return options;
}

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

std::string Write(const std::string& name, const std::string& contents) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(ReadBoundedFileTest, ReadsARegularFileAndFollowsSymlinks) {
  const std::string path = Write("small", "hello\n");
  EXPECT_EQ(*ReadBoundedFile(path, Limit(6)), "hello\n");
  const std::string link = TempPath("link");
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_EQ(*ReadBoundedFile(link, Limit(64)), "hello\n");
  EXPECT_EQ(*ReadBoundedFile(Write("empty", ""), Limit(0)), "");
}

TEST(ReadBoundedFileTest, MissingIsNotFoundNamingThePath) {
  const absl::StatusOr<std::string> read = ReadBoundedFile(TempPath("nope"), Limit(10));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), HasSubstr("nope' does not exist"));
}

TEST(ReadBoundedFileTest, OverTheLimitNamesSizeLimitAndKind) {
  const std::string path = Write("big", std::string(2048, 'x'));
  const absl::StatusOr<std::string> read = ReadBoundedFile(path, Limit(1024, "a FORMAT file"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(read.status().message(),
              HasSubstr("big' is 2 KiB, over the 1 KiB limit for a FORMAT file"));
}

// Reliability study D4: /dev/zero (size 0, endless) and /proc-like files are capped while read.
TEST(ReadBoundedFileTest, DevicesAreRefusedAndEndlessReadsCapped) {
  const absl::StatusOr<std::string> zero = ReadBoundedFile("/dev/zero", Limit(1 << 20));
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(zero.status().message(),
              HasSubstr("'/dev/zero' is a character device, not a regular file"));
  const std::string path = Write("grown", std::string(100, 'x'));
  const absl::StatusOr<std::string> capped =
      ReadBoundedFile(path, Limit(10, "a /proc file", /*size_from_stat=*/false));
  EXPECT_EQ(capped.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(capped.status().message(), HasSubstr("is more than 10 B, over the 10 B limit"));
}

// Reliability study D3 and D4: a directory does not throw, a FIFO does not block.
TEST(ReadBoundedFileTest, DirectoriesAndFifosAreRefusedWithoutBlocking) {
  const std::string dir = TempPath("dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const absl::StatusOr<std::string> read_dir = ReadBoundedFile(dir, Limit(10));
  EXPECT_EQ(read_dir.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read_dir.status().message(), HasSubstr("dir' is a directory, not a regular file"));
  const std::string fifo = TempPath("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const absl::StatusOr<std::string> read_fifo = ReadBoundedFile(fifo, Limit(10));
  EXPECT_EQ(read_fifo.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(read_fifo.status().message(), HasSubstr("fifo' is a FIFO, not a regular file"));
}

TEST(ReadBoundedFileTest, UnreadableIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads everything";
  const std::string path = Write("secret", "x");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  EXPECT_EQ(ReadBoundedFile(path, Limit(10)).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(ByteCountTextTest, BinaryUnits) {
  EXPECT_EQ(ByteCountText(64), "64 B");
  EXPECT_EQ(ByteCountText(256 << 20), "256 MiB");
  EXPECT_EQ(ByteCountText(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(ByteCountText(int64_t{5} << 30), "5 GiB");
}

}  // namespace
}  // namespace roastcoffea
