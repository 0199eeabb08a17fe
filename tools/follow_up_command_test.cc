#include "tools/follow_up_command.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(ShellQuoteTest, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(ShellQuote("show"), "show");
  EXPECT_EQ(ShellQuote("measurements/2026-11-22T08-15-03Z"), "measurements/2026-11-22T08-15-03Z");
  EXPECT_EQ(ShellQuote("//tools:collect"), "//tools:collect");
}

TEST(ShellQuoteTest, SpacesQuotesAndDollarsAreQuoted) {
  EXPECT_EQ(ShellQuote("my run"), "'my run'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME/x"), "'$HOME/x'");
  EXPECT_EQ(ShellQuote("a\"b`c"), "'a\"b`c'");
  EXPECT_EQ(ShellQuote("*"), "'*'");
  EXPECT_EQ(ShellQuote(""), "''");
}

LaunchContext Bazel(const std::string& workspace, const std::string& working) {
  LaunchContext context;
  context.argv0 = "/cache/execroot/bazel-out/k8-fastbuild/bin/tools/collect";
  context.workspace_directory = workspace;
  context.working_directory = working;
  return context;
}

TEST(FollowUpCommandTest, UnderBazelRunFromTheWorkspace) {
  const LaunchContext context = Bazel("/home/u/roastcoffea", "/home/u/roastcoffea");
  EXPECT_EQ(FollowUpCommand(context,
                            {"show", DisplayPath(context, "/home/u/roastcoffea/measurements/r 1")}),
            "./bazelw run //tools:collect -- show 'measurements/r 1'");
}

TEST(FollowUpCommandTest, UnderBazelRunFromASubdirectory) {
  const LaunchContext context = Bazel("/home/u/roastcoffea", "/home/u/roastcoffea/a/b");
  EXPECT_EQ(FollowUpCommand(context, {"show", DisplayPath(context, "/tmp/m/x")}),
            "../../bazelw run //tools:collect -- show /tmp/m/x");
}

TEST(FollowUpCommandTest, UnderBazelRunFromOutsideTheWorkspace) {
  LaunchContext context = Bazel("/home/u/my ws", "/tmp");
  EXPECT_EQ(FollowUpCommand(context, {"show", DisplayPath(context, "/tmp/m")}),
            "'/home/u/my ws/bazelw' run //tools:collect -- show m");
  context.workspace_has_bazelw = false;
  EXPECT_EQ(FollowUpCommand(context, {"profile", "m"}), "bazel run //tools:collect -- profile m");
}

TEST(FollowUpCommandTest, OtherwiseArgv0AsTyped) {
  LaunchContext context;
  context.argv0 = "./bazel-bin/tools/collect";
  context.working_directory = "/work";
  EXPECT_EQ(FollowUpCommand(context, {"show", DisplayPath(context, "/work/measurements/it's $1")}),
            "./bazel-bin/tools/collect show 'measurements/it'\\''s $1'");
  context.argv0 = "/opt/my tools/collect";
  EXPECT_EQ(FollowUpCommand(context, {"show", "/data/run"}),
            "'/opt/my tools/collect' show /data/run");
}

TEST(DisplayPathTest, RelativeOnlyBelowTheWorkingDirectory) {
  LaunchContext context;
  context.working_directory = "/work/";
  EXPECT_EQ(DisplayPath(context, "/work/m/r"), "m/r");
  EXPECT_EQ(DisplayPath(context, "/work"), ".");
  EXPECT_EQ(DisplayPath(context, "/workshop/m"), "/workshop/m");
  EXPECT_EQ(DisplayPath(context, "relative/m"), "relative/m");
  context.working_directory = "/";
  EXPECT_EQ(DisplayPath(context, "/m/r"), "m/r");
}

}  // namespace
}  // namespace roastcoffea
