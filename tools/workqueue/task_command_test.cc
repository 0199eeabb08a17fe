#include "tools/workqueue/task_command.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace workqueue {
namespace {

using ::testing::HasSubstr;

TEST(TaskCommandTest, QuotesArgumentsThatNeedItForTheShell) {
  // Quoting itself is tested with tools/shell_quote (follow_up_command_test).
  ChunkTaskArguments arguments;
  arguments.output = "out.pb";
  arguments.chunks.push_back({"qcd", "f 0.rcol", "/data/f 0.rcol", 0, 100});
  EXPECT_EQ(ChunkTaskCommand(arguments),
            "./chunk_task out.pb qcd 'f 0.rcol' '/data/f 0.rcol' 0 100");
}

TEST(TaskCommandTest, ParsesWhatTheShellPasses) {
  absl::StatusOr<ChunkTaskArguments> parsed =
      ParseChunkTaskArguments({"out.pb", "qcd", "a.rcol", "/d/a.rcol", "0", "10", "sig", "b.rcol",
                               "/d/b.rcol", "10", "20"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->output, "out.pb");
  ASSERT_EQ(parsed->chunks.size(), 2u);
  EXPECT_EQ(parsed->chunks[1].dataset, "sig");
  EXPECT_EQ(parsed->chunks[1].input, "b.rcol");
  EXPECT_EQ(parsed->chunks[1].file, "/d/b.rcol");
  EXPECT_EQ(parsed->chunks[1].entry_start, 10);
  EXPECT_EQ(parsed->chunks[1].entry_stop, 20);
}

TEST(TaskCommandTest, RejectsBadArguments) {
  EXPECT_THAT(std::string(ParseChunkTaskArguments({"out.pb"}).status().message()),
              HasSubstr("usage"));
  EXPECT_THAT(std::string(ParseChunkTaskArguments({"o", "d", "i", "f", "0"}).status().message()),
              HasSubstr("usage"));
  EXPECT_THAT(
      std::string(ParseChunkTaskArguments({"o", "d", "i", "f", "5", "5"}).status().message()),
      HasSubstr("bad entry range"));
  EXPECT_THAT(
      std::string(ParseChunkTaskArguments({"o", "d", "i", "f", "x", "5"}).status().message()),
      HasSubstr("bad entry range"));
}

}  // namespace
}  // namespace workqueue
}  // namespace roastcoffea
