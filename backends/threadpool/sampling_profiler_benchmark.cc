// Overhead of the sampling profiler: the same CPU-bound work with the profiler off (Arg 0),
// at 100 Hz and at 1000 Hz on the benchmark thread. Overhead = time(on) / time(off) - 1.
//   ./bazelw run -c opt //backends/threadpool:sampling_profiler_benchmark --
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
// The work has a realistic stack (a few nested calls), since unwinding cost grows with depth.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "backends/threadpool/sampling_profiler.h"
#include "benchmark/benchmark.h"

namespace roastcoffea {
namespace {

__attribute__((noinline)) uint64_t Leaf(uint64_t x, int iterations) {
  for (int i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    x ^= x >> 29;
  }
  return x;
}

__attribute__((noinline)) uint64_t Nest(int depth, uint64_t x, int iterations) {
  if (depth == 0) return Leaf(x, iterations);
  const uint64_t result = Nest(depth - 1, x + 1, iterations);
  benchmark::DoNotOptimize(result);
  return result;
}

// About 20 ms of CPU per iteration: several samples per iteration even at 100 Hz.
void BM_CpuWork(benchmark::State& state) {
  const int hz = static_cast<int>(state.range(0));
  std::unique_ptr<SamplingProfiler> profiler;
  if (hz > 0) {
    SamplingProfilerOptions options;
    options.hz = hz;
    options.max_samples_per_thread = int64_t{1} << 20;
    options.max_frames_per_thread = int64_t{1} << 24;
    absl::StatusOr<std::unique_ptr<SamplingProfiler>> started =
        SamplingProfiler::Start({{static_cast<int64_t>(syscall(SYS_gettid)), "bench"}}, options);
    if (!started.ok()) {
      state.SkipWithError(std::string(started.status().message()).c_str());
      return;
    }
    profiler = *std::move(started);
  }
  uint64_t x = 1;
  for (auto _ : state) {
    // 16 frames of nesting, like an analysis inside the chunk wrapper and the executor.
    x = Nest(16, x, 4'000'000);
    benchmark::DoNotOptimize(x);
  }
  if (profiler != nullptr) {
    profiler->Stop();
    state.counters["samples"] = static_cast<double>(profiler->samples());
    state.counters["lost"] = static_cast<double>(profiler->lost_samples());
  }
}
BENCHMARK(BM_CpuWork)->Arg(0)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace roastcoffea
