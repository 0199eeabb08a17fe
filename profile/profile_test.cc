#include "profile/profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct N {
  int parent;
  int frame;
  int64_t count;
};

// Frames carry only a function name, so a frame's label is that name.
v1::Profile Make(const std::vector<std::string>& functions, const std::vector<N>& nodes,
                 double interval = 0.01) {
  v1::Profile p;
  p.set_sampling_interval_seconds(interval);
  for (const std::string& f : functions) p.add_frames()->set_function(f);
  for (const N& n : nodes) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(n.parent);
    node->set_frame(n.frame);
    node->set_count(n.count);
  }
  return p;
}

// root 10 -> main 10 -> {load 4 -> read 3, compute 5}
v1::Profile Simple() {
  return Make({"main", "load", "compute", "read"},
              {{-1, -1, 10}, {0, 0, 10}, {1, 1, 4}, {2, 3, 3}, {1, 2, 5}});
}

std::vector<std::string> Folded(const std::vector<RankedStack>& stacks) {
  std::vector<std::string> out;
  for (const RankedStack& s : stacks) out.push_back(absl::StrCat(s.folded, "=", s.samples));
  return out;
}

TEST(ProfileTest, SimpleTreeInclusiveExclusive) {
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(Simple());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_samples, 10);
  EXPECT_DOUBLE_EQ(a->seconds_per_sample, 0.01);
  EXPECT_DOUBLE_EQ(a->total_seconds, 0.1);
  ASSERT_EQ(a->nodes.size(), 5u);
  // incl: root 10, main 10, load 4, read 3, compute 5.
  // excl: root 10-10 = 0, main 10-(4+5) = 1, load 4-3 = 1, read 3, compute 5 (sum 10).
  const int64_t incl[] = {10, 10, 4, 3, 5};
  const int64_t excl[] = {0, 1, 1, 3, 5};
  const int depth[] = {0, 1, 2, 3, 2};
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a->nodes[i].inclusive_samples, incl[i]);
    EXPECT_EQ(a->nodes[i].exclusive_samples, excl[i]);
    EXPECT_EQ(a->nodes[i].depth, depth[i]);
    EXPECT_DOUBLE_EQ(a->nodes[i].inclusive_percent, incl[i] * 10.0);
    EXPECT_DOUBLE_EQ(a->nodes[i].exclusive_percent, excl[i] * 10.0);
    EXPECT_DOUBLE_EQ(a->nodes[i].inclusive_seconds, incl[i] * 0.01);
    EXPECT_DOUBLE_EQ(a->nodes[i].exclusive_seconds, excl[i] * 0.01);
  }
  EXPECT_EQ(a->nodes[3].parent, 2);
  EXPECT_EQ(a->nodes[3].frame, 3);
  EXPECT_EQ(a->nodes[0].parent, -1);
  EXPECT_EQ(a->nodes[0].frame, -1);
  // compute 5, read 3, then the ties at 1 by folded string: "main" < "main;load".
  EXPECT_THAT(Folded(a->top_stacks),
              ElementsAre("main;compute=5", "main;load;read=3", "main=1", "main;load=1"));
  EXPECT_THAT(a->top_stacks[1].frames, ElementsAre("main", "load", "read"));
  EXPECT_DOUBLE_EQ(a->top_stacks[0].seconds, 0.05);
  EXPECT_DOUBLE_EQ(a->top_stacks[0].percent, 50);

  absl::StatusOr<std::string> folded = FoldedStacks(Simple());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(*folded, "main 1\nmain;compute 5\nmain;load 1\nmain;load;read 3\n");
}

TEST(ProfileTest, RootCountZeroMeansSumOfChildren) {
  // root 0 -> {a 3, b 2 -> c 2}: total 3 + 2 = 5; root incl 5, excl 0; b excl 0, c 2.
  const v1::Profile p = Make({"a", "b", "c"}, {{-1, -1, 0}, {0, 0, 3}, {0, 1, 2}, {2, 2, 2}});
  ASSERT_TRUE(ValidateProfile(p).ok());
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_samples, 5);
  EXPECT_EQ(a->nodes[0].inclusive_samples, 5);
  EXPECT_EQ(a->nodes[0].exclusive_samples, 0);
  EXPECT_DOUBLE_EQ(a->nodes[0].inclusive_percent, 100);
  EXPECT_DOUBLE_EQ(a->nodes[1].inclusive_percent, 60);
  EXPECT_EQ(a->nodes[2].exclusive_samples, 0);
  EXPECT_DOUBLE_EQ(a->nodes[3].exclusive_percent, 40);
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("a=3", "b;c=2"));
}

