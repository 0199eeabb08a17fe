// operator new + delete of small blocks. Linked into both instrumentation benchmarks, so the
// difference between them is the cost of //instrumentation:allocation_counting.
#include <cstddef>

#include "benchmark/benchmark.h"

namespace {

void BM_NewDelete(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    char* p = new char[size];
    benchmark::DoNotOptimize(p);
    delete[] p;
  }
}
BENCHMARK(BM_NewDelete)->Arg(16)->Arg(256)->Arg(4096);

}  // namespace
