#include "tools/collect_command_table.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/collect_commands.h"

namespace roastcoffea {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

std::vector<std::string> BackendsFor(const Command& command, const std::string& flag) {
  for (const FlagCondition& condition : command.conditions) {
    if (condition.flag == flag && condition.on_flag == "backend") return condition.values;
  }
  return {};
}

TEST(CollectCommandsTest, ModesInHelpOrder) {
  std::vector<std::string> names;
  for (const Command& command : CollectCommands(LaunchContext())) names.push_back(command.name);
  EXPECT_THAT(names, ElementsAre("run", "show", "compare", "report", "profile"));
}

TEST(CollectCommandsTest, EveryFlagOfEveryModeIsADefinedFlag) {
  for (const Command& command : CollectCommands(LaunchContext())) {
    ASSERT_TRUE(command.run) << command.name;
    std::vector<std::string> flags = command.flags;
    flags.insert(flags.end(), command.hidden_flags.begin(), command.hidden_flags.end());
    for (const std::string& flag : flags) {
      EXPECT_NE(absl::FindCommandLineFlag(flag), nullptr) << command.name << ": --" << flag;
    }
    for (const FlagCondition& condition : command.conditions) {
      EXPECT_THAT(flags, Contains(condition.flag)) << command.name;
    }
  }
}

TEST(CollectCommandsTest, RunFlagsNeedTheirBackendFromTheOneList) {
  const std::vector<Command> commands = CollectCommands(LaunchContext());
  const Command& run = *FindCommand(commands, "run");
  EXPECT_EQ(run.flags.front(), "backend");
  EXPECT_THAT(BackendsFor(run, "backend"), ElementsAre());
  EXPECT_THAT(BackendsFor(run, "output_dir"), ElementsAre());
  EXPECT_THAT(BackendsFor(run, "threads"), ElementsAre("threadpool"));
  EXPECT_THAT(BackendsFor(run, "chunk_size"), ElementsAre("threadpool", "workqueue"));
  EXPECT_THAT(BackendsFor(run, "duration"), ElementsAre("dask", "taskvine"));
  EXPECT_THAT(BackendsFor(run, "dask_end_timeout"), ElementsAre("dask"));
  EXPECT_THAT(BackendsFor(run, "follow"), ElementsAre("taskvine"));
  EXPECT_THAT(BackendsFor(run, "wq_chunk_task"), ElementsAre("workqueue"));
  // Fault injection: accepted with its backend, never listed in the help.
  EXPECT_THAT(run.hidden_flags, ElementsAre("wq_testing_fault"));
  EXPECT_THAT(run.flags, Not(Contains("wq_testing_fault")));
  EXPECT_THAT(BackendsFor(run, "wq_testing_fault"), ElementsAre("workqueue"));
  // Each flag once.
  for (const std::string& flag : run.flags) {
    EXPECT_EQ(std::count(run.flags.begin(), run.flags.end(), flag), 1) << flag;
  }
}

TEST(CollectCommandsTest, ABackendFlagWithTheWrongBackendIsAUsageError) {
  const std::vector<Command> commands = CollectCommands(LaunchContext());
  ScannedCommandLine line;
  line.flags = {"backend", "threads"};
  line.values = {"dask", "4"};
  const absl::Status status = CheckInvocation(*FindCommand(commands, "run"), line);
  EXPECT_EQ(status.message(), "--threads needs --backend=threadpool (this is --backend=dask)");
}

}  // namespace
}  // namespace roastcoffea

// Its own main: the Work Queue library that the run mode links brings a main() of its own,
// which the linker would otherwise take from the archive before gtest_main's.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