TEST(ProfileTest, SampleCountAgreesWithTheAnalysisWithoutAnalysing) {
  // The root's count when given; else every child of the root, not just the first one.
  EXPECT_EQ(ProfileSampleCount(Simple()), 10);
  const v1::Profile zero_root =
      Make({"a", "b", "c"}, {{-1, -1, 0}, {0, 0, 3}, {0, 1, 2}, {2, 2, 2}});
  EXPECT_EQ(ProfileSampleCount(zero_root), 5);
  EXPECT_EQ(ProfileSampleCount(zero_root), AnalyzeProfile(zero_root)->total_samples);
  EXPECT_EQ(ProfileSampleCount(v1::Profile()), 0);
  const v1::Profile huge = Make({"a", "b"}, {{-1, -1, 0},
                                             {0, 0, std::numeric_limits<int64_t>::max()},
                                             {0, 1, std::numeric_limits<int64_t>::max()}});
  EXPECT_EQ(ProfileSampleCount(huge), std::numeric_limits<int64_t>::max());
}

TEST(ProfileTest, SamplesEndingAtTheRootHaveNoStack) {
  // root 10 -> a 6: root excl 10-6 = 4 (40 %), a 6 (60 %); only "a" is a stack.
  const v1::Profile p = Make({"a"}, {{-1, -1, 10}, {0, 0, 6}});
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_samples, 10);
  EXPECT_EQ(a->nodes[0].exclusive_samples, 4);
  EXPECT_DOUBLE_EQ(a->nodes[0].exclusive_percent + a->nodes[1].exclusive_percent, 100);
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("a=6"));
  EXPECT_DOUBLE_EQ(a->top_stacks[0].percent, 60);
  EXPECT_EQ(*FoldedStacks(p), "a 6\n");
}

TEST(ProfileTest, ZeroIntervalGivesZeroSecondsNotNan) {
  v1::Profile p = Simple();
  p.set_sampling_interval_seconds(0);
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_seconds, 0);
  EXPECT_EQ(a->nodes[1].inclusive_seconds, 0);
  EXPECT_EQ(a->top_stacks[0].seconds, 0);
  EXPECT_DOUBLE_EQ(a->top_stacks[0].percent, 50);
}

TEST(ProfileTest, EmptyAndZeroSampleProfiles) {
  const v1::Profile empty;
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(empty);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_samples, 0);
  EXPECT_TRUE(a->nodes.empty());
  EXPECT_EQ(*FoldedStacks(empty), "");

  // All counts 0: percents are 0, not NaN, and nothing is a stack.
  const v1::Profile zero = Make({"a"}, {{-1, -1, 0}, {0, 0, 0}});
  a = AnalyzeProfile(zero);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->nodes[1].inclusive_percent, 0);
  EXPECT_TRUE(a->top_stacks.empty());
  EXPECT_EQ(*FoldedStacks(zero), "");
}

// A chain root -> f -> f -> ... of `nodes` nodes (deepest depth nodes - 1), every count 7:
// all exclusive counts are 0 except the leaf's 7.
v1::Profile Chain(int nodes) {
  v1::Profile p;
  p.add_frames()->set_function("f");
  p.mutable_nodes()->Reserve(nodes);
  for (int i = 0; i < nodes; ++i) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(i - 1);
    node->set_frame(i == 0 ? -1 : 0);
    node->set_count(7);
  }
  return p;
}

TEST(ProfileTest, DeepChainWithinTheLimitWorks) {
  constexpr int kNodes = 200'000;
  const v1::Profile p = Chain(kNodes);
  ProfileAnalysisOptions options;
  options.max_depth = kNodes - 1;
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p, options);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->total_samples, 7);
  EXPECT_EQ(a->nodes.back().depth, kNodes - 1);
  EXPECT_EQ(a->nodes.back().exclusive_samples, 7);
  EXPECT_EQ(a->nodes[kNodes / 2].exclusive_samples, 0);
  ASSERT_EQ(a->top_stacks.size(), 1u);
  // The stack keeps its outermost frame and the innermost ones within max_stack_bytes
  // (64 KiB of labels "f" and short labels "f": 2 bytes a frame).
  EXPECT_EQ(a->top_stacks[0].depth, kNodes - 1);
  EXPECT_EQ(a->top_stacks[0].frames.size(), 1u + (64u << 10) / 2);
  EXPECT_EQ(a->top_stacks[0].frames_left_out,
            static_cast<int64_t>(kNodes - 1 - a->top_stacks[0].frames.size()));
  EXPECT_EQ(a->top_stacks[0].short_frames.size(), a->top_stacks[0].frames.size());
  EXPECT_EQ(a->top_stacks[0].samples, 7);

  absl::StatusOr<std::string> folded = FoldedStacks(p, options);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // kNodes - 1 frames "f" joined by ';', then " 7\n".
  EXPECT_EQ(folded->size(), static_cast<size_t>(2 * (kNodes - 1) - 1 + 3));
  EXPECT_EQ(folded->substr(folded->size() - 7), ";f;f 7\n");

  absl::StatusOr<v1::Profile> parsed = ParseFoldedStacks(*folded, 0);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->nodes_size(), kNodes);
  EXPECT_EQ(*FoldedStacks(*parsed, options), *folded);

  absl::StatusOr<v1::Profile> merged = MergeProfiles({p, *parsed}, options);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->nodes_size(), kNodes);
  EXPECT_EQ(merged->nodes(kNodes - 1).count(), 14);
}

