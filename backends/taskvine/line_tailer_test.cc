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
  auto on_line = [&](absl::string_view line, int64_t n) { lines.emplace_back(n, std::string(line)); };
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
  auto on_line = [&](absl::string_view line, int64_t n) { lines.emplace_back(n, std::string(line)); };
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

TEST(LineTailer, TruncatedFileIsReported) {
  const std::string path = TempPath("tailer_truncated");
  unlink(path.c_str());
  Append(path, "one\ntwo\n");
  LineTailer tailer(path);
  auto ignore = [](absl::string_view, int64_t) {};
  ASSERT_TRUE(tailer.Poll(ignore).ok());
  FILE* f = fopen(path.c_str(), "wb");
  fclose(f);
  EXPECT_EQ(tailer.Poll(ignore).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LineTailer, OverlongLinesAreCut) {
  const std::string path = TempPath("tailer_overlong");
  unlink(path.c_str());
  Append(path, std::string(LineTailer::kMaxLineBytes + 10, 'y') + "\nok\n");
  LineTailer tailer(path, 4096);
  Lines lines;
  ASSERT_TRUE(tailer.Poll([&](absl::string_view line, int64_t n) { lines.emplace_back(n, std::string(line)); }).ok());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].second.size(), LineTailer::kMaxLineBytes);
  EXPECT_EQ(lines[1], (std::pair<int64_t, std::string>{2, "ok"}));
  EXPECT_EQ(tailer.overlong_lines(), 1);
}

}  // namespace
}  // namespace taskvine
}  // namespace roastcoffea
