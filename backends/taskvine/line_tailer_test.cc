#include "backends/taskvine/line_tailer.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

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

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