TEST(ProfileTest, DeepChainOverTheLimitIsRefused) {
  constexpr int kNodes = 200'000;
  const v1::Profile p = Chain(kNodes);
  ProfileAnalysisOptions options;
  options.max_depth = kNodes - 2;
  for (const absl::Status& status :
       {ValidateProfile(p, options), AnalyzeProfile(p, options).status(),
        FoldedStacks(p, options).status(), MergeProfiles({p}, options).status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("node 199999: depth 199999 exceeds the limit"));
  }
  // The default limit (100,000) refuses it too.
  EXPECT_THAT(ValidateProfile(p).message(), HasSubstr("node 100001: depth 100001"));
}

TEST(ProfileTest, MillionDeepChainWhenAllowed) {
  constexpr int kNodes = 1'000'001;
  ProfileAnalysisOptions options;
  options.max_depth = kNodes - 1;
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(Chain(kNodes), options);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->nodes.back().depth, 1'000'000);
  EXPECT_EQ(a->top_stacks[0].depth, 1'000'000);
  EXPECT_EQ(a->top_stacks[0].frames_left_out,
            1'000'000 - static_cast<int64_t>(a->top_stacks[0].frames.size()));
}

// A chain with one sample at every level: line k is k frames, so the text is quadratic.
v1::Profile SampledChain(int depth, const std::string& label) {
  v1::Profile p;
  p.add_frames()->set_function(label);
  for (int i = 0; i <= depth; ++i) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(i - 1);
    node->set_frame(i == 0 ? -1 : 0);
    node->set_count(depth - i + 1);
  }
  return p;
}

TEST(ProfileTest, FoldedStacksWithinABudget) {
  // "f 1\n" (4 bytes), "f;f 1\n" (6), "f;f;f 1\n" (8), ...
  const v1::Profile p = SampledChain(5, "f");
  absl::StatusOr<BoundedFoldedText> folded = BoundedFoldedStacks(p, 10);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->text, "f 1\nf;f 1\n");
  EXPECT_EQ(folded->stacks_left_out, 3);
  EXPECT_EQ(folded->samples_left_out, 3);
  EXPECT_EQ(BoundedFoldedStacks(p, 1000)->text, *FoldedStacks(p));
  EXPECT_EQ(BoundedFoldedStacks(p, 1000)->stacks_left_out, 0);
  ProfileAnalysisOptions options;
  options.max_folded_bytes = 10;
  const absl::Status refused = FoldedStacks(p, options).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("3 stacks would not fit"));
}

// Reliability study D6: a 30,000-deep chain of 1000-byte labels (288 KB saved) made
// `collect profile` reserve ~450 GB and abort; 40,000 one-letter frames wrote 1.6 GB per file.
TEST(ProfileTest, HostileDeepChainsStayWithinTheBudget) {
  for (const auto& [depth, label] :
       {std::make_pair(30000, std::string(1000, 'x')), std::make_pair(40000, std::string("f"))}) {
    absl::StatusOr<BoundedFoldedText> folded =
        BoundedFoldedStacks(SampledChain(depth, label), int64_t{4} << 20);
    ASSERT_TRUE(folded.ok()) << folded.status();
    EXPECT_LE(folded->text.size(), size_t{4} << 20);
    EXPECT_GT(folded->stacks_left_out, 0);
    EXPECT_EQ(folded->stacks_left_out +
                  static_cast<int64_t>(std::count(folded->text.begin(), folded->text.end(), '\n')),
              depth);
  }
}

