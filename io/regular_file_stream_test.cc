#include "io/regular_file_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TestPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/regular_file_stream_test.", getpid(), ".",
                      name);
}

TEST(OpenRegularFileStreamTest, ReadsARegularFileAndItsSize) {
  const std::string path = TestPath("file");
  std::ofstream(path, std::ios::binary) << "twelve bytes";
  absl::StatusOr<RegularFileStream> file = OpenRegularFileStream(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->size, 12);
  const void* data = nullptr;
  int size = 0;
  ASSERT_TRUE(file->stream->Next(&data, &size));
  EXPECT_EQ(std::string(static_cast<const char*>(data), size), "twelve bytes");
}

TEST(OpenRegularFileStreamTest, MissingIsNotFoundNamingIt) {
  const std::string path = TestPath("missing");
  absl::StatusOr<RegularFileStream> file = OpenRegularFileStream(path);
  EXPECT_TRUE(absl::IsNotFound(file.status())) << file.status();
  EXPECT_THAT(file.status().message(), HasSubstr("'" + path + "'"));
}

// A FIFO is refused without blocking (no writer ever opens it); a directory, a device and a
// link (whatever it points to) are refused too, each error naming the path and what it is.
TEST(OpenRegularFileStreamTest, RefusesWhatIsNotARegularFileSayingWhatItIs) {
  const std::string fifo = TestPath("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string directory = TestPath("directory");
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  const std::string target = TestPath("target");
  std::ofstream(target) << "x";
  const std::string link = TestPath("link");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  for (const auto& [path, what] : {std::pair<std::string, std::string>{fifo, "a FIFO"},
                                   {directory, "a directory"},
                                   {"/dev/zero", "a character device"},
                                   {link, "a symbolic link, never followed"}}) {
    absl::StatusOr<RegularFileStream> file = OpenRegularFileStream(path);
    EXPECT_EQ(file.status().code(), absl::StatusCode::kFailedPrecondition) << file.status();
    EXPECT_THAT(file.status().message(),
                HasSubstr(absl::StrCat("'", path, "' is not a regular file (", what, ")")));
  }
}

TEST(RegularFileStreamOfTest, TakesTheDescriptorAndClosesARefusedOne) {
  const std::string fifo = TestPath("fifo-fd");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  absl::StatusOr<RegularFileStream> file = RegularFileStreamOf(fd, fifo);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // closed
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
}  // namespace roastcoffea
