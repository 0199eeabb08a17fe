#include "backends/dask/profile_merge.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/dask/fixtures.h"
#include "backends/dask/profile.h"
#include "backends/dask/wire.h"
#include "gtest/gtest.h"

namespace roastcoffea::dask {
namespace {

// Worker -> tree as Dask sent it.
std::map<std::string, v1::Profile> RawTrees(const std::string& name) {
  const std::string bytes = testing::FixtureBytes(name);
  StringByteReader reader(bytes);
  ProfileConversionOptions raw;
  raw.restore_innermost_counts = false;
  absl::StatusOr<std::vector<WorkerProfileTree>> trees =
      ConvertPerWorkerProfiles(*DecodeMessage(*ReadFrames(reader)), raw);
  EXPECT_TRUE(trees.ok()) << trees.status();
  std::map<std::string, v1::Profile> out;
  for (WorkerProfileTree& t : *trees) out[t.worker] = std::move(t.profile);
  return out;
}

// Exclusive samples (count minus the children's) per function name.
std::map<std::string, int64_t> ExclusiveByFunction(const v1::Profile& p) {
  std::vector<int64_t> exclusive(p.nodes_size());
  for (int i = 0; i < p.nodes_size(); ++i) exclusive[i] = p.nodes(i).count();
  for (int i = 1; i < p.nodes_size(); ++i) exclusive[p.nodes(i).parent()] -= p.nodes(i).count();
  std::map<std::string, int64_t> out;
  for (int i = 1; i < p.nodes_size(); ++i) {
    if (exclusive[i] != 0) out[p.frames(p.nodes(i).frame()).function()] += exclusive[i];
  }
  return out;
}

int64_t Samples(const v1::Profile& p) { return p.nodes_size() > 0 ? p.nodes(0).count() : 0; }

struct Case {
  const char* version;
  std::vector<const char*> prefixes;
};

// work.py on every version: 100 `busy` (CPU loop) and 20 `sleepy` tasks, a bag of `busy` maps.
TEST(ProfileMergeTest, TheWholeWorkerViewPointsAtTheTaskFunctionsOnEveryVersion) {
  const std::vector<Case> cases = {
      {"debian-2022.12.1",
       {"busy", "sleepy", "busy-sum-part", "from_sequence", "sum-part", "blob", "sum-aggregate"}},
      {"2024.12.1", {"busy", "sleepy", "sum-part", "blob", "sum-aggregate"}},
      {"2025.9.3",
       {"busy", "sleepy", "sum-part", "blob", "finalize-hlgfinalizecompute", "sum-aggregate"}},
      {"head",
       {"busy", "sleepy", "sum-part", "blob", "finalize-hlgfinalizecompute", "sum-aggregate"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.version);
    const std::string dir = std::string("modern/") + c.version + "/profile_";
    const std::map<std::string, v1::Profile> all = RawTrees(dir + "all.reply");
    std::vector<std::map<std::string, v1::Profile>> prefix_trees;
    for (const char* prefix : c.prefixes) prefix_trees.push_back(RawTrees(dir + prefix + ".reply"));
    ASSERT_EQ(all.size(), 2u);
    for (const auto& [worker, tree] : all) {
      SCOPED_TRACE(worker);
      std::vector<const v1::Profile*> prefixes;
      for (const auto& set : prefix_trees) prefixes.push_back(&set.at(worker));
      const v1::Profile whole = WholeWorkerFromPrefixes(tree, prefixes);
      // Every sample kept (a prefix's tree, read a moment later, may hold one more).
      EXPECT_NEAR(Samples(whole), Samples(tree), Samples(tree) / 100 + 1);
      EXPECT_TRUE(whole.rebuilt_from_task_prefixes());

      // Before: Dask's own tree, restored where it can be.
      v1::Profile before = tree;
      RestoreInnermostCounts(before);
      const std::map<std::string, int64_t> was = ExclusiveByFunction(before);
      const std::map<std::string, int64_t> now = ExclusiveByFunction(whole);
      auto get = [](const std::map<std::string, int64_t>& m, const std::string& f) {
        auto it = m.find(f);
        return it == m.end() ? int64_t{0} : it->second;
      };
      const int64_t task_code = get(now, "busy") + get(now, "sleepy");
      // Nearly all samples are the task functions' own, not Dask's frames.
      EXPECT_GE(task_code, Samples(tree) * 85 / 100)
          << "busy " << get(now, "busy") << " sleepy " << get(now, "sleepy") << " of "
          << Samples(tree);
      EXPECT_GT(task_code, get(was, "busy") + get(was, "sleepy"));
      EXPECT_LE(get(now, "__call__"), Samples(tree) / 10);
      // Sleepy's one code path is exact: all of its prefix's samples.
      const v1::Profile& sleepy = prefix_trees[1].at(worker);
      EXPECT_EQ(get(now, "sleepy"), Samples(sleepy));
    }
  }
}

TEST(ProfileMergeTest, WithoutPrefixesItIsTheRestoredTree) {
  const std::map<std::string, v1::Profile> all = RawTrees("modern/head/profile_all.reply");
  for (const auto& [worker, tree] : all) {
    v1::Profile restored = tree;
    RestoreInnermostCounts(restored);
    const v1::Profile whole = WholeWorkerFromPrefixes(tree, {});
    EXPECT_EQ(ExclusiveByFunction(whole), ExclusiveByFunction(restored));
  }
}

TEST(ProfileMergeTest, ANegativeDifferenceIsClampedAndCountsStayInclusive) {
  v1::Profile all, prefix;
  v1::ProfileFrame f;
  f.set_function("f");
  f.set_identifier("f;a.py;1");
  *all.add_frames() = f;
  *prefix.add_frames() = f;
  all.add_nodes()->set_parent(-1);
  all.mutable_nodes(0)->set_frame(-1);
  all.mutable_nodes(0)->set_count(3);
  v1::ProfileNode* n = all.add_nodes();
  n->set_parent(0);
  n->set_frame(0);
  n->set_count(3);
  prefix = all;
  prefix.mutable_nodes(0)->set_count(5);  // read a moment later: more samples
  prefix.mutable_nodes(1)->set_count(5);
  const v1::Profile whole = WholeWorkerFromPrefixes(all, {&prefix});
  ASSERT_EQ(whole.nodes_size(), 2);
  EXPECT_EQ(whole.nodes(0).count(), 5);
  EXPECT_EQ(whole.nodes(1).count(), 5);
}

}  // namespace
}  // namespace roastcoffea::dask
