// bazel run -c opt //export:profile_benchmark
// Flame graph and top-stacks table of large call trees: cost and SVG size stay bounded.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "export/flame_graph.h"
#include "export/profile_tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// A random tree of `nodes` nodes (parents before children, biased to recent parents so it is
// deep as well as wide) over 2000 long C++-like labels; inclusive counts consistent.
v1::Profile RandomProfile(int nodes) {
  std::mt19937_64 random(42);
  v1::Profile profile;
  profile.set_sampling_interval_seconds(0.01);
  for (int i = 0; i < 2000; ++i) {
    profile.add_frames()->set_function(
        absl::StrCat("ns::Template<std::vector<double>, ", i, ">::method_", i % 37));
  }
  std::vector<int> parent(nodes, -1);
  std::vector<int64_t> count(nodes, 0);
  for (int i = 1; i < nodes; ++i) {
    const int window = std::min(i, 64);
    parent[i] = i - 1 - static_cast<int>(random() % window);
    count[i] = static_cast<int64_t>(random() % 5);  // exclusive for now
  }
  for (int i = nodes - 1; i > 0; --i) count[parent[i]] += count[i];
  for (int i = 0; i < nodes; ++i) {
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(parent[i]);
    node->set_frame(i == 0 ? -1 : static_cast<int>(random() % 2000));
    node->set_count(count[i]);
  }
  return profile;
}

void BM_RenderFlameGraph(benchmark::State& state) {
  const v1::Profile profile = RandomProfile(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  int64_t drawn = 0;
  for (auto _ : state) {
    absl::StatusOr<FlameGraph> graph = RenderFlameGraph(profile);
    if (!graph.ok()) state.SkipWithError(std::string(graph.status().message()).c_str());
    bytes = graph->svg.size();
    drawn = graph->drawn_frames;
    benchmark::DoNotOptimize(graph->svg.data());
  }
  state.counters["svg_bytes"] = static_cast<double>(bytes);
  state.counters["drawn_frames"] = static_cast<double>(drawn);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RenderFlameGraph)->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_TopStacksTable(benchmark::State& state) {
  const v1::Profile profile = RandomProfile(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<TextTable> table = TopStacksTable(profile, "Top Stacks");
    if (!table.ok()) state.SkipWithError(std::string(table.status().message()).c_str());
    benchmark::DoNotOptimize(table->rows.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_TopStacksTable)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
