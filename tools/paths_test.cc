#include "tools/paths.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR"); }

TEST(ResolveUserPathTest, AbsolutePathsAreKept) {
  EXPECT_EQ(ResolveUserPath("/data/m"), "/data/m");
}

TEST(ResolveUserPathTest, RelativePathsFollowBuildWorkingDirectory) {
  setenv("BUILD_WORKING_DIRECTORY", "/home/physicist/analysis", 1);
  EXPECT_EQ(ResolveUserPath("measurements"), "/home/physicist/analysis/measurements");
  EXPECT_EQ(ResolveUserPath("."), "/home/physicist/analysis");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

TEST(EnsureWritableDirectoryTest, CreatesNestedDirectories) {
  const std::string directory = TempDir() + "/a/b/c";
  ASSERT_TRUE(EnsureWritableDirectory(directory).ok());
  struct stat info;
  ASSERT_EQ(stat(directory.c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  // Idempotent.
  EXPECT_TRUE(EnsureWritableDirectory(directory).ok());
}

TEST(EnsureWritableDirectoryTest, PathUnderARegularFileIsAClearError) {
  const std::string file = TempDir() + "/plain-file";
  std::ofstream(file) << "x";
  const absl::Status status = EnsureWritableDirectory(file + "/measurements");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(file));
  EXPECT_THAT(std::string(status.message()), HasSubstr("Not a directory"));
}

TEST(EnsureWritableDirectoryTest, ARegularFileIsNotADirectory) {
  const std::string file = TempDir() + "/another-file";
  std::ofstream(file) << "x";
  const absl::Status status = EnsureWritableDirectory(file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("not a directory"));
}

}  // namespace
}  // namespace roastcoffea
