#include "backends/dask/profile.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/dask/fixtures.h"
#include "backends/dask/msgpack_codec.h"
#include "backends/dask/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"

namespace roastcoffea::dask {
namespace {

using ::testing::HasSubstr;

// Captured by testdata/capture_profile.py (see testdata/profile_capture.json): workers
// w-a (1 thread) and w-b (2 threads) running burn_cpu_hot_loop and mild_cpu_loop.
constexpr char kWorkerA[] = "tcp://127.0.0.1:34053";
constexpr char kWorkerB[] = "tcp://127.0.0.1:42967";
constexpr char kHot[] = "burn_cpu_hot_loop;/work/main/backends/dask/testdata/capture_profile.py;34";
constexpr char kMild[] = "mild_cpu_loop;/work/main/backends/dask/testdata/capture_profile.py;45";

Value Fixture(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  return *DecodeMessage(*ReadFrames(reader));
}

// Sum of node counts per frame identifier.
std::map<std::string, int64_t> CountsByIdentifier(const v1::Profile& p) {
  std::map<std::string, int64_t> out;
  for (const v1::ProfileNode& n : p.nodes()) {
    out[n.frame() < 0 ? "root" : p.frames(n.frame()).identifier()] += n.count();
  }
  return out;
}

// Checks the flat-tree invariants the analysis relies on.
void ExpectWellFormed(const v1::Profile& p) {
  ASSERT_GT(p.nodes_size(), 0);
  EXPECT_EQ(p.nodes(0).parent(), -1);
  EXPECT_EQ(p.nodes(0).frame(), -1);
  for (int i = 1; i < p.nodes_size(); ++i) {
    EXPECT_GE(p.nodes(i).parent(), 0);
    EXPECT_LT(p.nodes(i).parent(), i);
    EXPECT_GE(p.nodes(i).frame(), 0);
    EXPECT_LT(p.nodes(i).frame(), p.frames_size());
  }
}

// The display rules for compiled code (profile/profile_frames.h) leave Python frames
// readable: names, files and lines untouched, nothing collapsed.
TEST(DaskProfileTest, DisplayKeepsPythonFramesAsTheyAre) {
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(Fixture("profile_merged_reply"));
  ASSERT_TRUE(p.ok()) << p.status();
  for (const v1::ProfileFrame& frame : p->frames()) {
    EXPECT_EQ(ShortFrameLabel(frame), FrameLabel(frame));
    EXPECT_FALSE(IsPlumbingFrame(frame)) << frame.function();
  }
  EXPECT_FALSE(HasWrapperFrames(*p));
  absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(*p);
  ASSERT_TRUE(collapsed.ok());
  EXPECT_EQ(*FoldedStacks(*collapsed), *FoldedStacks(*p));
  absl::StatusOr<std::vector<FunctionCost>> top = TopFunctions(*p, 1);
  ASSERT_TRUE(top.ok() && top->size() == 1u);
  EXPECT_THAT((*top)[0].label, HasSubstr("capture_profile.py:"));
}

TEST(DaskProfileTest, ConvertsTheCapturedMergedTree) {
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(Fixture("profile_merged_reply"));
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectWellFormed(*p);
  EXPECT_EQ(p->source(), "dask");
  // root, burn_cpu_hot_loop > _hot_step, mild_cpu_loop > _mild_step; frames deduplicated.
  ASSERT_EQ(p->nodes_size(), 5);
  ASSERT_EQ(p->frames_size(), 4);
  EXPECT_EQ(p->nodes(0).count(), 264);
  const v1::ProfileFrame& hot = p->frames(p->nodes(1).frame());
  EXPECT_EQ(hot.identifier(), kHot);
  EXPECT_EQ(hot.function(), "burn_cpu_hot_loop");
  EXPECT_EQ(hot.file(), "/work/main/backends/dask/testdata/capture_profile.py");
  EXPECT_EQ(hot.line_number(), 37);
  EXPECT_EQ(hot.line(), "total += _hot_step(i)");  // linecache's text, terminator dropped
  EXPECT_EQ(p->nodes(1).count(), 74);
  EXPECT_EQ(p->nodes(2).parent(), 1);
  EXPECT_EQ(p->frames(p->nodes(2).frame()).function(), "_hot_step");
  // Dask never counts the innermost frame itself (sent as 0): burn_cpu_hot_loop's only callee
  // gets back the 74 samples in which it was innermost. The root has two callees, so the 183
  // samples in which one of them was innermost stay on the root (which one is not recorded).
  EXPECT_EQ(p->nodes(2).count(), 74);
  EXPECT_EQ(p->frames(p->nodes(3).frame()).identifier(), kMild);
  EXPECT_EQ(p->nodes(3).count(), 7);
  EXPECT_EQ(p->nodes(3).parent(), 0);
  EXPECT_EQ(p->nodes(4).parent(), 3);
  EXPECT_EQ(p->nodes(4).count(), 7);

  ProfileConversionOptions as_sent;
  as_sent.restore_innermost_counts = false;
  absl::StatusOr<v1::Profile> raw = ConvertProfileTree(Fixture("profile_merged_reply"), as_sent);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->nodes(0).count(), 264);
  EXPECT_EQ(raw->nodes(1).count(), 74);
  EXPECT_EQ(raw->nodes(2).count(), 0);
  EXPECT_EQ(raw->nodes(4).count(), 0);
}

TEST(DaskProfileTest, PerWorkerTreesAddUpToTheMergedOne) {
  absl::StatusOr<std::vector<WorkerProfileTree>> trees =
      ConvertPerWorkerProfiles(Fixture("profile_per_worker_reply"));
  ASSERT_TRUE(trees.ok()) << trees.status();
  ASSERT_EQ(trees->size(), 2u);
  EXPECT_EQ((*trees)[0].worker, kWorkerA);
  EXPECT_EQ((*trees)[1].worker, kWorkerB);
  EXPECT_EQ((*trees)[0].profile.nodes(0).count(), 124);
  EXPECT_EQ((*trees)[1].profile.nodes(0).count(), 140);
  std::map<std::string, int64_t> summed;
  for (const WorkerProfileTree& t : *trees) {
    ExpectWellFormed(t.profile);
    for (const auto& [id, count] : CountsByIdentifier(t.profile)) summed[id] += count;
    // The hot function is the heaviest child of the root on both workers.
    const v1::Profile& p = t.profile;
    int heaviest = -1;
    for (int i = 1; i < p.nodes_size(); ++i) {
      if (p.nodes(i).parent() == 0 &&
          (heaviest < 0 || p.nodes(i).count() > p.nodes(heaviest).count())) {
        heaviest = i;
      }
    }
    ASSERT_GT(heaviest, 0);
    EXPECT_EQ(p.frames(p.nodes(heaviest).frame()).function(), "burn_cpu_hot_loop");
    // Its count only holds the samples taken inside _hot_step (a quarter or so); the rest of
    // its samples are the root's exclusive ones. Both together are nearly every sample.
    const int64_t root = p.nodes(0).count(), hot = p.nodes(heaviest).count();
    EXPECT_GT(hot, root / 10);
    int64_t children = 0;
    for (int i = 1; i < p.nodes_size(); ++i) {
      if (p.nodes(i).parent() == 0) children += p.nodes(i).count();
    }
    EXPECT_GT(root - children + hot, root * 8 / 10);
  }
  EXPECT_EQ(summed, CountsByIdentifier(*ConvertProfileTree(Fixture("profile_merged_reply"))));
}

TEST(DaskProfileTest, KeyRestrictedTreesHoldOnlyThatPrefix) {
  absl::StatusOr<std::vector<WorkerProfileTree>> trees =
      ConvertPerWorkerProfiles(Fixture("profile_key_reply"));
  ASSERT_TRUE(trees.ok()) << trees.status();
  ASSERT_EQ(trees->size(), 2u);
  EXPECT_EQ((*trees)[0].worker, kWorkerA);
  EXPECT_EQ((*trees)[0].profile.nodes(0).count(), 111);
  EXPECT_EQ((*trees)[1].profile.nodes(0).count(), 129);
  for (const WorkerProfileTree& t : *trees) {
    ASSERT_EQ(t.profile.nodes_size(), 3);  // root > burn_cpu_hot_loop > _hot_step
    EXPECT_EQ(t.profile.frames(t.profile.nodes(1).frame()).identifier(), kHot);
  }
}

TEST(DaskProfileTest, IdleWindowGivesEmptyRoots) {
  absl::StatusOr<std::vector<WorkerProfileTree>> trees =
      ConvertPerWorkerProfiles(Fixture("profile_idle_reply"));
  ASSERT_TRUE(trees.ok()) << trees.status();
  ASSERT_EQ(trees->size(), 2u);
  for (const WorkerProfileTree& t : *trees) {
    ASSERT_EQ(t.profile.nodes_size(), 1);
    EXPECT_EQ(t.profile.nodes(0).count(), 0);
    EXPECT_EQ(t.profile.frames_size(), 0);
  }
}

// A Dask node: {"count", "identifier", "description", "children"}.
Value Node(const std::string& id, Value count, Value children = Value::Map()) {
  Value description = Value::Map();
  description.Insert(Value::Str("filename"), Value::Str("f.py"));
  description.Insert(Value::Str("name"), Value::Str(id));
  description.Insert(Value::Str("line_number"), Value::Int(7));
  description.Insert(Value::Str("line"), Value::Str("x = 1\n"));
  Value node = Value::Map();
  node.Insert(Value::Str("count"), std::move(count));
  node.Insert(Value::Str("identifier"), Value::Str(id));
  node.Insert(Value::Str("description"), std::move(description));
  node.Insert(Value::Str("children"), std::move(children));
  return node;
}

Value Children(std::vector<Value> nodes) {
  Value map = Value::Map();
  for (Value& n : nodes) {
    const std::string id = n.Find("identifier")->text();
    map.Insert(Value::Str(id), std::move(n));
  }
  return map;
}

// Replaces entry `key` of map `v`.
void Set(Value& v, const std::string& key, Value value) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.key(i).is_str() && v.key(i).text() == key) {
      v.mutable_items()[2 * i + 1] = std::move(value);
      return;
    }
  }
  v.Insert(Value::Str(key), std::move(value));
}

