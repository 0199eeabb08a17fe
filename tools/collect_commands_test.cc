#include "tools/collect_commands.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/exit_code.h"

ABSL_FLAG(std::string, format, "table", "Output format.");
ABSL_FLAG(std::string, tables, "auto", "Table style.");
ABSL_FLAG(int, threads, 2, "Worker threads.");
ABSL_FLAG(bool, profile, false, "Take a profile.");
ABSL_FLAG(std::string, backend, "threadpool", "What runs the analysis.");
ABSL_FLAG(std::string, scheduler, "", "Dask scheduler.");

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<ScannedCommandLine> Scan(std::vector<std::string> words) {
  words.insert(words.begin(), "collect");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  return ScanCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::vector<Command> Table() {
  Command run;
  run.name = "run";
  run.summary = "Run.";
  run.flags = {"backend", "threads", "profile", "scheduler", "tables"};
  run.conditions = {{"scheduler", "backend", {"dask"}}, {"threads", "backend", {"threadpool"}}};
  run.accepts_command = true;
  Command show;
  show.name = "show";
  show.arguments_synopsis = "DIR";
  show.summary = "Show a measurement.";
  show.min_arguments = show.max_arguments = 1;
  show.arguments_problem = "one measurement directory";
  show.flags = {"tables", "format"};
  Command compare;
  compare.name = "compare";
  compare.arguments_synopsis = "A B [C ...]";
  compare.summary = "Compare.";
  compare.min_arguments = 2;
  compare.max_arguments = Command::kUnlimited;
  compare.arguments_problem = "two or more measurement directories";
  compare.flags = {"tables"};
  return {run, show, compare};
}

TEST(ScanCommandLineTest, EveryFormAbslAccepts) {
  absl::StatusOr<ScannedCommandLine> line =
      Scan({"show", "--format=csv", "-tables", "ascii", "--noprofile", "DIR", "--threads", "3",
            "--profile", "--", "python", "--format=x"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->flags, ElementsAre("format", "tables", "profile", "threads", "profile"));
  EXPECT_THAT(line->values, ElementsAre("csv", "ascii", "false", "3", "true"));
  EXPECT_THAT(line->positional, ElementsAre("show", "DIR"));
  EXPECT_TRUE(line->has_command_separator);
  EXPECT_THAT(line->command, ElementsAre("python", "--format=x"));
}

TEST(ScanCommandLineTest, UnknownFlagIsAUsageErrorWithTheClosestOne) {
  absl::StatusOr<ScannedCommandLine> line = Scan({"--formt=csv"});
  ASSERT_FALSE(line.ok());
  EXPECT_TRUE(IsUsageError(line.status()));
  EXPECT_EQ(line.status().message(), "unknown flag --formt (did you mean --format?)");
  line = Scan({"--thread=2"});
  EXPECT_EQ(line.status().message(), "unknown flag --thread (did you mean --threads?)");
  line = Scan({"--zzzzzzzzzzzz"});
  EXPECT_EQ(line.status().message(), "unknown flag --zzzzzzzzzzzz");
  // --no only negates a boolean.
  line = Scan({"--nothreads"});
  EXPECT_THAT(line.status().message(), HasSubstr("unknown flag --nothreads"));
}

TEST(ScanCommandLineTest, BadValuesAreUsageErrorsNamingTheFlag) {
  absl::StatusOr<ScannedCommandLine> line = Scan({"--threads=many"});
  ASSERT_FALSE(line.ok());
  EXPECT_TRUE(IsUsageError(line.status()));
  EXPECT_THAT(line.status().message(), HasSubstr("--threads"));
  line = Scan({"--threads"});
  EXPECT_EQ(line.status().message(), "--threads needs a value (--threads=VALUE)");
  line = Scan({"--threads", "--", "cmd"});
  EXPECT_EQ(line.status().message(), "--threads needs a value (--threads=VALUE)");
  line = Scan({"--noprofile=true"});
  EXPECT_TRUE(IsUsageError(line.status()));
}

TEST(ScanCommandLineTest, HelpAndAbslsOwnFlagsAreNotRejected) {
  absl::StatusOr<ScannedCommandLine> line = Scan({"show", "--help"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_TRUE(line->help);
  line = Scan({"--version"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_TRUE(line->absl_special);
  line = Scan({"--helpfull"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_TRUE(line->help);
}

std::string WriteFlagfile(const std::string& name, const std::string& text) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  std::ofstream(path) << text;
  return path;
}

TEST(ScanCommandLineTest, FlagfileLinesAreScannedLikeTheCommandLine) {
  const std::string path =
      WriteFlagfile("show.flags", "# comment\n\n  --format=csv  \n--notables_unused_guard\n");
  absl::StatusOr<ScannedCommandLine> line = Scan({"--flagfile", path, "show", "DIR"});
  ASSERT_FALSE(line.ok());
  EXPECT_TRUE(IsUsageError(line.status()));
  EXPECT_THAT(line.status().message(), HasSubstr("unknown flag --notables_unused_guard"));
  EXPECT_THAT(line.status().message(), HasSubstr(absl::StrCat("(in flag file '", path, "')")));

  const std::string good = WriteFlagfile("good.flags", "# comment\n\n  --format=csv  \n");
  line = Scan({"show", absl::StrCat("--flagfile=", good), "DIR"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_FALSE(line->absl_special);
  EXPECT_THAT(line->flags, ElementsAre("format"));
  EXPECT_THAT(line->values, ElementsAre("csv"));
  EXPECT_THAT(line->positional, ElementsAre("show", "DIR"));
}

TEST(CheckInvocationTest, FlagFromAFlagfileOfAnotherModeIsNamed) {
  const std::vector<Command> table = Table();
  const std::string path = WriteFlagfile("compare.flags", "--format=csv\n");
  absl::StatusOr<ScannedCommandLine> line =
      Scan({"compare", "A", "B", absl::StrCat("--flagfile=", path)});
  ASSERT_TRUE(line.ok()) << line.status();
  const absl::Status status = CheckInvocation(*FindCommand(table, "compare"), *line);
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_EQ(status.message(), "--format does not apply to 'compare' (its flags: --tables)");
}

TEST(ScanCommandLineTest, BadFlagfilesAreUsageErrorsNamingTheFile) {
  const std::string positional = WriteFlagfile("positional.flags", "--format=csv\nDIR\n");
  absl::StatusOr<ScannedCommandLine> line = Scan({"show", absl::StrCat("--flagfile=", positional)});
  ASSERT_FALSE(line.ok());
  EXPECT_TRUE(IsUsageError(line.status()));
  EXPECT_THAT(line.status().message(),
              HasSubstr(absl::StrCat("flag file '", positional, "' line 2: 'DIR' is not a flag")));

  const std::string loop = absl::StrCat(std::getenv("TEST_TMPDIR"), "/loop.flags");
  WriteFlagfile("loop.flags", absl::StrCat("--flagfile=", loop, "\n"));
  line = Scan({"show", absl::StrCat("--flagfile=", loop)});
  ASSERT_FALSE(line.ok());
  EXPECT_THAT(line.status().message(), HasSubstr("nest deeper than"));

  line = Scan({"show", "--flagfile=/nonexistent/collect.flags"});
  ASSERT_FALSE(line.ok());
  EXPECT_TRUE(IsUsageError(line.status()));
  EXPECT_THAT(line.status().message(), HasSubstr("/nonexistent/collect.flags"));

  const std::string no_value = WriteFlagfile("no_value.flags", "--threads\n3\n");
  line = Scan({absl::StrCat("--flagfile=", no_value)});
  ASSERT_FALSE(line.ok());
  EXPECT_THAT(line.status().message(), HasSubstr("line 2: '3' is not a flag"));
}

TEST(CheckInvocationTest, FlagOfAnotherModeIsNamed) {
  const std::vector<Command> table = Table();
  absl::StatusOr<ScannedCommandLine> line = Scan({"compare", "A", "B", "--format=csv"});
  ASSERT_TRUE(line.ok());
  const absl::Status status = CheckInvocation(*FindCommand(table, "compare"), *line);
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_EQ(status.message(), "--format does not apply to 'compare' (its flags: --tables)");
}

TEST(CheckInvocationTest, BackendFlagNeedsItsBackend) {
  const std::vector<Command> table = Table();
  absl::StatusOr<ScannedCommandLine> line = Scan({"--scheduler=tcp://h:1"});
  ASSERT_TRUE(line.ok());
  absl::Status status = CheckInvocation(*FindCommand(table, "run"), *line);
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_EQ(status.message(), "--scheduler needs --backend=dask (this is --backend=threadpool)");
  line = Scan({"--backend=dask", "--scheduler=tcp://h:1", "--", "python", "a.py"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(CheckInvocation(*FindCommand(table, "run"), *line).ok());
  absl::SetFlag(&FLAGS_backend, "threadpool");
}

TEST(CheckInvocationTest, ArgumentCounts) {
  const std::vector<Command> table = Table();
  absl::StatusOr<ScannedCommandLine> line = Scan({"show"});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(CheckInvocation(*FindCommand(table, "show"), *line).message(),
            "usage: collect show DIR (one measurement directory)");
  line = Scan({"show", "A", "B"});
  EXPECT_EQ(CheckInvocation(*FindCommand(table, "show"), *line).message(),
            "usage: collect show DIR (one measurement directory; unexpected: B)");
  line = Scan({"compare", "A", "B", "C", "D"});
  EXPECT_TRUE(CheckInvocation(*FindCommand(table, "compare"), *line).ok());
  line = Scan({"show", "A", "--", "x"});
  EXPECT_EQ(CheckInvocation(*FindCommand(table, "show"), *line).message(),
            "'show' takes no command after --");
}

TEST(FindCommandTest, UnknownModeSuggestsTheClosest) {
  const std::vector<Command> table = Table();
  EXPECT_EQ(FindCommand(table, "shwo"), nullptr);
  const absl::Status status = UnknownCommandError(table, "shwo");
  EXPECT_TRUE(IsUsageError(status));
  EXPECT_THAT(status.message(), HasSubstr("unknown mode 'shwo' (did you mean 'show'?)"));
}

TEST(HelpTest, ModeHelpListsOnlyItsFlags) {
  const std::vector<Command> table = Table();
  const std::string help = CommandHelp("collect", *FindCommand(table, "show"));
  EXPECT_THAT(help, HasSubstr("Usage: collect show [flags] DIR"));
  EXPECT_THAT(help, HasSubstr("--format (string, default table)\n      Output format."));
  EXPECT_THAT(help, Not(HasSubstr("--threads")));
  const std::string all = ToolHelp("collect", table, "intro\n", "outro\n");
  EXPECT_THAT(all, HasSubstr("--threads (int, default 2, needs --backend=threadpool)"));
  EXPECT_THAT(CommandHelp("collect", *FindCommand(table, "run")),
              HasSubstr("--scheduler (string, default \"\", needs --backend=dask)\n"));
  EXPECT_THAT(all, HasSubstr("collect run [flags] [-- COMMAND ...]"));
  EXPECT_THAT(all, HasSubstr("collect compare [flags] A B [C ...]"));
}

TEST(HelpTest, ModeHelpUsesItsOwnFlagTextAndExitCodes) {
  std::vector<Command> table = Table();
  Command& show = table[1];
  show.flag_help = {{"format", "table, or csv."}};
  show.exit_codes = {ExitCode::kOk, ExitCode::kFailure};
  const std::string help = CommandHelp("collect", show);
  EXPECT_THAT(help, HasSubstr("--format (string, default table)\n      table, or csv."));
  EXPECT_THAT(help, Not(HasSubstr("Output format.")));
  EXPECT_THAT(help, HasSubstr("Exit status:\n  0    done\n  1    cannot run"));
  EXPECT_THAT(help, Not(HasSubstr("regression")));
}

TEST(HelpTest, HiddenFlagsAreAcceptedButNotListed) {
  std::vector<Command> table = Table();
  Command& run = table[0];
  run.flags.erase(std::find(run.flags.begin(), run.flags.end(), "profile"));
  run.hidden_flags = {"profile"};
  absl::StatusOr<ScannedCommandLine> line = Scan({"--profile"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_TRUE(CheckInvocation(run, *line).ok());
  EXPECT_THAT(CommandHelp("collect", run), Not(HasSubstr("--profile")));
  EXPECT_THAT(ToolHelp("collect", table, "", ""), Not(HasSubstr("--profile")));
  // Another mode still refuses it, and its list of flags does not name hidden ones.
  absl::StatusOr<ScannedCommandLine> show_line = Scan({"show", "d", "--profile"});
  ASSERT_TRUE(show_line.ok());
  EXPECT_FALSE(CheckInvocation(table[1], *show_line).ok());
}

}  // namespace
}  // namespace roastcoffea
