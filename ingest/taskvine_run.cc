#include "ingest/taskvine_run.h"

#include <string>
#include <utility>

#include "backends/taskvine/taskvine_backend.h"

namespace roastcoffea {

absl::StatusOr<RawRun> ReadFinishedTaskVineRun(const TaskVineRunOptions& options) {
  TaskVineBackendOptions backend_options;
  backend_options.logs = options.logs;
  backend_options.chunk_category = options.chunk_category;
  TaskVineMetricsBackend backend(backend_options);
  if (absl::Status status = backend.StartTracking(options.interval); !status.ok()) return status;
  absl::StatusOr<SpanId> span = backend.CreateSpan(kCollectWindowSpanName);
  if (!span.ok()) return span.status();
  if (absl::Status status = backend.EndSpan(*span); !status.ok()) return status;
  absl::StatusOr<v1::Span> span_metrics = backend.GetSpanMetrics(*span);
  if (!span_metrics.ok()) return span_metrics.status();

  RawRun run;
  run.backend = std::string(backend.name());
  run.spans.push_back(*std::move(span_metrics));
  // The chunk records, warnings and the run's own START .. END window. Before the tracking
  // series: Contribute frees the tasks once their records are made, and StopTracking then
  // frees each worker's steps as its series is written, so that a 10^6-task run never holds
  // its tasks, steps, records and series at once (the order's peak: #25, README).
  backend.Contribute(run);
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  if (!tracking.ok()) return tracking.status();
  run.tracking = *std::move(tracking);
  return run;
}

}  // namespace roastcoffea
