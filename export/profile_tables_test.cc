#include "export/profile_tables.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "export/display_width.h"
#include "export/tables.h"
#include "export/test_profile.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using export_internal::DisplayWidth;

using NodeSpec = testing_export::ProfileNodeSpec;

v1::Profile Tree(const std::string& worker, const std::vector<NodeSpec>& nodes,
                 double interval = 0.01) {
  return testing_export::ProfileTree(nodes, "dask", worker, /*root_count=*/0, interval);
}

// main(10) -> a(6) -> c(2); main -> b(3). Exclusive: a 4, b 3, c 2, main 1.
v1::Profile KnownTree(const std::string& worker) {
  return Tree(worker, {{0, "main", 10}, {1, "a", 6}, {1, "b", 3}, {2, "c", 2}});
}

TEST(FormatTextTableTest, ColumnsAlignedInBothStyles) {
  TextTable table{"T", {"Rank", "Name"}, {{"1", "x"}, {"10", "\u00e9t\u00e9"}}, {true, false}};
  TableOptions options;
  for (bool unicode : {true, false}) {
    options.unicode = unicode;
    const std::string text = FormatTextTable(table, options);
    std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 7u) << text;  // title, top, header, rule, 2 rows, bottom
    for (size_t i = 2; i < lines.size(); ++i) {
      EXPECT_EQ(DisplayWidth(lines[i]), DisplayWidth(lines[1])) << text;
    }
    EXPECT_TRUE(absl::StrContains(text, unicode ? "\u2503 Rank \u2503" : "| Rank |")) << text;
    EXPECT_TRUE(absl::StrContains(text, unicode ? "\u2502    1 \u2502 x   " : "|    1 | x   "))
        << text;
  }
}

TEST(ElideStackTest, KeepsRootAndInnermostFrames) {
  const std::vector<std::string> frames = {"root", "aaaa", "bbbb", "cccc", "inner"};
  EXPECT_EQ(ElideStack(frames, 100, true), "root;aaaa;bbbb;cccc;inner");
  EXPECT_EQ(ElideStack(frames, 20, true), "root;\u2026;cccc;inner");
  EXPECT_EQ(ElideStack(frames, 20, false), "root;...;cccc;inner");
  EXPECT_LE(DisplayWidth(ElideStack(frames, 20, false)), 20u);
  // Not even root and innermost fit: the innermost frame, cut at its end.
  const std::vector<std::string> long_frames = {"root", std::string(50, 'x')};
  const std::string elided = ElideStack(long_frames, 12, true);
  EXPECT_EQ(elided, "\u2026;xxxxxxxxx\u2026");
  EXPECT_EQ(DisplayWidth(elided), 12u);
  EXPECT_EQ(ElideStack({}, 10, true), "");
}

TEST(TopStacksTableTest, RankedExclusiveStacks) {
  absl::StatusOr<TextTable> table = TopStacksTable(KnownTree("w1"), "Top Stacks: w1");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->title, "Top Stacks: w1");
  ASSERT_EQ(table->header, (std::vector<std::string>{"Rank", "Samples", "Seconds", "Percent",
                                                     "Innermost Frame", "Stack"}));
  ASSERT_EQ(table->rows.size(), 4u);
  EXPECT_EQ(table->rows[0], (std::vector<std::string>{"1", "4", "0.040", "40.0%", "a", "main;a"}));
  EXPECT_EQ(table->rows[1], (std::vector<std::string>{"2", "3", "0.030", "30.0%", "b", "main;b"}));
  EXPECT_EQ(table->rows[2],
            (std::vector<std::string>{"3", "2", "0.020", "20.0%", "c", "main;a;c"}));
  EXPECT_EQ(table->rows[3], (std::vector<std::string>{"4", "1", "0.010", "10.0%", "main", "main"}));
  ProfileTableOptions options;
  options.top = 2;
  table = TopStacksTable(KnownTree("w1"), "t", options);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->rows.size(), 2u);
}

