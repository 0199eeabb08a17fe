#include "backends/taskvine/line_tailer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace taskvine {
namespace {

std::string TempPath(const char* name) {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void Append(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "ab");
  ASSERT_NE(f, nullptr);
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

using Lines = std::vector<std::pair<int64_t, std::string>>;

TEST(LineTailer, MissingFileIsNotFoundUntilItAppears) {
  const std::string path = TempPath("tailer_missing");
  unlink(path.c_str());
  LineTailer tailer(path);
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  EXPECT_EQ(tailer.Poll(on_line).status().code(), absl::StatusCode::kNotFound);
  Append(path, "a\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(lines, (Lines{{1, "a"}}));
}

TEST(LineTailer, LinesSplitAcrossWritesAndBlocks) {
  const std::string path = TempPath("tailer_split");
  unlink(path.c_str());
  LineTailer tailer(path, /*block_bytes=*/64);  // small blocks: lines cross block boundaries
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  const std::string long_line(200, 'x');
  Append(path, "first\nsec");
  absl::StatusOr<int64_t> read = tailer.Poll(on_line);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 9);
  EXPECT_EQ(lines, (Lines{{1, "first"}}));
  EXPECT_EQ(tailer.pending_line(), "sec");
  EXPECT_EQ(tailer.pending_line_number(), 2);
  Append(path, "ond\n" + long_line + "\n\nlast");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(lines, (Lines{{1, "first"}, {2, "second"}, {3, long_line}, {4, ""}}));
  EXPECT_EQ(tailer.pending_line(), "last");
  ASSERT_TRUE(tailer.Poll(on_line).ok());  // nothing new
  EXPECT_EQ(lines.size(), 4u);
  EXPECT_EQ(tailer.bytes_read(), 9 + 4 + 201 + 1 + 4);
}

// Truncated (copytruncate rotation, or a new run writing from scratch): the new content is
// read from its start, not from the old offset.
TEST(LineTailer, TruncatedFileIsReadAgainFromItsStart) {
  const std::string path = TempPath("tailer_truncated");
  unlink(path.c_str());
  Append(path, "one\ntwo\n");
  LineTailer tailer(path);
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  FILE* f = fopen(path.c_str(), "wb");
  fclose(f);
  Append(path, "new\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(lines, (Lines{{1, "one"}, {2, "two"}, {1, "new"}}));
  EXPECT_EQ(tailer.restarts(), 1);
  EXPECT_EQ(tailer.restart_reason(), "truncated from 8 to 4 bytes");
  Append(path, "more\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(lines.back(), (std::pair<int64_t, std::string>{2, "more"}));
  EXPECT_EQ(tailer.restarts(), 1);
}

// Rotated (renamed away, a new file created at the path): the old file is read to its end,
// then the new one from its start.
TEST(LineTailer, RotatedFileIsFinishedThenTheNewOneRead) {
  const std::string path = TempPath("tailer_rotated");
  const std::string old_path = path + ".1";
  unlink(path.c_str());
  unlink(old_path.c_str());
  Append(path, "a\n");
  LineTailer tailer(path);
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  Append(path, "b\n");  // written before the rotation, not read yet
  ASSERT_EQ(rename(path.c_str(), old_path.c_str()), 0);
  Append(path, "c\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(lines, (Lines{{1, "a"}, {2, "b"}, {1, "c"}}));
  EXPECT_EQ(tailer.restarts(), 1);
  EXPECT_EQ(tailer.restart_reason(), "replaced (rotated) after 4 bytes");
}

// Deleted while read: the open file is still read to its end (what the writer appends to it
// too), path_missing() says so, and a new file at the path is read after it.
TEST(LineTailer, DeletedFileIsReadToItsEndAndTheEmptyPathSaid) {
  const std::string path = TempPath("tailer_deleted");
  unlink(path.c_str());
  Append(path, "a\n");
  LineTailer tailer(path);
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_FALSE(tailer.path_missing());
  std::FILE* writer = std::fopen(path.c_str(), "a");
  ASSERT_NE(writer, nullptr);
  ASSERT_EQ(unlink(path.c_str()), 0);
  std::fputs("b\n", writer);
  std::fclose(writer);
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_TRUE(tailer.path_missing());
  EXPECT_EQ(tailer.bytes_read(), 4);
  Append(path, "c\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_FALSE(tailer.path_missing());
  EXPECT_EQ(lines, (Lines{{1, "a"}, {2, "b"}, {1, "c"}}));
}

TEST(LineTailer, OverlongLinesAreCut) {
  const std::string path = TempPath("tailer_overlong");
  unlink(path.c_str());
  Append(path, std::string(LineTailer::kMaxLineBytes + 10, 'y') + "\nok\n");
  LineTailer tailer(path, 4096);
  Lines lines;
  ASSERT_TRUE(tailer
                  .Poll([&](absl::string_view line, int64_t n) {
                    lines.emplace_back(n, std::string(line));
                  })
                  .ok());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].second.size(), LineTailer::kMaxLineBytes);
  EXPECT_EQ(lines[1], (std::pair<int64_t, std::string>{2, "ok"}));
  EXPECT_EQ(tailer.overlong_lines(), 1);
}

// A log replaced by something that is not a regular file is never opened (a FIFO would block
// open(2) for ever, /dev/zero would never end); the old file stays, and the problem is named.
// Once the path names a regular file again, it is read from its start.
void ExpectReplacementRefused(const char* name,
                              const std::function<void(const std::string&)>& replace,
                              const std::string& problem) {
  const std::string path = TempPath(name);
  unlink(path.c_str());
  rmdir(path.c_str());
  Append(path, "a\n");
  LineTailer tailer(path);
  Lines lines;
  auto on_line = [&](absl::string_view line, int64_t n) {
    lines.emplace_back(n, std::string(line));
  };
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  ASSERT_EQ(rename(path.c_str(), (path + ".1").c_str()), 0);
  replace(path);
  const absl::Time started = absl::Now();
  absl::StatusOr<int64_t> read = tailer.Poll(on_line);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_LT(absl::Now() - started, absl::Seconds(1));
  EXPECT_EQ(*read, 0);
  EXPECT_EQ(tailer.replacement_problem(), problem);
  EXPECT_EQ(tailer.replacements(), 1);
  ASSERT_TRUE(tailer.Poll(on_line).ok());  // the same problem is counted once
  EXPECT_EQ(tailer.replacements(), 1);
  unlink(path.c_str());
  rmdir(path.c_str());
  Append(path, "b\n");
  ASSERT_TRUE(tailer.Poll(on_line).ok());
  EXPECT_EQ(tailer.replacement_problem(), "");
  EXPECT_EQ(lines, (Lines{{1, "a"}, {1, "b"}}));
}

TEST(LineTailer, ReplacedByAFifoIsNotOpened) {
  ExpectReplacementRefused(
      "tailer_fifo", [](const std::string& p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); }, "a FIFO");
}

TEST(LineTailer, ReplacedByALinkToADeviceIsNotRead) {
  ExpectReplacementRefused(
      "tailer_devzero", [](const std::string& p) { ASSERT_EQ(symlink("/dev/zero", p.c_str()), 0); },
      "a character device");
}

TEST(LineTailer, ReplacedByADirectoryIsNotRead) {
  ExpectReplacementRefused(
      "tailer_dir", [](const std::string& p) { ASSERT_EQ(mkdir(p.c_str(), 0700), 0); },
      "a directory");
}

TEST(LineTailer, ReplacedByALinkToAnotherFileIsNotFollowed) {
  const std::string other = TempPath("tailer_other_file");
  unlink(other.c_str());
  Append(other, "secret\n");
  ExpectReplacementRefused(
      "tailer_link", [&](const std::string& p) { ASSERT_EQ(symlink(other.c_str(), p.c_str()), 0); },
      absl::StrCat("a symbolic link to ", other));
}

TEST(LineTailer, AFifoAtTheStartIsRefusedWithoutBlocking) {
  const std::string path = TempPath("tailer_fifo_start");
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  LineTailer tailer(path);
  absl::StatusOr<int64_t> read = tailer.Poll([](absl::string_view, int64_t) {});
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(read.status().message()), ::testing::HasSubstr("is a FIFO"));
}

// One Poll reads at most max_bytes_per_poll: a log growing faster than it is read (or one
// long line without newlines) cannot keep the caller in Poll.
TEST(LineTailer, OnePollReadsABoundedAmount) {
  const std::string path = TempPath("tailer_budget");
  unlink(path.c_str());
  Append(path, std::string(1000, 'x'));  // no newline at all
  LineTailer tailer(path, /*block_bytes=*/64, /*max_bytes_per_poll=*/300);
  const auto ignore = [](absl::string_view, int64_t) {};
  absl::StatusOr<int64_t> read = tailer.Poll(ignore);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 300);
  EXPECT_TRUE(tailer.more_pending());
  int polls = 1;
  while (tailer.more_pending()) {
    ASSERT_TRUE(tailer.Poll(ignore).ok());
    ++polls;
  }
  EXPECT_EQ(polls, 4);  // 300 + 300 + 300 + 100
  EXPECT_EQ(tailer.bytes_read(), 1000);
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
