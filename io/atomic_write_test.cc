#include "io/atomic_write.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

std::string TempDirectory() {
  std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/atomicXXXXXX");
  EXPECT_NE(mkdtemp(&path[0]), nullptr);
  return path;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Entries(const std::string& directory) {
  int n = 0;
  DIR* dir = opendir(directory.c_str());
  while (const dirent* entry = readdir(dir)) {
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++n;
  }
  closedir(dir);
  return n;
}

TEST(AtomicWriteTest, WritesReplacesAndLeavesNoTemporary) {
  const std::string dir = TempDirectory();
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.html", "first").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.html", "second").ok());
  EXPECT_EQ(Read(dir + "/out.html"), "second");
  EXPECT_EQ(Entries(dir), 1);
}

TEST(AtomicWriteTest, APlantedLinkIsRefusedNeverFollowedNorReplaced) {
  const std::string dir = TempDirectory();
  const std::string victim = dir + "/victim";
  { std::ofstream(victim) << "precious"; }
  // The attack of the reliability study: links at the predictable temporary names and at the
  // target itself.
  ASSERT_EQ(symlink(victim.c_str(), (dir + "/r.html").c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), absl::StrCat(dir, "/r.html.tmp-", getpid()).c_str()), 0);
  const absl::Status written = WriteFileAtomically(dir + "/r.html", "<!DOCTYPE html>");
  EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(written.message(), "'" + dir + "/r.html': it is a symbolic link"))
      << written;
  EXPECT_EQ(Read(victim), "precious");
  struct stat info;
  ASSERT_EQ(lstat((dir + "/r.html").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(Entries(dir), 3);  // no temporary left
}

TEST(AtomicWriteTest, ADeviceNodeFifoOrDirectoryIsNeverReplaced) {
  const std::string dir = TempDirectory();
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  ASSERT_EQ(mkdir((dir + "/sub").c_str(), 0700), 0);
  for (const char* name : {"fifo", "sub"}) {
    const absl::Status written = WriteFileAtomically(absl::StrCat(dir, "/", name), "x");
    EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition) << name;
  }
  // A character device where the test may make one (root), else the system's /dev/null is only
  // checked, never written: the check refuses before anything is created.
  const std::string device = dir + "/null";
  const std::string target =
      mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0 ? device : std::string("/dev/null");
  const absl::Status written = WriteFileAtomically(target, "x");
  EXPECT_EQ(written.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(written.message(), "a character device")) << written;
  struct stat info;
  ASSERT_EQ(lstat(target.c_str(), &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

TEST(AtomicWriteTest, PermissionsFollowTheUmask) {
  const std::string dir = TempDirectory();
  const mode_t previous = umask(027);
  ASSERT_TRUE(WriteFileAtomically(dir + "/f", "x").ok());
  umask(previous);
  struct stat info;
  ASSERT_EQ(stat((dir + "/f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST(AtomicWriteTest, PiecesLargerThanTheBufferArriveWholeAndInOrder) {
  const std::string dir = TempDirectory();
  auto writer = AtomicFileWriter::Create(dir + "/big.folded");
  ASSERT_TRUE(writer.ok());
  // Across the 1 MiB buffer: a small piece, one of 2.5 MiB, a small one.
  std::string big((size_t{5} << 20) / 2, 'b');
  big.back() = 'z';
  ASSERT_TRUE((*writer)->Append("head;").ok());
  ASSERT_TRUE((*writer)->Append(big).ok());
  ASSERT_TRUE((*writer)->Append(";tail").ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_EQ(Read(dir + "/big.folded"), absl::StrCat("head;", big, ";tail"));
}
// Around the page cache (O_DIRECT) on a file system that allows it, buffered where it does not
// (tmpfs): pieces of every size, straddling the 1 MiB blocks, arrive whole and in order.
TEST(AtomicWriteTest, DirectWritesGiveTheSameFileWhereverTheyGo) {
  std::vector<std::string> directories = {TempDirectory()};
  std::string shm = "/dev/shm/atomicXXXXXX";
  if (mkdtemp(&shm[0]) != nullptr) directories.push_back(shm);
  std::string expected;
  for (int i = 0; expected.size() < (size_t{5} << 20) + 77; ++i) {
    expected +=
        std::string(static_cast<size_t>(i * 7919 % 300000 + 1), static_cast<char>('a' + i % 26));
  }
  for (const std::string& directory : directories) {
    for (const size_t size : {size_t{0}, size_t{100}, size_t{4096}, size_t{1} << 20,
                              (size_t{1} << 20) + 4096 + 5, expected.size()}) {
      for (const size_t switch_at : {size_t{0}, size_t{4096}, size_t{12345}}) {
        if (switch_at > size) continue;
        const std::string path = absl::StrCat(directory, "/out-", size, "-", switch_at);
        AtomicWriteOptions options;
        options.direct = switch_at == 0;
        absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
            AtomicFileWriter::Create(path, options);
        ASSERT_TRUE(writer.ok()) << writer.status();
        const absl::string_view contents = absl::string_view(expected).substr(0, size);
        // Buffered up to `switch_at` (then SwitchToDirect), or direct from the start.
        ASSERT_TRUE((*writer)->Append(contents.substr(0, switch_at)).ok());
        ASSERT_TRUE((*writer)->SwitchToDirect().ok());
        for (size_t at = switch_at, piece = 1; at < contents.size();
             at += piece, piece = piece * 3 + 1) {
          ASSERT_TRUE((*writer)->Append(contents.substr(at, piece)).ok());
        }
        ASSERT_TRUE((*writer)->Commit().ok()) << path;
        EXPECT_TRUE(Read(path) == contents) << path;
        EXPECT_EQ(Entries(directory), 1) << path;  // no temporary left
        unlink(path.c_str());
      }
    }
  }
  if (directories.size() > 1) rmdir(shm.c_str());
}

TEST(AtomicWriteTest, UncommittedWriterLeavesTheTargetAsItWas) {
  const std::string dir = TempDirectory();
  ASSERT_TRUE(WriteFileAtomically(dir + "/t.json", "old").ok());
  {
    auto writer = AtomicFileWriter::Create(dir + "/t.json");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("half of a new").ok());
  }
  EXPECT_EQ(Read(dir + "/t.json"), "old");
  EXPECT_EQ(Entries(dir), 1);
}

TEST(AtomicWriteTest, ErrorsNameTheTargetAndTheReason) {
  const absl::Status status = WriteFileAtomically("/nonexistent-dir/x.html", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "'/nonexistent-dir/x.html'")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "No such file")) << status;
}

TEST(AtomicWriteTest, UnsyncedWriterStillReplacesWholeAtCommit) {
  const std::string dir = TempDirectory();
  ASSERT_TRUE(WriteFileAtomically(dir + "/cache", "old").ok());
  AtomicWriteOptions options;
  options.sync = false;
  auto writer = AtomicFileWriter::Create(dir + "/cache", options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Append("new ").ok());
  ASSERT_TRUE((*writer)->Append("contents").ok());
  EXPECT_EQ(Read(dir + "/cache"), "old");
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_EQ(Read(dir + "/cache"), "new contents");
  EXPECT_EQ(Entries(dir), 1);
}

// Whether `directory`'s file system has unnamed files (O_TMPFILE).
bool HasUnnamedFiles(const std::string& directory) {
  const int fd = open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// A writer killed mid-write (SIGKILL: no destructor runs) leaves the target as it was and, where
// the file system has unnamed files, nothing else: `profile` and `report` left a `.tmp-*` of up
// to 68 MB (reliability study 2, N12).
TEST(AtomicWriteTest, AWriterKilledMidWriteLeavesNothingBehind) {
  const std::string dir = TempDirectory();
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.html", "old").ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
        AtomicFileWriter::Create(dir + "/out.html");
    if (!writer.ok()) _exit(2);
    const std::string piece(1 << 20, 'x');
    for (int i = 0; i < 3; ++i) {
      if (!(*writer)->Append(piece).ok()) _exit(3);
    }
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(Read(dir + "/out.html"), "old");
  // Without unnamed files, the documented fallback: the named temporary stays.
  EXPECT_EQ(Entries(dir), HasUnnamedFiles(dir) ? 1 : 2);
}

// The unnamed file is named at Commit both where the target is new (linked there at once) and
// where it replaces one (a temporary name, renamed over it), with the umask's permissions.
TEST(AtomicWriteTest, CommitNamesANewTargetAndReplacesAnOldOne) {
  const std::string dir = TempDirectory();
  for (const char* contents : {"new", "replaced"}) {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
        AtomicFileWriter::Create(dir + "/t.json");
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(contents).ok());
    ASSERT_TRUE((*writer)->Commit().ok());
    EXPECT_EQ(Read(dir + "/t.json"), contents);
    EXPECT_EQ(Entries(dir), 1);
    struct stat info;
    ASSERT_EQ(stat((dir + "/t.json").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0666 & ~io_internal::ProcessUmask());
  }
}

// Where an unnamed file cannot be linked (no /proc, no CAP_DAC_READ_SEARCH), Commit copies it to
// a named temporary and renames that over the target: the same file, the same permissions, no
// temporary left, for a new target, a replaced one, and contents written around the page cache.
TEST(AtomicWriteTest, UnlinkableUnnamedFilesAreCopiedWholeAtCommit) {
  const std::string dir = TempDirectory();
  io_internal::SetUnnamedFilesUnlinkableForTesting(true);
  std::string large;
  for (int i = 0; large.size() < (size_t{3} << 20) + 1234; ++i) {
    absl::StrAppend(&large, "line ", i, " of a measurement\n");
  }
  for (const bool direct : {false, true}) {
    for (const std::string& contents : {std::string("first"), large, std::string()}) {
      AtomicWriteOptions options;
      options.direct = direct;
      absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
          AtomicFileWriter::Create(dir + "/m.pbs", options);
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE((*writer)->Append(contents).ok());
      ASSERT_TRUE((*writer)->Commit().ok());
      EXPECT_TRUE(Read(dir + "/m.pbs") == contents) << contents.size() << " direct " << direct;
      EXPECT_EQ(Entries(dir), 1);
      struct stat info;
      ASSERT_EQ(stat((dir + "/m.pbs").c_str(), &info), 0);
      EXPECT_EQ(info.st_mode & 0777, 0666 & ~io_internal::ProcessUmask());
    }
  }
  // Not committed: the target keeps its last contents and nothing else is left.
  {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
        AtomicFileWriter::Create(dir + "/m.pbs");
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append("half").ok());
  }
  EXPECT_EQ(Read(dir + "/m.pbs"), "");
  EXPECT_EQ(Entries(dir), 1);
  io_internal::SetUnnamedFilesUnlinkableForTesting(false);
}

}  // namespace
}  // namespace roastcoffea