TEST(TopStacksTableTest, LongFramesElidedAndControlCharactersReplaced) {
  const std::string name =
      "std::vector<std::pair<int, double>>::emplace_back\x1b[31m" + std::string(100, 'z');
  ProfileTableOptions options;
  options.max_frame_width = 30;
  options.max_stack_width = 40;
  options.table.unicode = false;
  absl::StatusOr<TextTable> table =
      TopStacksTable(Tree("w", {{0, "main", 5}, {1, name, 5}}), "t", options);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 1u);
  const std::vector<std::string>& row = table->rows[0];
  EXPECT_EQ(DisplayWidth(row[4]), 30u);
  EXPECT_TRUE(absl::EndsWith(row[4], "...")) << row[4];
  // Unbalanced brackets ("\x1b[31m"): the name is shown as it is, elided.
  EXPECT_TRUE(absl::StartsWith(row[4], "std::vector<std::pair<int")) << row[4];
  EXPECT_LE(DisplayWidth(row[5]), 40u);
  for (const std::string& cell : row) EXPECT_FALSE(absl::StrContains(cell, "\x1b")) << cell;
}

// One frame named `name` at every level of a `depth`-deep chain, one sample at each level
// (a Dask tree whose frames share an identifier has this shape).
v1::Profile SharedFrameChain(int depth, const std::string& name) {
  v1::Profile p;
  p.set_source("dask");
  p.set_sampling_interval_seconds(0.01);
  p.add_frames()->set_function(name);
  for (int i = 0; i <= depth; ++i) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(i - 1);
    node->set_frame(i == 0 ? -1 : 0);
    node->set_count(depth - i + 1);
  }
  return p;
}

TEST(TopStacksTableTest, DeepStacksSayHowManyFramesAreLeftOut) {
  // Every count 1: the only stack is the 100,000-deep one.
  v1::Profile deep = SharedFrameChain(100000, "f");
  for (v1::ProfileNode& node : *deep.mutable_nodes()) node.set_count(1);
  ProfileTableOptions options;
  options.max_stack_width = 1 << 20;  // wide enough to show all that is kept
  options.table.unicode = false;
  absl::StatusOr<TextTable> table = TopStacksTable(deep, "t", options);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 1u);
  const std::string& stack = table->rows[0][5];
  // The outermost frame, then the 32,768 innermost ones whose labels (full and short, 2 bytes
  // each) fit in ProfileAnalysisOptions::max_stack_bytes.
  EXPECT_TRUE(absl::StartsWith(stack, "f;(67,231 frames left out);f;f;")) << stack.substr(0, 80);
  EXPECT_EQ(stack.size(), std::string("f;(67,231 frames left out);").size() + 2 * 32768 - 1);
}

TEST(FormatProfileTablesTest, MegabyteFrameNamesStayBounded) {
  v1::Measurement measurement;
  *measurement.add_profiles() = SharedFrameChain(240, std::string(size_t{1} << 20, 'F'));
  ProfileTableOptions options;
  options.table.unicode = false;
  absl::StatusOr<std::string> text = FormatProfileTables(measurement, options);
  ASSERT_TRUE(text.ok()) << text.status();
  // A header, 2 tables of at most 20 rows of bounded cells.
  EXPECT_LT(text->size(), size_t{16} << 10);
  EXPECT_TRUE(absl::StrContains(*text, "FFF...")) << *text;
}

TEST(TopStacksTableTest, InconsistentProfileNamesTheTable) {
  const absl::StatusOr<TextTable> table =
      TopStacksTable(Tree("w", {{0, "main", 1}, {1, "a", 5}}), "Top Stacks: w");
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::StrContains(table.status().message(), "Top Stacks: w"));
}

TEST(ProfileHeaderTest, DescribesTheWorker) {
  v1::Profile profile = KnownTree("tcp://10.0.0.5:4123");
  profile.set_worker_name("w-1");
  profile.set_host("node\n7");
  profile.set_threads(4);
  profile.set_memory_limit_bytes(2LL << 30);
  profile.set_task_prefix("process");
  profile.set_lost_samples(3);
  EXPECT_EQ(ProfileHeader(profile),
            "Worker tcp://10.0.0.5:4123 (name w-1) on node?7: source dask; wall-clock samples "
            "(include sleep and waits); 4 threads; memory "
            "limit 2.00 GiB; task prefix process; sampling interval 10 ms; 10 samples = 0.100 s; "
            "3 lost");
  v1::Profile merged = KnownTree("");
  merged.set_sampling_interval_seconds(2);
  merged.set_source("");
  EXPECT_EQ(ProfileHeader(merged), "All workers: sampling interval 2 s; 10 samples = 20.000 s");
}

