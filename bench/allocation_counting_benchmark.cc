// //instrumentation:allocation_counting: BM_NewDelete (new_delete_benchmark.cc) with the
// counting operators, to compare with the same benchmark in instrumentation_benchmark, and a
// chunk whose allocations are counted.
//   bazel run -c opt //bench:allocation_counting_benchmark
#include <vector>

#include "benchmark/benchmark.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"

namespace roastcoffea {
namespace {

void BM_ScopedMemoryWithCounting(benchmark::State& state) {
  TrackChunk(ChunkMetadata{}, [&] {
    for (auto _ : state) {
      ScopedMemory memory("memory");
    }
  });
}
BENCHMARK(BM_ScopedMemoryWithCounting);

// The same scope in a chunk that skips the /proc/self/statm readings: the counting alone.
void BM_ScopedMemoryCountingOnly(benchmark::State& state) {
  ChunkTrackingOptions options;
  options.read_resident_memory = false;
  TrackChunk(
      ChunkMetadata{},
      [&] {
        for (auto _ : state) {
          ScopedMemory memory("memory");
        }
      },
      options);
}
BENCHMARK(BM_ScopedMemoryCountingOnly);

}  // namespace
}  // namespace roastcoffea
