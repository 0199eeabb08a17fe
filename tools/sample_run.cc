#include "tools/sample_run.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/threadpool/executor.h"
#include "backends/threadpool/threadpool_backend.h"
#include "instrumentation/chunk_tracking.h"
#include "tools/sample_analysis/chunking.h"
#include "tools/measurement_builder.h"
#include "tools/progress_line.h"
#include "tools/workflow_report.h"

namespace roastcoffea {
namespace {

// The task prefix under which the processor's fine metrics are recorded, as Dask would name
// the processing tasks after the processor class.
constexpr char kProcessorName[] = "DijetProcessor";

}  // namespace

absl::StatusOr<SampleRunResult> RunSampleAnalysis(const SampleRunOptions& options) {
  if (options.threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads must be at least 1, got ", options.threads));
  }
  if (options.interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "interval must be positive, got ", absl::FormatDuration(options.interval)));
  }
  SampleRunResult result;
  absl::StatusOr<sample_analysis::SampleDataset> dataset =
      sample_analysis::EnsureSampleDataset(options.dataset, options.cache_dir);
  if (!dataset.ok()) return dataset.status();
  result.dataset_directory = dataset->directory;
  result.dataset_generated = dataset->generated;

  absl::StatusOr<std::vector<sample_analysis::WorkItem>> chunks =
      sample_analysis::MakeChunks(*dataset, options.chunk_size);
  if (!chunks.ok()) return chunks.status();

  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create(ThreadPoolOptions{options.threads});
  if (!executor.ok()) return executor.status();
  ThreadPoolBackendOptions backend_options;
  backend_options.task_prefix = kProcessorName;
  backend_options.profile = options.profile;
  backend_options.profile_hz = options.profile_hz;
  ThreadPoolMetricsBackend backend(executor->get(), backend_options);

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
  const std::vector<sample_analysis::WorkItem>& items = *chunks;

  std::optional<ProgressLine> progress;
  progress.emplace(static_cast<int64_t>(items.size()));
  const RunStopwatch stopwatch;
  if (absl::Status status = backend.StartTracking(options.interval); !status.ok()) return status;
  absl::StatusOr<SpanId> span = backend.CreateSpan("coffea-processing");
  if (!span.ok()) return span.status();

  absl::StatusOr<TrackedOutput<sample_analysis::DijetOutput>> output =
      (*executor)->Map<TrackedOutput<sample_analysis::DijetOutput>>(
          items.size(), [&](size_t i) {
            const sample_analysis::WorkItem& item = items[i];
            ChunkMetadata metadata;
            metadata.dataset = item.dataset;
            metadata.file = item.file;
            metadata.entry_start = item.entry_start;
            metadata.entry_stop = item.entry_stop;
            metadata.events = item.entry_stop - item.entry_start;
            metadata.uuid = absl::StrCat(item.file, ":", item.entry_start, "-", item.entry_stop);
            TrackedOutput<sample_analysis::DijetOutput> chunk = tracked(metadata);
            progress->ChunkDone(metadata.events);
            return chunk;
          });
  progress.reset();  // the final line, before anything else is printed

  RawRun run;
  run.window = stopwatch.Stop();
  // Close the span and stop tracking even when the run failed, so no thread is left behind.
  const absl::Status end_span = backend.EndSpan(*span);
  absl::StatusOr<v1::Span> span_metrics = backend.GetSpanMetrics(*span);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  if (!output.ok()) return output.status();
  if (!end_span.ok()) return end_span;
  if (!span_metrics.ok()) return span_metrics.status();
  if (!tracking.ok()) return tracking.status();

  run.backend = std::string(backend.name());
  run.report = BuildWorkflowReport(output->chunk_records);
  run.tracking = *std::move(tracking);
  run.chunks = std::move(output->chunk_records);
  run.spans.push_back(*std::move(span_metrics));
  run.profiles = backend.TakeProfilesAttributedTo(run.chunks);
  run.processor_patterns = {kProcessorName};
  run.in_process_worker_threads = options.threads;
  // The sample analysis is compiled into collect: its build is collect's.
  run.analysis_build = ToolBuildInfo();
  result.output = std::move(output->output);
  absl::StatusOr<v1::Measurement> measurement = AssembleMeasurement(std::move(run));
  if (!measurement.ok()) return measurement.status();
  result.measurement = *std::move(measurement);
  return result;
}

}  // namespace roastcoffea
