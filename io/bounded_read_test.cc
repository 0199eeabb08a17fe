#include "io/bounded_read.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

// The type is checked before the open: a FIFO, a directory, a device (also behind a symlink) is
// refused naming the path, and never opened (inotify sees no open of it).
TEST(ReadBoundedFileTest, NonRegularFilesAreRefusedBeforeTheyAreOpened) {
  const std::string fifo = TempPath("unopened_fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string dir = TempPath("unopened_dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string zero_link = TempPath("zero_link");
  ASSERT_EQ(symlink("/dev/zero", zero_link.c_str()), 0);
  const std::string fifo_link = TempPath("fifo_link");
  ASSERT_EQ(symlink(fifo.c_str(), fifo_link.c_str()), 0);
  const int watcher = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watcher, 0);
  ASSERT_GE(inotify_add_watch(watcher, fifo.c_str(), IN_OPEN), 0);
  ASSERT_GE(inotify_add_watch(watcher, dir.c_str(), IN_OPEN), 0);
  const struct {
    std::string path;
    std::string kind;
  } cases[] = {{fifo, "a FIFO"},
               {dir, "a directory"},
               {"/dev/zero", "a character device"},
               {zero_link, "a character device"},
               {fifo_link, "a FIFO"}};
  for (const auto& [path, kind] : cases) {
    const absl::StatusOr<std::string> read = ReadBoundedFile(path, Limit(1 << 20));
    EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition) << path;
    EXPECT_THAT(read.status().message(),
                HasSubstr(absl::StrCat("'", path, "' is ", kind, ", not a regular file")));
    EXPECT_EQ(BoundedFileReader::Open(path, Limit(1 << 20)).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  char events[4096];
  EXPECT_EQ(read(watcher, events, sizeof(events)), -1) << "the FIFO or directory was opened";
  close(watcher);
}

TEST(BoundedFileReaderTest, ReadsPieceByPieceWithinTheLimit) {
  const std::string path = Write("pieces", "0123456789");
  absl::StatusOr<BoundedFileReader> reader = BoundedFileReader::Open(path, Limit(10));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->size(), 10);
  std::string out;
  EXPECT_EQ(*reader->ReadSome(4, &out), 4u);
  EXPECT_EQ(*reader->ReadSome(100, &out), 6u);
  EXPECT_EQ(*reader->ReadSome(100, &out), 0u);
  EXPECT_EQ(out, "0123456789");
  EXPECT_EQ(BoundedFileReader::Open(path, Limit(9)).status().code(),
            absl::StatusCode::kResourceExhausted);
  // A file that grows past the limit while read.
  absl::StatusOr<BoundedFileReader> growing =
      BoundedFileReader::Open(path, Limit(12, "a test file", /*size_from_stat=*/true));
  ASSERT_TRUE(growing.ok());
  std::ofstream(path, std::ios::app) << "abcdef";
  std::string grown;
  absl::StatusOr<size_t> count = growing->ReadSome(100, &grown);
  EXPECT_EQ(count.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(count.status().message(), HasSubstr("over the 12 B limit for a test file"));
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

// Shared with the TaskVine log check (backends/taskvine/log_paths.cc).
TEST(FileTypeTextTest, NamesEachType) {
  EXPECT_EQ(FileTypeText(S_IFREG), "a regular file");
  EXPECT_EQ(FileTypeText(S_IFDIR), "a directory");
  EXPECT_EQ(FileTypeText(S_IFIFO), "a FIFO");
  EXPECT_EQ(FileTypeText(S_IFCHR), "a character device");
  EXPECT_EQ(FileTypeText(S_IFBLK), "a block device");
  EXPECT_EQ(FileTypeText(S_IFSOCK), "a socket");
}

}  // namespace
}  // namespace roastcoffea
