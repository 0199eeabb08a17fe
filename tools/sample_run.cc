#include "tools/sample_run.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
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

}  // namespace

absl::StatusOr<SampleRunResult> RunSampleAnalysis(AbstractMetricsBackend& backend,
                                                  std::shared_ptr<ThreadPoolExecutor> executor,
                                                  SampleRunOptions options) {
  if (executor == nullptr) return absl::InvalidArgumentError("no thread pool to run on");
  SampleRunResult result;
  DatasetSetupOptions setup;
  setup.program = options.session.program_name;
  setup.handle_signals = options.session.handle_signals;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      PrepareSampleDataset(options.dataset, options.cache_dir, setup);
  if (!dataset.ok()) return dataset.status();
  result.dataset_directory = dataset->directory;
  result.dataset_generated = dataset->generated;

  absl::StatusOr<std::vector<sample_analysis::WorkItem>> chunks =
      sample_analysis::MakeChunks(*dataset, options.chunk_size);
  if (!chunks.ok()) return chunks.status();

  auto run = std::make_shared<PoolRun>();
  run->executor = executor;
  run->items = *std::move(chunks);

  SessionOptions& session_options = options.session;
  session_options.processor_patterns = {kSampleProcessorName};
  session_options.in_process_worker_threads = executor->threads();
  // The sample analysis is compiled into collect: its build is collect's.
  session_options.analysis_build = ToolBuildInfo();
  (*session_options.metadata.mutable_configuration())["dataset_directory"] = dataset->directory;
  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      MeasurementSession::Start(backend, std::move(session_options));
  if (!started.ok()) return started.status();
  MeasurementSession* session = started->get();
  result.session = *std::move(started);
  session->set_chunks_total(static_cast<int64_t>(run->items.size()));  // for the live view

  run->progress.emplace(static_cast<int64_t>(run->items.size()));
  std::thread driver([run, session] {
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

  bool finished = false;
  while (!finished) {
    std::unique_lock<std::mutex> lock(run->mu);
    run->done_changed.wait_for(lock, std::chrono::milliseconds(100));
    finished = run->done;
    // A chunk that outlives the grace period is left to run: the process exits without it.
    if (!finished && session->work_deadline_passed()) break;
  }
  // The final line (and its newline), before anything else is printed.
  run->progress->Finish();
  if (finished) {
    driver.join();
  } else {
    driver.detach();
    result.chunk_left_running = true;
  }

  RunOutputs outputs;
  absl::StatusOr<sample_analysis::DijetOutput> output = sample_analysis::DijetOutput{};
  {
    std::lock_guard<std::mutex> lock(run->mu);
    if (finished) output = std::move(run->output);
  }
  if (!output.ok()) return output.status();
  result.chunks_not_started = run->not_started.load();
  if (session->interrupted()) {
    v1::Warning& warning = outputs.warnings.emplace_back();
    warning.set_code("interrupted");
    warning.set_message(absl::StrCat(
        "interrupted (", session->interruption(), "): ", result.chunks_not_started, " of ",
        run->items.size(), " chunks not started",
        result.chunk_left_running ? "; a chunk still running after the grace period is missing"
                                  : ""));
  }
  absl::StatusOr<v1::Measurement> measurement = session->Finish(std::move(outputs));
  if (!measurement.ok()) return measurement.status();
  result.measurement = *std::move(measurement);
  result.output = *std::move(output);
  return result;
}

}  // namespace roastcoffea