// Issue #16: a Dask tree 240 deep whose every level is one frame with a 1 MB name made
// `collect profile` write and scan gigabytes. Labels are cut, so the folded text and the
// ranked stacks are bounded by the cut label, not by the name.
TEST(ProfileTest, HugeFrameNamesAreCutWhereTheyRepeat) {
  constexpr int kDepth = 240;
  const std::string name(size_t{1} << 20, 'F');
  const v1::Profile p = SampledChain(kDepth, name);
  const std::string label = CutFrameName(name);
  ASSERT_EQ(label.size(), kMaxFrameNameBytes + std::string("...[+1047552 bytes]").size());
  absl::StatusOr<std::string> folded = FoldedStacks(p);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // Line k: k labels, k - 1 ';', " 1\n".
  size_t expected = 0;
  for (size_t k = 1; k <= kDepth; ++k) expected += k * label.size() + (k - 1) + 3;
  EXPECT_EQ(folded->size(), expected);
  EXPECT_EQ(folded->find(name.substr(0, kMaxFrameNameBytes + 1)), std::string::npos);

  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->top_stacks.size(), 20u);
  for (const RankedStack& stack : a->top_stacks) {
    size_t bytes = 0;
    for (const std::string& frame : stack.frames) bytes += frame.size();
    for (const std::string& frame : stack.short_frames) bytes += frame.size();
    // The budget plus the outermost and innermost frames, which are always kept.
    EXPECT_LE(bytes, ProfileAnalysisOptions().max_stack_bytes + 4 * label.size());
    EXPECT_EQ(static_cast<int64_t>(stack.frames.size()) + stack.frames_left_out, stack.depth);
    EXPECT_EQ(stack.frames.back(), label);
  }
}

TEST(ProfileTest, FrameNamesAreCutAtAUtf8Boundary) {
  const std::string exact(kMaxFrameNameBytes, 'a');
  EXPECT_EQ(CutFrameName(exact), exact);
  EXPECT_EQ(CutFrameName(exact + "b"), exact + "...[+1 bytes]");
  // "é" (2 bytes) straddling the cut is left out whole.
  const std::string straddling = std::string(kMaxFrameNameBytes - 1, 'a') + "\xC3\xA9" + "zz";
  EXPECT_EQ(CutFrameName(straddling), std::string(kMaxFrameNameBytes - 1, 'a') + "...[+4 bytes]");
  // Function and file are cut each; the line number stays.
  v1::ProfileFrame frame;
  frame.set_function(std::string(5000, 'f'));
  frame.set_file(std::string(3000, 'p'));
  frame.set_line_number(7);
  EXPECT_EQ(FrameLabel(frame),
            absl::StrCat(std::string(kMaxFrameNameBytes, 'f'), "...[+3976 bytes] (",
                         std::string(kMaxFrameNameBytes, 'p'), "...[+1976 bytes]:7)"));
  // Names cut alike but of different lengths stay apart.
  v1::Profile p;
  p.add_frames()->set_function(std::string(5000, 'f'));
  p.add_frames()->set_function(std::string(6000, 'f'));
  EXPECT_NE(FrameLabel(p.frames(0)), FrameLabel(p.frames(1)));
}

// Frames 0 "a", 1 "b", 2 "a", 3 "b" (duplicate labels under different indices):
//   n0 root 10 -> n1 a 10 -> {n2 b 8 -> n3 a 6 -> n4 b 4,  n5 b 2}
// excl: n1 10-(8+2) = 0, n2 8-6 = 2, n3 6-4 = 2, n4 4, n5 2.
// By label path: "a;b" = n2 + n5 = 4, "a;b;a" = 2, "a;b;a;b" = 4 (a recursion cycle: the same
// labels at a different depth are a different stack).
v1::Profile Cycles() {
  return Make({"a", "b", "a", "b"},
              {{-1, -1, 10}, {0, 0, 10}, {1, 1, 8}, {2, 2, 6}, {3, 3, 4}, {1, 3, 2}});
}

TEST(ProfileTest, IdenticalStacksAreSummedByLabelPath) {
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(Cycles());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->nodes[2].exclusive_samples, 2);  // nodes stay per node
  EXPECT_EQ(a->nodes[5].exclusive_samples, 2);
  EXPECT_EQ(a->nodes[4].depth, 4);
  // Tie at 4: "a;b" < "a;b;a;b".
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("a;b=4", "a;b;a;b=4", "a;b;a=2"));
  EXPECT_DOUBLE_EQ(a->top_stacks[0].percent, 40);
  EXPECT_EQ(*FoldedStacks(Cycles()), "a;b 4\na;b;a 2\na;b;a;b 4\n");
}

