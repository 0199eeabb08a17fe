// bazel run -c opt //export:profile_benchmark
// Flame graph and top-stacks table of large call trees: cost and SVG size stay bounded.
// `collect profile` on the reliability study's hostile measurements (D6, D11): a 40,000-deep
// chain and 16,000 profiles of one worker; issue #16's 1 MB frame names.
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"
#include "export/flame_graph.h"
#include "export/profile_files.h"
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
BENCHMARK(BM_RenderFlameGraph)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);

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

// One chain of `depth` frames labelled `label`, one sample at every level: every folded line
// repeats the stack above it (d^2/2 labels in all).
v1::Measurement DeepChain(int depth, const std::string& label) {
  v1::Measurement measurement;
  v1::Profile& profile = *measurement.add_profiles();
  profile.set_worker("tcp://10.0.0.5:4123");
  profile.set_sampling_interval_seconds(0.01);
  profile.add_frames()->set_function(label);
  for (int i = 0; i <= depth; ++i) {
    v1::ProfileNode* node = profile.add_nodes();
    node->set_parent(i - 1);
    node->set_frame(i == 0 ? -1 : 0);
    node->set_count(depth - i + 1);
  }
  return measurement;
}

double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// $TEST_TMPDIR/profile_benchmark_<name> (else under /tmp), created.
std::string ScratchDirectory(absl::string_view name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string directory =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/profile_benchmark_", name);
  mkdir(directory.c_str(), 0700);
  return directory;
}

// Writes the profile files into `directory` and removes them again: their total size, or 0
// with the benchmark skipped when they cannot be written.
int64_t WriteFilesAndRemove(const v1::Measurement& measurement, const std::string& directory,
                            benchmark::State& state) {
  absl::StatusOr<WrittenProfileFiles> written = WriteProfileFiles(measurement, directory);
  if (!written.ok()) {
    state.SkipWithError(std::string(written.status().message()).c_str());
    return 0;
  }
  int64_t bytes = 0;
  for (const std::string& path : written->paths) {
    struct stat info;
    if (stat(path.c_str(), &info) == 0) bytes += info.st_size;
    std::remove(path.c_str());
  }
  return bytes;
}

void BM_WriteProfileFilesDeepChain(benchmark::State& state) {
  const v1::Measurement measurement = DeepChain(static_cast<int>(state.range(0)), "f");
  const std::string directory = ScratchDirectory("chain");
  int64_t bytes = 0;
  for (auto _ : state) {
    bytes = WriteFilesAndRemove(measurement, directory, state);
  }
  state.counters["bytes_written"] = static_cast<double>(bytes);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}
BENCHMARK(BM_WriteProfileFilesDeepChain)->Arg(40000)->Unit(benchmark::kMillisecond)->Iterations(1);

// What `collect profile DIR` does with a measurement: the tables, then the files. Counters:
// the bytes of both, and the process's peak RSS so far.
void CollectProfile(benchmark::State& state, const v1::Measurement& measurement,
                    const std::string& name) {
  const std::string directory = ScratchDirectory(name);
  int64_t bytes = 0;
  size_t table_bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<std::string> tables = FormatProfileTables(measurement);
    if (!tables.ok()) {
      state.SkipWithError(std::string(tables.status().message()).c_str());
      break;
    }
    table_bytes = tables->size();
    bytes = WriteFilesAndRemove(measurement, directory, state);
  }
  state.counters["bytes_written"] = static_cast<double>(bytes);
  state.counters["table_bytes"] = static_cast<double>(table_bytes);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

// Issue #16: the Dask shape, two workers each with a 240-deep tree whose every level is one
// frame with a 1 MB name (before the names were cut: 80 s, 1.7 GB).
void BM_CollectProfileMegabyteNames(benchmark::State& state) {
  v1::Measurement measurement = DeepChain(240, std::string(size_t{1} << 20, 'F'));
  *measurement.add_profiles() = measurement.profiles(0);
  measurement.mutable_profiles(1)->set_worker("tcp://10.0.0.6:4123");
  CollectProfile(state, measurement, "megabyte_names");
}
BENCHMARK(BM_CollectProfileMegabyteNames)->Unit(benchmark::kMillisecond)->Iterations(1);

// Reliability study D6: a 30,000-deep chain of 1000-byte labels (288 KB saved; before: 12 s,
// 543 MB). The folded files stop at their 256 MiB budget.
void BM_CollectProfileDeepChain(benchmark::State& state) {
  CollectProfile(state, DeepChain(30000, std::string(1000, 'f')), "deep_chain");
}
BENCHMARK(BM_CollectProfileDeepChain)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_ProfileFileStems(benchmark::State& state) {
  v1::Measurement measurement;
  for (int i = 0; i < state.range(0); ++i) {
    v1::Profile* profile = measurement.add_profiles();
    profile->set_worker("tcp://10.0.0.5:4123");
  }
  for (auto _ : state) {
    const std::vector<std::string> stems = ProfileFileStems(measurement);
    benchmark::DoNotOptimize(stems.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ProfileFileStems)->Arg(1000)->Arg(16000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
