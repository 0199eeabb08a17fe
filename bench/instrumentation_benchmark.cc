// Cost of //instrumentation: section scopes, the chunk wrapper, disabled mode, many threads.
//   bazel run -c opt //bench:instrumentation_benchmark
// Goals (issue #6): a ScopedTimer (enter + exit) <= 20 ns and within 2x of BM_TwoRawClockReads;
// the chunk wrapper around an empty processor <= 1 us plus the memory read (BM_StatmRead), and
// <= 3 us of CPU with memory, CPU time and run-queue wait (issue #25:
// BM_TrackChunksEmptyProcessor/statm:1/cpu:1/runq:1);
// disabled <= 2 ns per scope; throughput that scales with threads up to the core count.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>

#include "benchmark/benchmark.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/internal/thread_cpu_clock.h"
#include "instrumentation/internal/thread_schedstat.h"
#include "instrumentation/sections.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace roastcoffea {
namespace {

using instrumentation_internal::CallingThreadCpuClockSource;
using instrumentation_internal::ThreadCpuClockSourceName;

constexpr int kScopesPerChunk = 4096;

// The raw clock the scopes use (TSC on x86), read twice: the floor for enter + exit.
void BM_TwoRawClockReads(benchmark::State& state) {
  for (auto _ : state) {
#if defined(__x86_64__) || defined(__i386__)
    uint64_t a = __rdtsc();
    uint64_t b = __rdtsc();
#else
    auto a = std::chrono::steady_clock::now();
    auto b = std::chrono::steady_clock::now();
#endif
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_TwoRawClockReads);

void BM_TwoSteadyClockReads(benchmark::State& state) {
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    auto b = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_TwoSteadyClockReads);

// A scope in a tight loop inside one long chunk: every entry is summed; past the slice cap
// only counted as dropped. Threads: each thread runs its own chunk (per-thread state only).
void BM_ScopedTimerTightLoop(benchmark::State& state) {
  TrackChunk(ChunkMetadata{}, [&] {
    for (auto _ : state) {
      ScopedTimer timer("tight_loop");
    }
  });
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScopedTimerTightLoop)->ThreadRange(1, 8)->UseRealTime();

// Each iteration is a chunk of kScopesPerChunk scopes. Arg: slice cap; kScopesPerChunk keeps
// every entry as a timeline slice (the append path), 0 keeps none (the dropped path). Only the
// scopes are timed (the chunk's start and end are paused); s_per_scope is the time per scope.
// BM_ChunkRecordWithSlices adds what keeping the slices costs when the record is built.
void BM_ScopedTimerWithSlices(benchmark::State& state) {
  ChunkTrackingOptions options;
  options.max_slices_per_chunk = static_cast<uint32_t>(state.range(0));
  options.read_resident_memory = false;
  const int scopes = static_cast<int>(state.range(1));
  for (auto _ : state) {
    state.PauseTiming();
    {
      v1::ChunkRecord record = TrackChunk(
          ChunkMetadata{},
          [&] {
            state.ResumeTiming();
            for (int i = 0; i < scopes; ++i) ScopedTimer timer("kept");
            state.PauseTiming();
          },
          options);
      benchmark::DoNotOptimize(record);
    }  // destroyed while paused: freeing its slice messages is not the scopes' cost
    state.ResumeTiming();
  }
  state.counters["s_per_scope"] = benchmark::Counter(
      scopes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
// Args: slice cap, scopes per chunk. 512 slices (16 KiB) stay in L1; 4096 (128 KiB) do not.
BENCHMARK(BM_ScopedTimerWithSlices)
    ->Args({kScopesPerChunk, kScopesPerChunk})
    ->Args({0, kScopesPerChunk})
    ->Args({512, 512})
    ->Args({0, 512});

void BM_ChunkRecordWithSlices(benchmark::State& state) {
  ChunkTrackingOptions options;
  options.max_slices_per_chunk = kScopesPerChunk;
  options.read_resident_memory = false;
  options.worker = "bench";
  for (auto _ : state) {
    v1::ChunkRecord record = TrackChunk(
        ChunkMetadata{},
        [&] {
          for (int i = 0; i < kScopesPerChunk; ++i) ScopedTimer timer("kept");
        },
        options);
    benchmark::DoNotOptimize(record);
  }
  state.counters["s_per_scope"] = benchmark::Counter(
      kScopesPerChunk, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChunkRecordWithSlices);

void BM_ScopedTimerWithCpuTime(benchmark::State& state) {
  TrackChunk(ChunkMetadata{}, [&] {
    for (auto _ : state) {
      ScopedTimer timer("cpu", CpuTime::kMeasured);
    }
  });
  state.SetLabel(ThreadCpuClockSourceName(CallingThreadCpuClockSource()));
}
BENCHMARK(BM_ScopedTimerWithCpuTime);

// One reading of the thread CPU clock the wrapper and CpuTime::kMeasured use (label: its
// source on this machine), and the system call it replaces where perf allows.
void BM_ThreadCpuClockRead(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(instrumentation_internal::ThreadCpuClockNs());
  }
  state.SetLabel(ThreadCpuClockSourceName(CallingThreadCpuClockSource()));
}
BENCHMARK(BM_ThreadCpuClockRead);

void BM_ClockGettimeThreadCpu(benchmark::State& state) {
  timespec ts;
  for (auto _ : state) {
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_ClockGettimeThreadCpu);

#if defined(__x86_64__)
uint64_t ReadTsc() { return __rdtsc(); }

// The perf source's reading (seqlock, rdtsc, conversion) on a page laid out as the kernel
// writes it with cap_user_time = 1: its cost where the kernel publishes the TSC conversion,
// measurable on machines (such as KVM guests on kvm-clock) where it does not.
void BM_PerfTaskClockReadSyntheticPage(benchmark::State& state) {
  perf_event_mmap_page page;
  std::memset(&page, 0, sizeof(page));
  page.cap_user_time = 1;
  page.time_shift = 31;
  page.time_mult = 827'000'000;  // about 2.6 GHz
  page.time_offset = uint64_t{0} - 1'000'000;
  int64_t ns = 0;
  for (auto _ : state) {
    const volatile perf_event_mmap_page& volatile_page = page;
    benchmark::DoNotOptimize(
        instrumentation_internal::ReadPerfTaskClockNs(volatile_page, &ReadTsc, &ns));
    benchmark::DoNotOptimize(ns);
  }
}
BENCHMARK(BM_PerfTaskClockReadSyntheticPage);
#endif

void BM_ScopedTimerDisabled(benchmark::State& state) {
  SetInstrumentationEnabled(false);
  TrackChunk(ChunkMetadata{}, [&] {
    for (auto _ : state) {
      ScopedTimer timer("disabled");
    }
  });
  SetInstrumentationEnabled(true);
}
BENCHMARK(BM_ScopedTimerDisabled);

void BM_ScopedTimerOutsideChunk(benchmark::State& state) {
  for (auto _ : state) {
    ScopedTimer timer("outside");
  }
}
BENCHMARK(BM_ScopedTimerOutsideChunk);

void BM_ScopedBytes(benchmark::State& state) {
  TrackChunk(ChunkMetadata{}, [&] {
    for (auto _ : state) {
      ScopedBytes bytes("bytes");
      RecordBytesRead(100, 300);
    }
  });
}
BENCHMARK(BM_ScopedBytes);

// The memory reading the chunk wrapper makes twice: open + read + close of /proc/self/statm.
void BM_StatmRead(benchmark::State& state) {
  char buffer[128];
  for (auto _ : state) {
    const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    ::close(fd);
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_StatmRead);

// One reading of the calling thread's /proc/thread-self/schedstat as the chunk wrapper makes
// it (run-queue delay; the descriptor stays open): a pread and a parse.
void BM_ThreadSchedstatRead(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(instrumentation_internal::ReadThreadSchedstat());
  }
  if (!instrumentation_internal::ReadThreadSchedstat().available) state.SetLabel("unavailable");
}
BENCHMARK(BM_ThreadSchedstatRead);

// The whole chunk wrapper around an empty processor, with its record. Args: with the two
// /proc/self/statm readings (1, the default) or not; with the two thread-CPU-clock readings
// (1, the default; label: the clock's source) or not; with the two schedstat readings for the
// run-queue wait (1, the default) or not.
void BM_TrackChunksEmptyProcessor(benchmark::State& state) {
  ChunkTrackingOptions options;
  options.worker = "bench";  // the default asks for the host name per chunk
  options.read_resident_memory = state.range(0) != 0;
  options.measure_cpu_time = state.range(1) != 0;
  options.measure_run_queue_wait = state.range(2) != 0;
  const auto tracked = TrackChunks([](const ChunkMetadata&) { return 0; }, options);
  const ChunkMetadata metadata{"dataset", "root://eos/file.root", "uuid", 0, 100000, 100000};
  for (auto _ : state) {
    auto output = tracked(metadata);
    benchmark::DoNotOptimize(output);
  }
  state.SetItemsProcessed(state.iterations());
  if (options.measure_cpu_time) {
    state.SetLabel(ThreadCpuClockSourceName(CallingThreadCpuClockSource()));
  }
}
BENCHMARK(BM_TrackChunksEmptyProcessor)
    ->ArgNames({"statm", "cpu", "runq"})
    ->Args({1, 1, 1})
    ->Args({1, 1, 0})
    ->Args({0, 1, 1})
    ->Args({0, 1, 0})
    ->Args({0, 0, 0});
BENCHMARK(BM_TrackChunksEmptyProcessor)
    ->ArgNames({"statm", "cpu", "runq"})
    ->Args({0, 1, 1})
    ->Threads(2)
    ->UseRealTime();

// One /proc/self/statm reading the way the wrapper makes it (the descriptor stays open).
void BM_StatmPread(benchmark::State& state) {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  char buffer[128];
  for (auto _ : state) {
    const ssize_t n = ::pread(fd, buffer, sizeof(buffer), 0);
    benchmark::DoNotOptimize(n);
  }
  ::close(fd);
}
BENCHMARK(BM_StatmPread);

void BM_TrackChunksEmptyProcessorDisabled(benchmark::State& state) {
  SetInstrumentationEnabled(false);
  const auto tracked = TrackChunks([](const ChunkMetadata&) { return 0; });
  const ChunkMetadata metadata{"dataset", "root://eos/file.root", "uuid", 0, 100000, 100000};
  for (auto _ : state) {
    auto output = tracked(metadata);
    benchmark::DoNotOptimize(output);
  }
  SetInstrumentationEnabled(true);
}
BENCHMARK(BM_TrackChunksEmptyProcessorDisabled);

}  // namespace
}  // namespace roastcoffea