TEST(ProfileTest, DuplicateSiblingsMergeTheirChildren) {
  // Frames 0 "a", 1 "c", 2 "a", 3 "d", 4 "c":
  //   root 10 -> {n1 a 4 -> n2 c 3,  n3 a 6 -> {n4 c 2, n5 d 3}}
  // excl: n1 4-3 = 1, n2 3, n3 6-5 = 1, n4 2, n5 3. By path: a 1+1 = 2, a;c 3+2 = 5, a;d 3.
  const v1::Profile p = Make({"a", "c", "a", "d", "c"},
                             {{-1, -1, 10}, {0, 0, 4}, {1, 1, 3}, {0, 2, 6}, {3, 4, 2}, {3, 3, 3}});
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("a;c=5", "a;d=3", "a=2"));
  EXPECT_EQ(*FoldedStacks(p), "a 2\na;c 5\na;d 3\n");
  absl::StatusOr<v1::Profile> merged = MergeProfiles({p});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->nodes_size(), 4);  // root, a, a;c, a;d
  EXPECT_EQ(merged->nodes(1).count(), 10);
  EXPECT_EQ(*FoldedStacks(*merged), *FoldedStacks(p));
}

TEST(ProfileTest, RankingTiesAndTruncation) {
  // Equal counts order by the folded string's bytes: ' ' (0x20) < '0' (0x30) < ';' (0x3b), so
  // "f x" < "f0" < "f;g" although the label "f" alone sorts before "f x" and "f0".
  const v1::Profile p = Make({"f", "g", "f x", "f0", "z"}, {{-1, -1, 0},
                                                            {0, 0, 1},    // f     (excl 1 - 1 = 0)
                                                            {1, 1, 1},    // f;g   1
                                                            {0, 2, 1},    // f x   1
                                                            {0, 3, 1},    // f0    1
                                                            {0, 4, 3}});  // z     3
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("z=3", "f x=1", "f0=1", "f;g=1"));
  ProfileAnalysisOptions two;
  two.top_stacks = 2;
  a = AnalyzeProfile(p, two);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Folded(a->top_stacks), ElementsAre("z=3", "f x=1"));
  two.top_stacks = 0;
  a = AnalyzeProfile(p, two);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->top_stacks.empty());
  EXPECT_EQ(a->total_samples, 6);  // 1 + 1 + 1 + 3 (f's 1 includes f;g's)

  // FoldedStacks is in the same byte order as sorting its lines.
  const std::string folded = *FoldedStacks(p);
  EXPECT_EQ(folded, "f x 1\nf0 1\nf;g 1\nz 3\n");
  std::vector<std::string> lines = absl::StrSplit(folded, '\n', absl::SkipEmpty());
  std::vector<std::string> sorted = lines;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(lines, sorted);
}

TEST(ProfileTest, ManyTiesAreRankedByFoldedString) {
  // 300,000 stacks of 1 sample with 60-byte labels: too many tied bytes to compare strings,
  // so the ranking orders the whole tree. Expected: the byte order of the folded strings.
  //   root 0 -> {x 2 -> y 1, "x z" 1, x0 1, y1000000-.. 1, y999999-.. 1, ..., y700001-.. 1}
  // x's excl is 2 - 1 = 1: "x" < "x z" < "x0" < "x;y" < "y1000000-.." < "y700001-.." (bytes:
  // ' ' < '0' < ';' < 'y', and '1' < '7').
  std::vector<std::string> functions = {"x", "y", "x z", "x0"};
  std::vector<N> nodes = {{-1, -1, 0}, {0, 0, 2}, {1, 1, 1}, {0, 2, 1}, {0, 3, 1}};
  constexpr int kBulk = 300'000;
  for (int i = 0; i < kBulk; ++i) {
    // Descending indices, so node order is not byte order.
    functions.push_back(absl::StrCat("y", 1'000'000 - i, std::string(52, '-')));
    nodes.push_back({0, static_cast<int>(functions.size()) - 1, 1});
  }
  ProfileAnalysisOptions options;
  options.top_stacks = 6;
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(Make(functions, nodes), options);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string dashes(52, '-');
  EXPECT_THAT(Folded(a->top_stacks),
              ElementsAre("x=1", "x z=1", "x0=1", "x;y=1", absl::StrCat("y1000000", dashes, "=1"),
                          absl::StrCat("y700001", dashes, "=1")));
}