std::string ErrorOf(const Value& tree) {
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(tree);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  return std::string(p.status().message());
}

TEST(DaskProfileTest, ConvertedCapturesPassTheAnalysisChecks) {
  for (const char* name : {"profile_per_worker_reply", "profile_key_reply", "profile_idle_reply"}) {
    absl::StatusOr<std::vector<WorkerProfileTree>> trees = ConvertPerWorkerProfiles(Fixture(name));
    ASSERT_TRUE(trees.ok()) << trees.status();
    for (WorkerProfileTree& t : *trees) {
      t.profile.set_sampling_interval_seconds(0.01);
      EXPECT_TRUE(ValidateProfile(t.profile).ok()) << name << " " << ValidateProfile(t.profile);
    }
  }
  v1::Profile merged = *ConvertProfileTree(Fixture("profile_merged_reply"));
  merged.set_sampling_interval_seconds(0.01);
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(merged);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->total_samples, 264);
  EXPECT_DOUBLE_EQ(analysis->total_seconds, 2.64);
}

TEST(DaskProfileTest, DedupesFramesAndKeepsWireOrder) {
  Value leaf_a = Node("leaf;f.py;1", Value::Int(0));
  Value leaf_b = Node("leaf;f.py;1", Value::Int(0));  // the same function under two callers
  Value tree = Node("root", Value::Int(10),
                    Children({Node("a;f.py;1", Value::Int(4), Children({std::move(leaf_a)})),
                              Node("b;f.py;1", Value::Int(3), Children({std::move(leaf_b)}))}));
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(tree);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->nodes_size(), 5);
  EXPECT_EQ(p->frames_size(), 3);
  EXPECT_EQ(p->frames(p->nodes(1).frame()).function(), "a;f.py;1");
  EXPECT_EQ(p->nodes(2).parent(), 1);
  EXPECT_EQ(p->nodes(3).parent(), 0);
  EXPECT_EQ(p->nodes(4).parent(), 3);
  EXPECT_EQ(p->nodes(2).frame(), p->nodes(4).frame());
  EXPECT_EQ(p->frames(0).line(), "x = 1");
}