// Function names use the width they are given: at 200 columns a long name is not cut at 56.
TEST(FitProfileTablesToWidthTest, NamesUseTheTerminalsWidth) {
  const std::string name(120, 'f');
  v1::Profile profile = Tree("w", {{0, name, 10}});
  ProfileTableOptions options;
  options.table.unicode = false;
  options.table.width = 200;
  FitProfileTablesToWidth(200, &options);
  EXPECT_EQ(options.max_function_width, 147);
  absl::StatusOr<TextTable> table = TopFunctionsTable(profile, "f", options);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(table->rows[0][5], name);
  const std::string text = FormatTextTable(*table, options.table);
  for (absl::string_view line : absl::StrSplit(text, '\n')) EXPECT_LE(line.size(), 200u) << line;
  // A narrow terminal keeps the defaults (the table itself is shrunk to fit).
  FitProfileTablesToWidth(60, &options);
  EXPECT_EQ(options.max_function_width, ProfileTableOptions().max_function_width);
  EXPECT_EQ(options.max_frame_width, ProfileTableOptions().max_frame_width);
  EXPECT_EQ(options.max_stack_width, ProfileTableOptions().max_stack_width);
  ProfileTableOptions untouched;
  FitProfileTablesToWidth(0, &untouched);
  EXPECT_EQ(untouched.max_function_width, ProfileTableOptions().max_function_width);
}

// The header says what a sample counts: wall clock (Dask) or CPU time (thread pool).
TEST(ProfileHeaderTest, SaysWhatASampleCounts) {
  v1::Profile dask = KnownTree("w");
  EXPECT_TRUE(absl::StrContains(ProfileHeader(dask), "wall-clock samples")) << ProfileHeader(dask);
  v1::Profile threadpool = KnownTree("w");
  threadpool.set_source("threadpool");
  EXPECT_TRUE(absl::StrContains(ProfileHeader(threadpool), "CPU-time samples"));
}

// A threadpool-like stack: thread entry, executor, chunk tracking, then the processor.
v1::Profile ThreadpoolTree() {
  v1::Profile profile = testing_export::ProfileTree(
      {
          {0, "start_thread", 10},
          {1, "roastcoffea::ThreadPoolExecutor::WorkerLoop(int)", 10},
          {2, "roastcoffea::instrumentation_internal::TrackChunkErased(int)", 10},
          {3, "ns::Processor<double>::Process(ns::Item const&) const", 10},
          {4, "double ns::Dijet<4>(ns::Jets const&)", 6},
          {0, "(truncated stack)", 2},
          {6, "memcpy", 2},
      },
      "threadpool", "vm:1/thread-0");
  return profile;
}

TEST(TopFunctionsTableTest, SelfAndTotalWithShortNames) {
  ProfileTableOptions options;
  absl::StatusOr<TextTable> table = TopFunctionsTable(ThreadpoolTree(), "f", options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->header, (std::vector<std::string>{"Rank", "Self s", "Self %", "Total s",
                                                     "Total %", "Function"}));
  ASSERT_GE(table->rows.size(), 3u);
  EXPECT_EQ(table->rows[0],
            (std::vector<std::string>{"1", "0.060", "50.0%", "0.060", "50.0%", "ns::Dijet"}));
  EXPECT_EQ(table->rows[1], (std::vector<std::string>{"2", "0.040", "33.3%", "0.100", "83.3%",
                                                      "ns::Processor::Process"}));
  // The executor frames are collapsed away by default...
  for (const auto& row : table->rows) {
    EXPECT_FALSE(absl::StrContains(row[5], "WorkerLoop")) << row[5];
  }
  // ...and shown on request.
  options.show_wrapper_frames = true;
  table = TopFunctionsTable(ThreadpoolTree(), "f", options);
  ASSERT_TRUE(table.ok());
  bool executor = false;
  for (const auto& row : table->rows) {
    executor |= row[5] == "roastcoffea::ThreadPoolExecutor::WorkerLoop";
  }
  EXPECT_TRUE(executor);
}

TEST(TopStacksTableTest, StacksStartAtTheProcessor) {
  absl::StatusOr<TextTable> table = TopStacksTable(ThreadpoolTree(), "t");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->rows.size(), 3u);
  EXPECT_EQ(table->rows[0][5], "ns::Processor::Process;ns::Dijet");
  EXPECT_EQ(table->rows[1][5], "ns::Processor::Process");
  EXPECT_EQ(table->rows[2][5], "(truncated stack);memcpy");
}