TEST(ProfileTest, PercentsSumToOneHundred) {
  // A bushy tree with irregular counts: leaves get counts, parents add 1 + their children's.
  v1::Profile p;
  p.set_sampling_interval_seconds(0.005);
  for (int f = 0; f < 7; ++f) p.add_frames()->set_function(absl::StrCat("fn", f));
  constexpr int kNodes = 500;
  std::vector<int64_t> count(kNodes, 0);
  std::vector<int> parent(kNodes, -1);
  std::mt19937 rng(8);
  for (int i = 1; i < kNodes; ++i) parent[i] = static_cast<int>(rng() % i);  // an earlier node
  for (int i = kNodes - 1; i >= 0; --i) {
    count[i] += 1 + i % 5;
    if (i > 0) count[parent[i]] += count[i];
  }
  for (int i = 0; i < kNodes; ++i) {
    v1::ProfileNode* node = p.add_nodes();
    node->set_parent(parent[i]);
    node->set_frame(i == 0 ? -1 : i % 7);
    node->set_count(count[i]);
  }
  ProfileAnalysisOptions options;
  options.top_stacks = kNodes;
  absl::StatusOr<ProfileAnalysis> a = AnalyzeProfile(p, options);
  ASSERT_TRUE(a.ok()) << a.status();
  double node_percent = 0, node_seconds = 0, stack_percent = a->nodes[0].exclusive_percent;
  int64_t stack_samples = a->nodes[0].exclusive_samples;
  for (const ProfileNodeStats& s : a->nodes) {
    node_percent += s.exclusive_percent;
    node_seconds += s.exclusive_seconds;
  }
  for (const RankedStack& s : a->top_stacks) {
    stack_percent += s.percent;
    stack_samples += s.samples;
  }
  EXPECT_NEAR(node_percent, 100, 1e-9);
  EXPECT_NEAR(stack_percent, 100, 1e-9);
  EXPECT_EQ(stack_samples, a->total_samples);
  EXPECT_NEAR(node_seconds, a->total_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(a->total_seconds, a->total_samples * 0.005);
  for (size_t k = 1; k < a->top_stacks.size(); ++k) {
    EXPECT_GE(a->top_stacks[k - 1].samples, a->top_stacks[k].samples);
  }
}

TEST(ProfileTest, FrameLabels) {
  v1::ProfileFrame f;
  f.set_function("process");
  EXPECT_EQ(FrameLabel(f), "process");
  f.set_line_number(12);
  EXPECT_EQ(FrameLabel(f), "process");  // a line without a file says nothing
  f.set_file("analysis.py");
  EXPECT_EQ(FrameLabel(f), "process (analysis.py:12)");
  f.set_line_number(0);
  EXPECT_EQ(FrameLabel(f), "process (analysis.py)");
  f.set_function("");
  EXPECT_EQ(FrameLabel(f), "? (analysis.py)");
  f.set_function("a;b\nc\rd");
  f.set_file("x;y.py");
  EXPECT_EQ(FrameLabel(f), "a b c d (x y.py)");
}

TEST(ProfileTest, FoldedRoundTrips) {
  v1::Profile p = Cycles();
  p.mutable_frames(1)->set_file("lib;odd.so");  // ';' in a file must not split the stack
  p.mutable_frames(3)->set_file("lib;odd.so");
  p.mutable_frames(0)->set_function("");
  p.mutable_frames(2)->set_function("");
  for (const v1::Profile& profile : {Simple(), Cycles(), p}) {
    const std::string folded = *FoldedStacks(profile);
    absl::StatusOr<v1::Profile> parsed = ParseFoldedStacks(folded, 0.01);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_TRUE(ValidateProfile(*parsed).ok());
    EXPECT_EQ(*FoldedStacks(*parsed), folded);
    EXPECT_EQ(AnalyzeProfile(*parsed)->total_samples, AnalyzeProfile(profile)->total_samples);
  }
  EXPECT_EQ(*FoldedStacks(p),
            "?;b (lib odd.so) 4\n?;b (lib odd.so);? 2\n?;b (lib odd.so);?;b (lib odd.so) 4\n");
}

TEST(ProfileTest, ParseFoldedStacks) {
  // Blank lines skipped, '\r' dropped, repeated stacks summed, no final newline needed.
  absl::StatusOr<v1::Profile> p = ParseFoldedStacks("a;b 3\n\r\n  \na 2\r\na;b 4", 0.02);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(p->sampling_interval_seconds(), 0.02);
  // root 9 -> a 9 -> b 7.
  ASSERT_EQ(p->nodes_size(), 3);
  EXPECT_EQ(p->nodes(0).count(), 9);
  EXPECT_EQ(p->nodes(1).count(), 9);
  EXPECT_EQ(p->nodes(2).count(), 7);
  EXPECT_EQ(p->nodes(2).parent(), 1);
  EXPECT_EQ(p->frames(p->nodes(2).frame()).function(), "b");
  EXPECT_EQ(*FoldedStacks(*p), "a 2\na;b 7\n");

  // Zero counts are allowed (and not printed); labels keep their spaces.
  p = ParseFoldedStacks("x y;z 0\nx y 1\n", 0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*FoldedStacks(*p), "x y 1\n");

  p = ParseFoldedStacks("", 0.01);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->nodes_size(), 1);
  EXPECT_EQ(*FoldedStacks(*p), "");
}