TEST(DaskProfileTest, RootCountZeroIsKept) {
  Value tree = Node("root", Value::Int(0), Children({Node("a;f.py;1", Value::Int(5))}));
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(tree);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->nodes(0).count(), 0);
  EXPECT_EQ(p->nodes(1).count(), 5);
}

TEST(DaskProfileTest, RejectsEveryMalformedShapeNamingTheNode) {
  EXPECT_THAT(ErrorOf(Value::Array()), HasSubstr("is not a map"));
  {
    Value t = Node("root", Value::Int(1), Children({Node("a;f.py;1", Value::Int(1))}));
    Set(t, "children", Value::Array());
    EXPECT_THAT(ErrorOf(t), HasSubstr("'root' (depth 0): children is not a map"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    Set(child, "children", Value::Str("x"));
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("'a;f.py;1' (depth 1): children is not a map"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    child.mutable_items().erase(child.mutable_items().begin(), child.mutable_items().begin() + 2);
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("'a;f.py;1' (depth 1): has no count"));
  }
  EXPECT_THAT(ErrorOf(Node("root", Value::Float(1.5))), HasSubstr("count is not an integer"));
  EXPECT_THAT(ErrorOf(Node("root", Value::Str("3"))), HasSubstr("count is not an integer"));
  EXPECT_THAT(ErrorOf(Node("root", Value::Int(-1))), HasSubstr("count is negative: -1"));
  EXPECT_THAT(ErrorOf(Node("root", Value::Int(2), Children({Node("a;f.py;1", Value::Int(-2))}))),
              HasSubstr("'a;f.py;1' (depth 1): count is negative"));
  EXPECT_THAT(
      ErrorOf(Node("root", Value::Int(5),
                   Children({Node("a;f.py;1", Value::Int(3)), Node("b;f.py;1", Value::Int(3))}))),
      HasSubstr("'root' (depth 0): its children's counts add up to more than its count 5"));
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    Set(child, "description", Value::Str("a"));
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("'a;f.py;1' (depth 1): description is not a map"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    Set(child, "description", Value::Map());
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("description has no str name"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    Value description = *child.Find("description");
    Set(description, "line_number", Value::Str("7"));
    Set(child, "description", std::move(description));
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("line_number is not an integer"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    child.mutable_items().erase(child.mutable_items().begin() + 4,
                                child.mutable_items().begin() + 6);  // no description
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), Children({std::move(child)}))),
                HasSubstr("'a;f.py;1' (depth 1): has no description"));
  }
  {
    Value child = Node("a;f.py;1", Value::Int(1));
    Set(child, "identifier", Value::Int(3));
    Value children = Value::Map();
    children.Insert(Value::Int(9), std::move(child));  // neither identifier nor key is a str
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(1), std::move(children))),
                HasSubstr("has no str identifier"));
  }
  {
    Value children = Value::Map();
    children.Insert(Value::Str("a;f.py;1"), Value::Int(4));  // a child that is not a tree
    EXPECT_THAT(ErrorOf(Node("root", Value::Int(5), std::move(children))),
                HasSubstr("'a;f.py;1' (depth 1): is not a map"));
  }
}

