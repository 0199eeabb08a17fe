#include "tools/sample_run.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/chunking.h"
#include "tools/dataset_setup.h"
#include "tools/progress_line.h"
#include "tools/threadpool_engine.h"

namespace roastcoffea {
namespace {

// What the thread running Map shares with the caller. Held by both: after an interruption the
// caller may stop waiting for a chunk that outlives the grace period and go on to save.
struct PoolRun {
  std::shared_ptr<ThreadPoolExecutor> executor;
  std::vector<sample_analysis::WorkItem> items;
  std::optional<ProgressLine> progress;
  std::atomic<int64_t> not_started{0};

  std::mutex mu;
  std::condition_variable done_changed;
  bool done = false;
  absl::StatusOr<sample_analysis::DijetOutput> output;
};

// The sample dataset (generated once, then reused) cut into chunks. Sets the result's dataset
// directory and whether it was generated.
absl::StatusOr<std::vector<sample_analysis::WorkItem>> PrepareChunks(
    const SampleRunOptions& options, SampleRunResult* result) {
  DatasetSetupOptions setup;
  setup.program = options.session.program_name;
  setup.handle_signals = options.session.handle_signals;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      PrepareSampleDataset(options.dataset, options.cache_dir, setup);
  if (!dataset.ok()) return dataset.status();
  result->dataset_directory = dataset->directory;
  result->dataset_generated = dataset->generated;
  return sample_analysis::MakeChunks(*dataset, options.chunk_size);
}

// The run's session on `backend`, with the sample analysis' processor, threads and build.
absl::StatusOr<std::unique_ptr<MeasurementSession>> StartSession(
    AbstractMetricsBackend& backend, const ThreadPoolExecutor& executor,
    const std::string& dataset_directory, SessionOptions session_options) {
  session_options.processor_patterns = {kSampleProcessorName};
  session_options.in_process_worker_threads = executor.threads();
  // The sample analysis is compiled into collect: its build is collect's.
  session_options.analysis_build = ToolBuildInfo();
  (*session_options.metadata.mutable_configuration())["dataset_directory"] = dataset_directory;
  return MeasurementSession::Start(backend, std::move(session_options));
}

// The thread that maps the dijet processor over the chunks on the pool, each chunk tracked and
// its records given to `session`; it sets run->output and run->done at the end.
std::thread StartDriver(std::shared_ptr<PoolRun> run, MeasurementSession* session) {
  return std::thread([run, session] {
    ChunkTrackingOptions tracking_options;
    tracking_options.failure_policy = FailurePolicy::kContinue;
    const auto tracked = TrackChunks(
        [](const ChunkMetadata& metadata) {
          // One processor per thread: it keeps its open files between chunks.
          // operator() throws on a missing or corrupt file: TrackChunks turns that into a
          // FAILED chunk record with the error text.
          thread_local sample_analysis::DijetProcessor processor;
          return processor(sample_analysis::WorkItem{metadata.dataset, metadata.file,
                                                     metadata.entry_start, metadata.entry_stop});
        },
        tracking_options);
    absl::StatusOr<sample_analysis::DijetOutput> output =
        run->executor->Map<sample_analysis::DijetOutput>(run->items.size(), [&](size_t i) {
          // Interrupted: hand out no more work (the rest of the queue drains at once).
          if (session->interrupted()) {
            run->not_started.fetch_add(1);
            return sample_analysis::DijetOutput{};
          }
          const sample_analysis::WorkItem& item = run->items[i];
          const ChunkMetadata metadata = sample_analysis::WorkItemChunkMetadata(item);
          TrackedOutput<sample_analysis::DijetOutput> chunk = tracked(metadata);
          int64_t bytes_read = 0;
          for (v1::ChunkRecord& record : chunk.chunk_records) {
            bytes_read += record.compressed_bytes_read();
            session->RecordChunk(std::move(record));
          }
          run->progress->ChunkDone(metadata.events, bytes_read);
          return std::move(chunk.output);
        });
    std::lock_guard<std::mutex> lock(run->mu);
    run->output = std::move(output);
    run->done = true;
    run->done_changed.notify_all();
  });
}

// Waits for the driver to finish, or for the work deadline of an interruption. True: it
// finished.
bool WaitForChunks(PoolRun& run, const MeasurementSession& session) {
  bool finished = false;
  while (!finished) {
    std::unique_lock<std::mutex> lock(run.mu);
    run.done_changed.wait_for(lock, std::chrono::milliseconds(100));
    finished = run.done;
    // A chunk that outlives the grace period is left to run: the process exits without it.
    if (!finished && session.work_deadline_passed()) break;
  }
  return finished;
}

// The session's measurement of what ran (an interruption says what did not), and the physics.
absl::Status FinishRun(PoolRun& run, bool finished, MeasurementSession& session,
                       SampleRunResult* result) {
  RunOutputs outputs;
  absl::StatusOr<sample_analysis::DijetOutput> output = sample_analysis::DijetOutput{};
  {
    std::lock_guard<std::mutex> lock(run.mu);
    if (finished) output = std::move(run.output);
  }
  if (!output.ok()) return output.status();
  result->chunks_not_started = run.not_started.load();
  if (session.interrupted()) {
    v1::Warning& warning = outputs.warnings.emplace_back();
    warning.set_code("interrupted");
    warning.set_message(absl::StrCat(
        "interrupted (", session.interruption(), "): ", result->chunks_not_started, " of ",
        run.items.size(), " chunks not started",
        result->chunk_left_running ? "; a chunk still running after the grace period is missing"
                                   : ""));
  }
  absl::StatusOr<MeasuredRun> measured = session.FinishRun(std::move(outputs));
  if (!measured.ok()) return measured.status();
  result->run = *std::move(measured);
  result->output = *std::move(output);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SampleRunResult> RunSampleAnalysis(AbstractMetricsBackend& backend,
                                                  std::shared_ptr<ThreadPoolExecutor> executor,
                                                  SampleRunOptions options) {
  if (executor == nullptr) return absl::InvalidArgumentError("no thread pool to run on");
  SampleRunResult result;
  absl::StatusOr<std::vector<sample_analysis::WorkItem>> chunks = PrepareChunks(options, &result);
  if (!chunks.ok()) return chunks.status();
  auto run = std::make_shared<PoolRun>();
  run->executor = executor;
  run->items = *std::move(chunks);

  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      StartSession(backend, *executor, result.dataset_directory, std::move(options.session));
  if (!started.ok()) return started.status();
  MeasurementSession* session = started->get();
  result.session = *std::move(started);
  session->set_chunks_total(static_cast<int64_t>(run->items.size()));  // for the live view

  run->progress.emplace(static_cast<int64_t>(run->items.size()));
  std::thread driver = StartDriver(run, session);
  const bool finished = WaitForChunks(*run, *session);
  // The final line (and its newline), before anything else is printed.
  run->progress->Finish();
  if (finished) {
    driver.join();
  } else {
    driver.detach();
    result.chunk_left_running = true;
  }
  if (absl::Status done = FinishRun(*run, finished, *session, &result); !done.ok()) return done;
  return result;
}

}  // namespace roastcoffea