TEST(ProfileHeaderTest, CountsTruncatedStacks) {
  EXPECT_TRUE(absl::StrContains(ProfileHeader(ThreadpoolTree()),
                                "12 samples = 0.120 s; 2 truncated stacks (16.7 %)"))
      << ProfileHeader(ThreadpoolTree());
}

TEST(FormatProfileTablesTest, MergedThenPerWorker) {
  v1::Measurement measurement;
  *measurement.add_profiles() = KnownTree("w1");
  *measurement.add_profiles() = Tree("w2", {{0, "main", 10}, {1, "b", 10}});
  // Restricted to a task prefix: shown, but not merged (w1's whole profile covers it).
  v1::Profile prefix = KnownTree("w1");
  prefix.set_task_prefix("process");
  *measurement.add_profiles() = prefix;
  EXPECT_EQ(ProfilesToMerge(measurement).size(), 2u);

  ProfileTableOptions options;
  options.table.unicode = false;
  absl::StatusOr<std::string> text = FormatProfileTables(measurement, options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "Worker w1: source dask;")) << *text;
  // The merged tables come first: what one reads first.
  EXPECT_LT(text->find("Top Functions (all workers)"), text->find("Top Functions: w1\n"));
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks: w1\n")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks: w2\n")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks: w1 [process]")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "Top Functions: w1\n")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "Top Functions (all workers)")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks (all workers)")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "(merged over 2 profiles)")) << *text;
  // Merged: main;b has 3 + 10 = 13 of 20 samples.
  EXPECT_TRUE(absl::StrContains(
      *text, "|    1 |      13 |   0.130 |   65.0% | b               | main;b   |"))
      << *text;
  EXPECT_FALSE(absl::StrContains(*text, "\u2502"));

  absl::StatusOr<v1::Profile> merged = MergedProfile(measurement);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(merged->worker().empty());

  // Sampling intervals that disagree cannot be merged: the error says so.
  measurement.mutable_profiles(1)->set_sampling_interval_seconds(0.02);
  text = FormatProfileTables(measurement, options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks: w2\n")) << *text;
  EXPECT_TRUE(absl::StartsWith(*text, "No table merged over workers: ")) << *text;
  EXPECT_FALSE(absl::StrContains(*text, "Top Stacks (all workers)")) << *text;
  // Every profile restricted: all of them are merged.
  v1::Measurement restricted;
  *restricted.add_profiles() = prefix;
  EXPECT_EQ(ProfilesToMerge(restricted).size(), 1u);
  EXPECT_EQ(ProfilesToMerge(v1::Measurement()).size(), 0u);
  EXPECT_FALSE(MergedProfile(v1::Measurement()).ok());
  text = FormatProfileTables(v1::Measurement(), options);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "");
}

// Issue #16: one profile whose node names itself as parent made `collect profile` fail with a
// message naming no input. It is left out with a warning naming the directory and the profile,
// and the other profiles are still shown.
TEST(LeaveOutCorruptProfilesTest, RemovesOnlyTheCorruptOnesAndNamesThem) {
  v1::Measurement measurement;
  *measurement.add_profiles() = KnownTree("w1");
  v1::Profile corrupt = Tree("vm:19370/thread-0", {{0, "main", 10}, {1, "b", 10}});
  corrupt.mutable_nodes(2)->set_parent(2);
  *measurement.add_profiles() = corrupt;
  *measurement.add_profiles() = Tree("w3", {{0, "main", 10}, {1, "b", 10}});
  const std::vector<std::string> warnings = LeaveOutCorruptProfiles(&measurement, "/runs/m");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "/runs/m: profile 1 (vm:19370/thread-0) is corrupt and left out: profile node 2: "
            "parent 2 does not come before it (parents first)");
  ASSERT_EQ(measurement.profiles_size(), 2);
  EXPECT_EQ(measurement.profiles(0).worker(), "w1");
  EXPECT_EQ(measurement.profiles(1).worker(), "w3");
  ProfileTableOptions options;
  options.table.unicode = false;
  absl::StatusOr<std::string> text = FormatProfileTables(measurement, options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "Top Stacks: w3\n")) << *text;
}

}  // namespace
}  // namespace roastcoffea