TEST(DaskProfileTest, EnforcesTheNodeCap) {
  Value tree = Node("root", Value::Int(3),
                    Children({Node("a;f.py;1", Value::Int(1)), Node("b;f.py;1", Value::Int(1))}));
  ProfileConversionOptions options;
  options.max_nodes = 2;
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(tree, options);
  EXPECT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_THAT(p.status().message(), HasSubstr("more than 2 nodes"));
  options.max_nodes = 3;
  EXPECT_TRUE(ConvertProfileTree(tree, options).ok());
  // The cap covers every worker of a per-worker reply together.
  Value reply = Value::Map();
  reply.Insert(Value::Str("tcp://127.0.0.1:1"), tree);
  reply.Insert(Value::Str("tcp://127.0.0.1:2"), tree);
  absl::StatusOr<std::vector<WorkerProfileTree>> both = ConvertPerWorkerProfiles(reply, options);
  EXPECT_TRUE(absl::IsInvalidArgument(both.status()));
  EXPECT_THAT(both.status().message(), HasSubstr("worker tcp://127.0.0.1:2"));
}

TEST(DaskProfileTest, RejectsMalformedPerWorkerReplies) {
  EXPECT_TRUE(absl::IsInvalidArgument(ConvertPerWorkerProfiles(Value::Nil()).status()));
  Value bad_key = Value::Map();
  bad_key.Insert(Value::Int(1), Node("root", Value::Int(0)));
  EXPECT_THAT(ConvertPerWorkerProfiles(bad_key).status().message(), HasSubstr("non-str"));
  Value bad_tree = Value::Map();
  bad_tree.Insert(Value::Str("tcp://127.0.0.1:7"), Value::Str("oops"));
  EXPECT_THAT(ConvertPerWorkerProfiles(bad_tree).status().message(),
              HasSubstr("worker tcp://127.0.0.1:7: Dask profile node"));
  EXPECT_TRUE(ConvertPerWorkerProfiles(Value::Map())->empty());
}