TEST(ProfileTest, ParseFoldedStacksErrorsNameTheLine) {
  struct Case {
    const char* input;
    const char* message;
  };
  const Case cases[] = {
      {"a;b 3\nbad\n", "line 2: no ' COUNT'"},
      {"a -3\n", "line 1: count '-3'"},
      {"a 1\n\na +3\n", "line 3: count '+3'"},
      {"a 3.5\n", "line 1: count '3.5'"},
      {"a 3 \n", "line 1: count ''"},
      {"a 9223372036854775808\n", "line 1: count '9223372036854775808'"},
      {"a 9223372036854775807\nb 1\n", "line 2: total samples overflow"},
      {"a;;b 1\n", "line 1: empty frame"},
      {"a;b; 1\n", "line 1: empty frame"},
      {" 5\n", "line 1: empty frame"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    absl::StatusOr<v1::Profile> p = ParseFoldedStacks(c.input, 0.01);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(c.message));
  }
  EXPECT_FALSE(ParseFoldedStacks("a 1\n", -1).ok());
  EXPECT_FALSE(ParseFoldedStacks("a 1\n", std::nan("")).ok());
  // The largest count alone is fine.
  EXPECT_EQ(ParseFoldedStacks("a 9223372036854775807\n", 1)->nodes(0).count(), 9223372036854775807);
}

TEST(ProfileTest, ValidationErrorsNameTheNode) {
  struct Case {
    const char* name;
    v1::Profile profile;
    const char* message;
  };
  ProfileAnalysisOptions options;
  const Case cases[] = {
      {"parent after child", Make({"a"}, {{-1, -1, 0}, {2, 0, 1}, {0, 0, 1}}),
       "node 1: parent 2 does not come before it"},
      {"parent out of range", Make({"a"}, {{-1, -1, 0}, {0, 0, 1}, {7, 0, 1}}),
       "node 2: parent index 7 out of range [0, 3)"},
      {"parent below -1", Make({"a"}, {{-1, -1, 0}, {-2, 0, 1}}),
       "node 1: parent index -2 out of range"},
      {"negative count", Make({"a"}, {{-1, -1, 0}, {0, 0, -1}}), "node 1: negative count -1"},
      {"child above parent", Make({"a"}, {{-1, -1, 10}, {0, 0, 3}, {1, 0, 2}, {1, 0, 2}}),
       "node 1: children count 4 samples, more than the node's own 3"},
      {"children above root", Make({"a"}, {{-1, -1, 3}, {0, 0, 2}, {0, 0, 2}}),
       "node 0: children count 4"},
      {"two roots", Make({"a"}, {{-1, -1, 0}, {0, 0, 1}, {-1, 0, 1}}),
       "node 2: parent -1 on a node other than 0"},
      {"frame out of range", Make({"a"}, {{-1, -1, 0}, {0, 0, 1}, {1, 1, 1}}),
       "node 2: frame index 1 out of range [0, 1)"},
      {"non-root frame -1", Make({"a"}, {{-1, -1, 0}, {0, -1, 1}}),
       "node 1: frame index -1 out of range"},
      {"root with a parent", Make({"a"}, {{0, -1, 0}}), "node 0 (the root)"},
      {"root with a frame", Make({"a"}, {{-1, 0, 0}}), "node 0 (the root)"},
      {"children overflow", Make({"a"}, {{-1, -1, 0}, {0, 0, INT64_MAX}, {0, 0, 1}}),
       "node 0: the counts of its children overflow"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const absl::Status status = ValidateProfile(c.profile);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr(c.message));
    EXPECT_EQ(AnalyzeProfile(c.profile).status(), status);
    EXPECT_EQ(FoldedStacks(c.profile).status(), status);
  }
  v1::Profile bad_interval = Simple();
  bad_interval.set_sampling_interval_seconds(-0.01);
  EXPECT_THAT(ValidateProfile(bad_interval).message(), HasSubstr("sampling_interval_seconds"));
  bad_interval.set_sampling_interval_seconds(std::nan(""));
  EXPECT_FALSE(ValidateProfile(bad_interval).ok());
  options.max_nodes = 4;
  EXPECT_THAT(ValidateProfile(Simple(), options).message(),
              HasSubstr("5 nodes, more than the limit of 4"));
}

