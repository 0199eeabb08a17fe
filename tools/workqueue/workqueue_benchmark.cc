// What Work Queue costs against the in-process thread pool, on this machine:
//  * per-chunk dispatch overhead: tiny chunks (one entry) through the thread pool (Map +
//    chunk tracking + processor) vs. as Work Queue tasks on one local worker (submit, sandbox,
//    process start of chunk_task, output file back, retrieval);
//  * throughput of the whole sample analysis (collect's pipeline, measurement included) with
//    1, 2 and 4 local workers, and with the thread pool for reference.
//   ./bazelw run -c opt //tools/workqueue:workqueue_benchmark
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/threadpool/executor.h"
#include "backends/threadpool/threadpool_backend.h"
#include "benchmark/benchmark.h"
#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/chunking.h"
#include "sample_analysis/dijet_processor.h"
#include "tools/sample_run.h"
#include "tools/workqueue/chunk_task.h"
#include "tools/workqueue/local_workers.h"
#include "tools/workqueue/task_command.h"
#include "tools/workqueue/work_queue_api.h"
#include "tools/workqueue/workqueue_flags.h"
#include "tools/workqueue/workqueue_run.h"

namespace roastcoffea {
namespace workqueue {
namespace {

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/wq-bench-", name, "-XXXXXX");
  return mkdtemp(pattern.data()) == nullptr ? "" : pattern;
}

sample_analysis::SampleDatasetSpec Spec() {
  sample_analysis::SampleDatasetSpec spec;
  spec.events_per_file = 50000;
  spec.files_per_dataset = 2;
  return spec;
}

std::string CacheDir() {
  static const std::string* const dir = new std::string(Scratch("cache"));
  return *dir;
}

constexpr int kTinyChunks = 40;

// One-entry chunks of the first file: the processor's own work is negligible.
std::vector<TaskChunk> TinyChunks() {
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(Spec(), CacheDir());
  if (!dataset.ok()) return {};
  const sample_analysis::SampleFile& file = dataset->datasets[0].files[0];
  std::vector<TaskChunk> chunks;
  for (int i = 0; i < kTinyChunks; ++i) {
    const std::string input = file.path.substr(file.path.rfind('/') + 1);
    chunks.push_back({dataset->datasets[0].name, input, file.path, i, i + 1});
  }
  return chunks;
}

void BM_DispatchThreadPool(benchmark::State& state) {
  const std::vector<TaskChunk> chunks = TinyChunks();
  auto executor = ThreadPoolExecutor::Create(ThreadPoolOptions{1});
  const sample_analysis::DijetProcessor processor;
  auto tracked = TrackChunks(
      [&](const ChunkMetadata& m) {
        return processor(sample_analysis::WorkItem{m.dataset, m.file, m.entry_start, m.entry_stop});
      },
      ChunkTrackingOptions{});
  for (auto _ : state) {
    auto output = (*executor)->Map<ChunkTaskOutput>(
        chunks.size(), [&](size_t i) { return tracked(ChunkTaskMetadata(chunks[i])); });
    benchmark::DoNotOptimize(output);
  }
  state.SetItemsProcessed(state.iterations() * kTinyChunks);
  state.SetLabel("per chunk: 1 thread, Map + TrackChunks + processor on 1 entry");
}
BENCHMARK(BM_DispatchThreadPool)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Round trips of chunk tasks on one local worker, after a warm-up task cached the inputs.
void BM_DispatchWorkQueue(benchmark::State& state) {
  const std::vector<TaskChunk> chunks = TinyChunks();
  const std::string program = FindChunkTaskProgram();
  const std::string work = Scratch("dispatch");
  struct work_queue* q = work_queue_create(-1);
  if (q == nullptr || program.empty() || chunks.empty()) {
    state.SkipWithError("no manager, chunk task or dataset");
    return;
  }
  LocalWorkersOptions options;
  options.manager_port = work_queue_port(q);
  options.directory = work;
  auto workers = LocalWorkers::Start(options);
  if (!workers.ok()) {
    state.SkipWithError(std::string(workers.status().message()).c_str());
    return;
  }
  auto submit = [&](const TaskChunk& chunk, int n) {
    ChunkTaskArguments arguments{kChunkTaskOutput, {chunk}};
    struct work_queue_task* t = work_queue_task_create(ChunkTaskCommand(arguments).c_str());
    work_queue_task_specify_file(t, program.c_str(), kChunkTaskProgram, WORK_QUEUE_INPUT,
                                 WORK_QUEUE_CACHE);
    work_queue_task_specify_file(t, chunk.file.c_str(), chunk.input.c_str(), WORK_QUEUE_INPUT,
                                 WORK_QUEUE_CACHE);
    const std::string out = absl::StrCat(work, "/out-", n, ".pb");
    work_queue_task_specify_file(t, out.c_str(), kChunkTaskOutput, WORK_QUEUE_OUTPUT,
                                 WORK_QUEUE_NOCACHE);
    work_queue_task_specify_cores(t, 1);
    work_queue_submit(q, t);
  };
  auto drain = [&](int n) {
    for (int done = 0; done < n;) {
      if (struct work_queue_task* t = work_queue_wait(q, 5)) {
        work_queue_task_delete(t);
        ++done;
      }
    }
  };
  submit(chunks[0], -1);
  drain(1);
  for (auto _ : state) {
    for (int i = 0; i < kTinyChunks; ++i) submit(chunks[i], i);
    drain(kTinyChunks);
  }
  state.SetItemsProcessed(state.iterations() * kTinyChunks);
  state.SetLabel("per chunk task: 1 local worker, inputs cached, chunk_task on 1 entry");
  work_queue_shut_down_workers(q, 0);
  work_queue_delete(q);
  (*workers)->Stop();
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
}
BENCHMARK(BM_DispatchWorkQueue)->Unit(benchmark::kMicrosecond)->UseRealTime()->Iterations(2);

// The whole run as collect does it (dataset cached, measurement assembled), 300k events in
// 12 chunks of 25000.
void BM_ThroughputWorkQueue(benchmark::State& state) {
  WorkQueueRunOptions options;
  options.session.handle_signals = false;  // a benchmark: signals keep their usual effect
  options.session.checkpoint_interval = absl::ZeroDuration();
  options.dataset = Spec();
  options.cache_dir = CacheDir();
  options.local_workers = static_cast<int>(state.range(0));
  options.chunk_task_binary = FindChunkTaskProgram();
  int64_t events = 0;
  for (auto _ : state) {
    options.work_directory = Scratch("run");
    absl::StatusOr<WorkQueueRunResult> result = RunWorkQueueSampleAnalysis(options);
    std::error_code ignored;
    std::filesystem::remove_all(options.work_directory, ignored);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    events += result->output.events_processed;
  }
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ThroughputWorkQueue)
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

void BM_ThroughputThreadPool(benchmark::State& state) {
  int64_t events = 0;
  for (auto _ : state) {
    SampleRunOptions options;
    options.dataset = Spec();
    options.cache_dir = CacheDir();
    options.session.handle_signals = false;
    options.session.output_dir = "";
    absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> created =
        ThreadPoolExecutor::Create(ThreadPoolOptions{static_cast<int>(state.range(0))});
    if (!created.ok()) {
      state.SkipWithError(std::string(created.status().message()).c_str());
      return;
    }
    std::shared_ptr<ThreadPoolExecutor> executor = *std::move(created);
    ThreadPoolMetricsBackend backend(executor.get());
    absl::StatusOr<SampleRunResult> result =
        RunSampleAnalysis(backend, executor, std::move(options));
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    events += result->output.events_processed;
  }
  state.counters["events_per_second"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ThroughputThreadPool)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace
}  // namespace workqueue
}  // namespace roastcoffea