// Takes a deep Value apart iteratively (its destructor would recurse once per level).
void Dismantle(Value v) {
  std::vector<Value> pending;
  pending.push_back(std::move(v));
  while (!pending.empty()) {
    Value top = std::move(pending.back());
    pending.pop_back();
    for (Value& item : top.mutable_items()) {
      if (item.is_map() || item.is_array()) pending.push_back(std::move(item));
    }
  }
}

TEST(DaskProfileTest, ConvertsAHundredThousandDeepChainWithoutRecursion) {
  constexpr int kDepth = 100000;
  Value chain = Node("f;deep.py;" + std::to_string(kDepth), Value::Int(0));
  for (int d = kDepth - 1; d >= 0; --d) {
    std::string id = chain.Find("identifier")->text();
    Value children = Value::Map();
    children.Insert(Value::Str(std::move(id)), std::move(chain));
    chain = Node(d == 0 ? "root" : "f;deep.py;" + std::to_string(d), Value::Int(1),
                 std::move(children));
  }
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(chain);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->nodes_size(), kDepth + 1);
  EXPECT_EQ(p->frames_size(), kDepth);
  EXPECT_EQ(p->nodes(kDepth).parent(), kDepth - 1);
  EXPECT_EQ(p->nodes(kDepth).count(), 1);  // its caller's remainder, handed down
  EXPECT_EQ(p->frames(p->nodes(kDepth).frame()).identifier(), "f;deep.py;100000");
  p->set_sampling_interval_seconds(0.01);
  EXPECT_TRUE(ValidateProfile(*p).ok()) << ValidateProfile(*p);  // the analysis' depth limit
  ProfileConversionOptions shallow;
  shallow.max_depth = kDepth - 1;
  EXPECT_THAT(ConvertProfileTree(chain, shallow).status().message(),
              HasSubstr("deeper than 99999 levels"));
  Dismantle(std::move(chain));
}

TEST(DaskProfileTest, InnermostCountsAreRestoredOnlyWhereTheTreeDeterminesThem) {
  // As Dask sends it: 10 samples; main (count 10) calls only f (count 6), which calls g (0)
  // and h (0). So f was innermost in 4 samples (main's remainder, f its only callee), and g or
  // h in 6 (f's remainder: two callees, not attributable).
  Value g = Node("g;m.py;3", Value::Int(0));
  Value h = Node("h;m.py;4", Value::Int(0));
  Value f_children = Value::Map();
  f_children.Insert(Value::Str("g;m.py;3"), std::move(g));
  f_children.Insert(Value::Str("h;m.py;4"), std::move(h));
  Value f = Node("f;m.py;2", Value::Int(6), std::move(f_children));
  Value main_children = Value::Map();
  main_children.Insert(Value::Str("f;m.py;2"), std::move(f));
  Value main = Node("main;m.py;1", Value::Int(10), std::move(main_children));
  Value root_children = Value::Map();
  root_children.Insert(Value::Str("main;m.py;1"), std::move(main));
  Value root = Node("root", Value::Int(10), std::move(root_children));
  absl::StatusOr<v1::Profile> p = ConvertProfileTree(root);
  ASSERT_TRUE(p.ok()) << p.status();
  std::map<std::string, int64_t> counts = CountsByIdentifier(*p);
  EXPECT_EQ(counts["main;m.py;1"], 10);  // root's remainder 0: nothing to hand down
  EXPECT_EQ(counts["f;m.py;2"], 10);     // 6 + main's remainder 4
  EXPECT_EQ(counts["g;m.py;3"], 0);      // f has two callees: its remainder stays on f
  EXPECT_EQ(counts["h;m.py;4"], 0);
  p->set_sampling_interval_seconds(0.01);
  absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(*p);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->total_samples, 10);
}

}  // namespace
}  // namespace roastcoffea::dask