// Worker A: root 5 -> main 5 -> compute 3            (excl: main 2, compute 3)
// Worker B: root 0 -> main 4 -> {io 1, compute 2}    (excl: main 1, io 1, compute 2), frames
//           in another order.
// Merged:   root 9 -> main 9 -> {compute 5, io 1}    (excl: main 3, compute 5, io 1)
TEST(ProfileTest, MergeTwoWorkers) {
  v1::Profile a = Make({"main", "compute"}, {{-1, -1, 5}, {0, 0, 5}, {1, 1, 3}});
  a.set_source("dask");
  a.set_worker("tcp://10.0.0.1:4000");
  a.set_worker_name("w1");
  a.set_host("10.0.0.1");
  a.set_threads(4);
  a.set_memory_limit_bytes(1 << 30);
  a.set_start_unix_ns(200);
  a.set_end_unix_ns(500);
  a.set_lost_samples(2);
  v1::ProfileChunkSamples* chunk = a.add_chunk_samples();
  chunk->set_dataset("ttbar");
  chunk->set_file("f.root");
  chunk->set_entry_stop(100);
  chunk->set_samples(3);
  v1::Profile b = Make({"compute", "main", "io"}, {{-1, -1, 0}, {0, 1, 4}, {1, 2, 1}, {1, 0, 2}},
                       0.01 * (1 + 1e-12));
  b.set_source("dask");
  b.set_worker("tcp://10.0.0.2:4000");
  b.set_start_unix_ns(100);
  b.set_end_unix_ns(400);
  b.set_lost_samples(1);
  *b.add_chunk_samples() = *chunk;
  b.mutable_chunk_samples(0)->set_samples(4);
  b.add_chunk_samples()->set_dataset("other");

  absl::StatusOr<v1::Profile> merged = MergeProfiles({a, b});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(ValidateProfile(*merged).ok());
  EXPECT_EQ(merged->source(), "dask");
  EXPECT_EQ(merged->worker(), "");
  EXPECT_EQ(merged->worker_name(), "");
  EXPECT_EQ(merged->host(), "");
  EXPECT_EQ(merged->threads(), 0);
  EXPECT_EQ(merged->memory_limit_bytes(), 0);
  EXPECT_DOUBLE_EQ(merged->sampling_interval_seconds(), 0.01);
  EXPECT_EQ(merged->start_unix_ns(), 100);
  EXPECT_EQ(merged->end_unix_ns(), 500);
  EXPECT_EQ(merged->lost_samples(), 3);
  ASSERT_EQ(merged->chunk_samples_size(), 2);
  EXPECT_EQ(merged->chunk_samples(0).samples(), 7);
  EXPECT_EQ(merged->chunk_samples(1).dataset(), "other");
  EXPECT_EQ(merged->nodes(0).count(), 9);
  EXPECT_EQ(merged->frames_size(), 3);
  EXPECT_EQ(*FoldedStacks(*merged), "main 3\nmain;compute 5\nmain;io 1\n");
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(*merged);
  ASSERT_TRUE(analysis.ok());
  EXPECT_EQ(analysis->total_samples, 9);
  EXPECT_DOUBLE_EQ(analysis->total_seconds, 0.09);

  // Sources that differ are cleared; intervals that differ are refused, naming the profile.
  b.set_source("threadpool");
  EXPECT_EQ(MergeProfiles({a, b})->source(), "");
  b.set_sampling_interval_seconds(0.02);
  absl::Status status = MergeProfiles({a, b}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("profile 1: sampling interval 0.02"));
  // An invalid input is named by its index.
  b.set_sampling_interval_seconds(0.01);
  b.mutable_nodes(2)->set_count(-1);
  EXPECT_THAT(MergeProfiles({a, b}).status().message(),
              HasSubstr("profile 1: profile node 2: negative count"));
}

TEST(ProfileTest, MergeNothingAndDuplicates) {
  absl::StatusOr<v1::Profile> none = MergeProfiles({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->nodes_size(), 1);
  EXPECT_EQ(*FoldedStacks(*none), "");
  // Merging a profile with duplicate sibling labels with itself: by label path, doubled.
  absl::StatusOr<v1::Profile> twice = MergeProfiles({Cycles(), Cycles()});
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(twice->nodes_size(), 5);  // root, a, a;b, a;b;a, a;b;a;b
  EXPECT_EQ(twice->frames_size(), 2);
  EXPECT_EQ(*FoldedStacks(*twice), "a;b 8\na;b;a 4\na;b;a;b 8\n");
}

}  // namespace
}  // namespace roastcoffea
