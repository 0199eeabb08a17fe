// Profile analysis at scale (issue #8): a 1,000,000-node call tree, the size of a long Dask
// run's merged profile, through AnalyzeProfile, FoldedStacks, ParseFoldedStacks and
// MergeProfiles; as a threadpool profile (C++ names) through CollapseWrapperFrames and
// TopFunctions.
//
//   bazel run -c opt //bench:profile_benchmark
//
// The tree is random but fixed (seeded): depth up to 40, 20,000 distinct functions (a few hot),
// samples in every leaf and in one inner frame in ten. Folded stacks repeat each stack in full,
// so their output is large (output_bytes): that, not the tree walk, is FoldedStacks' cost.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "profile/profile.h"
#include "profile/profile_frames.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int kNodes = 1'000'000;
constexpr int kFunctions = 20'000;
constexpr int kMaxDepth = 40;

const v1::Profile& Tree() {
  static const v1::Profile* tree = [] {
    auto* p = new v1::Profile();
    p->set_source("dask");
    p->set_sampling_interval_seconds(0.01);
    for (int f = 0; f < kFunctions; ++f) {
      v1::ProfileFrame* frame = p->add_frames();
      frame->set_function(absl::StrCat("module", f % 97, ".function_", f));
      frame->set_file(absl::StrCat("/opt/conda/lib/python3.11/site-packages/pkg", f % 31, "/file",
                                   f % 211, ".py"));
      frame->set_line_number(1 + f % 900);
    }
    std::mt19937_64 rng(8);
    std::geometric_distribution<int> hot(0.001);  // a few functions take most nodes
    std::vector<int> parent(kNodes, -1), depth(kNodes, 0);
    std::vector<int64_t> count(kNodes, 0);
    int current = 0;
    for (int i = 1; i < kNodes; ++i) {
      // Mostly deepen the current stack, sometimes return up a few frames first.
      if (depth[current] >= kMaxDepth || rng() % 10 < 4) {
        for (int up = 1 + static_cast<int>(rng() % 4); up > 0 && current > 0; --up) {
          current = parent[current];
        }
      }
      parent[i] = current;
      depth[i] = depth[current] + 1;
      current = i;
    }
    std::vector<bool> leaf(kNodes, true);
    for (int i = 1; i < kNodes; ++i) leaf[parent[i]] = false;
    for (int i = kNodes - 1; i >= 0; --i) {
      // Exclusive samples: every leaf, and one inner frame in ten (code between calls).
      if (leaf[i]) {
        count[i] += 1 + static_cast<int64_t>(rng() % 20);
      } else if (rng() % 10 == 0) {
        count[i] += 1 + static_cast<int64_t>(rng() % 5);
      }
      if (i > 0) count[parent[i]] += count[i];
    }
    p->mutable_nodes()->Reserve(kNodes);
    for (int i = 0; i < kNodes; ++i) {
      v1::ProfileNode* node = p->add_nodes();
      node->set_parent(parent[i]);
      node->set_frame(i == 0 ? -1 : std::min(hot(rng), kFunctions - 1));
      node->set_count(count[i]);
    }
    return p;
  }();
  return *tree;
}

// The same tree as a threadpool profile: C++ names with template arguments and parameters
// (object "collect", no lines), its two hottest functions the executor and chunk tracking.
const v1::Profile& CompiledTree() {
  static const v1::Profile* tree = [] {
    auto* p = new v1::Profile(Tree());
    p->set_source("threadpool");
    for (int f = 0; f < p->frames_size(); ++f) {
      v1::ProfileFrame* frame = p->mutable_frames(f);
      frame->set_function(absl::StrCat("double ns", f % 97, "::Kernel<std::vector<double>, ", f,
                                       ">::Run(ns::Item const&, long) const"));
      frame->set_file("collect");
      frame->set_line_number(0);
    }
    p->mutable_frames(0)->set_function("roastcoffea::ThreadPoolExecutor::WorkerLoop(int)");
    p->mutable_frames(1)->set_function(
        "roastcoffea::instrumentation_internal::TrackChunkErased(int)");
    return p;
  }();
  return *tree;
}

// `collect profile`'s extra passes: the plumbing collapsed, then the top-functions view.
void BM_CollapseWrapperFrames(benchmark::State& state) {
  const v1::Profile& tree = CompiledTree();
  for (auto _ : state) {
    absl::StatusOr<v1::Profile> collapsed = CollapseWrapperFrames(tree);
    if (!collapsed.ok()) state.SkipWithError(std::string(collapsed.status().message()).c_str());
    benchmark::DoNotOptimize(collapsed);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_CollapseWrapperFrames)->Unit(benchmark::kMillisecond);

void BM_TopFunctions(benchmark::State& state) {
  const v1::Profile& tree = CompiledTree();
  for (auto _ : state) {
    absl::StatusOr<std::vector<FunctionCost>> top = TopFunctions(tree, 20);
    if (!top.ok()) state.SkipWithError(std::string(top.status().message()).c_str());
    benchmark::DoNotOptimize(top);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_TopFunctions)->Unit(benchmark::kMillisecond);

void BM_AnalyzeProfile(benchmark::State& state) {
  const v1::Profile& tree = Tree();
  for (auto _ : state) {
    absl::StatusOr<ProfileAnalysis> analysis = AnalyzeProfile(tree);
    if (!analysis.ok()) state.SkipWithError(std::string(analysis.status().message()).c_str());
    benchmark::DoNotOptimize(analysis);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_AnalyzeProfile)->Unit(benchmark::kMillisecond);

void BM_FoldedStacks(benchmark::State& state) {
  const v1::Profile& tree = Tree();
  size_t bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::string> folded = FoldedStacks(tree);
    if (!folded.ok()) state.SkipWithError(std::string(folded.status().message()).c_str());
    bytes = folded->size();
    benchmark::DoNotOptimize(folded);
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
  state.counters["output_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_FoldedStacks)->Unit(benchmark::kMillisecond);

void BM_ParseFoldedStacks(benchmark::State& state) {
  const std::string folded = *FoldedStacks(Tree());
  for (auto _ : state) {
    absl::StatusOr<v1::Profile> parsed = ParseFoldedStacks(folded, 0.01);
    if (!parsed.ok()) state.SkipWithError(std::string(parsed.status().message()).c_str());
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(state.iterations() * folded.size());
}
BENCHMARK(BM_ParseFoldedStacks)->Unit(benchmark::kMillisecond);

void BM_MergeTwoProfiles(benchmark::State& state) {
  const v1::Profile& tree = Tree();
  const std::vector<v1::Profile> two = {tree, tree};
  for (auto _ : state) {
    absl::StatusOr<v1::Profile> merged = MergeProfiles(two);
    if (!merged.ok()) state.SkipWithError(std::string(merged.status().message()).c_str());
    benchmark::DoNotOptimize(merged);
  }
  state.SetItemsProcessed(state.iterations() * 2 * kNodes);
}
BENCHMARK(BM_MergeTwoProfiles)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
