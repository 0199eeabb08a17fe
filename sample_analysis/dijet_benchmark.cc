// Reading + processing one chunk of the sample dataset: events/s and compressed bytes/s.
//   bazel run -c opt //sample_analysis:dijet_benchmark
// The dataset (one file per dataset, 200k events each) is generated once into
// DefaultCacheDirectory() and reused. Files sit in the page cache after the first pass, so this
// measures decompression + analysis, not the disk.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {
namespace sample_analysis {
namespace {

const SampleDataset& BenchmarkDataset() {
  static const SampleDataset* const dataset = [] {
    SampleDatasetSpec spec;
    spec.events_per_file = 200000;
    spec.files_per_dataset = 1;
    absl::StatusOr<SampleDataset> result = EnsureSampleDataset(spec, DefaultCacheDirectory());
    if (!result.ok()) {
      std::fprintf(stderr, "cannot prepare the sample dataset: %s\n",
                   result.status().ToString().c_str());
      std::exit(1);
    }
    return new SampleDataset(*std::move(result));
  }();
  return *dataset;
}

void BM_ProcessChunk(benchmark::State& state) {
  absl::StatusOr<std::vector<WorkItem>> chunks = MakeChunks(BenchmarkDataset(), state.range(0));
  if (!chunks.ok() || chunks->empty()) {
    state.SkipWithError("no chunks");
    return;
  }
  const DijetProcessor processor;
  size_t next = 0;
  int64_t events = 0;
  int64_t bytes = 0;
  int64_t selected = 0;
  for (auto _ : state) {
    const WorkItem& item = (*chunks)[next];
    next = (next + 1) % chunks->size();
    absl::StatusOr<DijetOutput> output = processor.Process(item);
    if (!output.ok()) {
      state.SkipWithError(output.status().ToString().c_str());
      return;
    }
    events += output->events_processed;
    selected += output->events_selected;
    bytes += output->datasets.begin()->second.compressed_bytes_read;
    benchmark::DoNotOptimize(output->mjj);
  }
  state.SetItemsProcessed(events);
  state.SetBytesProcessed(bytes);
  state.counters["selected_fraction"] =
      events > 0 ? static_cast<double>(selected) / static_cast<double>(events) : 0.0;
}
BENCHMARK(BM_ProcessChunk)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// Generation cost of the sample dataset (events/s), split into generating and writing.
void BM_GenerateEvents(benchmark::State& state) {
  const DatasetSpec dataset = DefaultDatasets()[0];
  for (auto _ : state) {
    GeneratedEvents events = GenerateEvents(dataset, 1, 0, state.range(0));
    benchmark::DoNotOptimize(events.jet_pt.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GenerateEvents)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_WriteEventsFile(benchmark::State& state) {
  const GeneratedEvents events = GenerateEvents(DefaultDatasets()[0], 1, 0, state.range(0));
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/dijet_benchmark.rcol");
  for (auto _ : state) {
    const absl::Status status = WriteEventsFile(events, path, 10000);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WriteEventsFile)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sample_analysis
}  // namespace roastcoffea
