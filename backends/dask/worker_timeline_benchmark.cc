// Heap bytes per worker-sample of the Dask backend's tracking (#25): 1,000 workers x N polls
// kept as the parsed identity entries the backend kept before (one WorkerSnapshot per sample)
// against WorkerTimeline's columns. Counter "bytes_per_sample" (heap growth, from mallinfo2).
//   ./bazelw run -c opt //backends/dask:worker_timeline_benchmark
#include <malloc.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/dask/identity.h"
#include "backends/dask/worker_timeline.h"
#include "benchmark/benchmark.h"

namespace roastcoffea::dask {
namespace {

constexpr int kWorkers = 1000;

// A worker entry as the 2022.12 scheduler reports it (addresses and names of real length).
WorkerSnapshot Snapshot(int worker, int poll) {
  WorkerSnapshot w;
  w.address = "tcp://10.0." + std::to_string(worker / 250) + "." + std::to_string(worker % 250) +
              ":" + std::to_string(30000 + worker);
  w.host = "10.0." + std::to_string(worker / 250) + "." + std::to_string(worker % 250);
  w.name = "tcp://10.0.0.1:" + std::to_string(30000 + worker);
  w.status = "running";
  w.nthreads = 4;
  w.memory_limit_bytes = 8e9;
  w.last_seen_unix_seconds = 1.7e9 + poll;
  w.memory_bytes = 1e8 + poll;
  w.cpu_percent = 50;
  w.managed_bytes = 4e4;
  w.spilled_bytes = 0;
  w.network_read_bytes_per_second = 3462.6;
  w.network_write_bytes_per_second = 3462.6;
  w.disk_read_bytes_per_second = 0;
  w.disk_write_bytes_per_second = 0;
  return w;
}

// In use: small blocks from the arenas plus the large ones glibc maps on their own.
int64_t HeapBytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

// Before: per worker a vector of samples, each a parsed entry with its strings.
struct OldSample {
  int64_t time_unix_ns = 0;
  WorkerSnapshot snapshot;
  double active_tasks = 0;
  std::optional<double> occupancy_seconds;
};

void BM_KeptAsParsedEntries(benchmark::State& state) {
  const int polls = static_cast<int>(state.range(0));
  double per_sample = 0;
  for (auto _ : state) {
    const int64_t before = HeapBytes();
    std::vector<std::vector<OldSample>> kept(kWorkers);
    for (int poll = 0; poll < polls; ++poll) {
      for (int w = 0; w < kWorkers; ++w) {
        kept[w].push_back({poll, Snapshot(w, poll), 1, 0.5});
      }
    }
    per_sample = static_cast<double>(HeapBytes() - before) / (double{kWorkers} * polls);
    benchmark::DoNotOptimize(kept);
  }
  state.counters["bytes_per_sample"] = per_sample;
}
BENCHMARK(BM_KeptAsParsedEntries)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_KeptAsColumns(benchmark::State& state) {
  const int polls = static_cast<int>(state.range(0));
  double per_sample = 0;
  for (auto _ : state) {
    const int64_t before = HeapBytes();
    WorkerTimeline timeline;
    for (int poll = 0; poll < polls; ++poll) {
      for (int w = 0; w < kWorkers; ++w) timeline.Append(poll, Snapshot(w, poll), {1, 0.5});
    }
    per_sample = static_cast<double>(HeapBytes() - before) / (double{kWorkers} * polls);
    benchmark::DoNotOptimize(timeline);
  }
  state.counters["bytes_per_sample"] = per_sample;
}
BENCHMARK(BM_KeptAsColumns)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea::dask
