// AbstractMetricsBackend: what every engine backend (threadpool, TaskVine, Dask) provides.
//
// A backend samples its engine while a run goes on (tracking) and, where the engine can, gives
// fine metrics (activity accounting) for named time windows (spans). Backends produce raw
// records only; //aggregation turns them into metrics with the same formulas for every backend.
//
// Thread-safety: a backend is driven from one controlling thread. Implementations may sample on
// threads of their own.
#ifndef ROASTCOFFEA_BACKENDS_METRICS_BACKEND_H_
#define ROASTCOFFEA_BACKENDS_METRICS_BACKEND_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

// Identifies a span opened with CreateSpan. Opaque to callers.
using SpanId = std::string;

// What a backend knows of the run while it goes on, for the live view (collector/live_status.h):
// the engine's tasks finished so far by task prefix (Dask's key_split, TaskVine's category),
// and the workers now. Values the backend cannot know stay nullopt ("N/A", never 0).
struct BackendLiveProgress {
  struct TaskCounts {
    int64_t done = 0;     // finished without error
    int64_t failed = 0;   // erred
    int64_t running = 0;  // started, not finished (where the backend sees it)
  };
  std::map<std::string, TaskCounts> tasks_by_prefix;
  std::optional<int64_t> workers;            // connected now
  std::optional<double> cores;               // their cores (threads) now
  std::optional<double> memory_bytes;        // their resident memory now, summed
  std::optional<double> memory_limit_bytes;  // their memory limits now, summed
};

// The sentences of coded warnings, in order (for tests and tools that print a run's warnings).
inline std::vector<std::string> WarningSentences(std::vector<v1::Warning> warnings) {
  std::vector<std::string> sentences;
  sentences.reserve(warnings.size());
  for (v1::Warning& warning : warnings) sentences.push_back(std::move(*warning.mutable_message()));
  return sentences;
}

// How a backend's final series (StopTracking) relates to the segments it handed out before
// (TakeTrackingSegment). Either way, the segments taken so far are the run's series so far:
// what a killed run's checkpoint keeps.
enum class FinalTracking {
  // Only the samples after the last segment, which the backend no longer holds (bounded
  // memory: Dask, the thread pool): the run's series is the segments, then StopTracking's.
  kExtendsSegments,
  // The whole run's series again, the segments' samples included and possibly revised
  // (TaskVine rebuilds it from its logs, which can move a change, e.g. a silent worker's
  // end): the segments were only a copy for a kill, and StopTracking's series replaces them.
  kReplacesSegments,
};

class AbstractMetricsBackend {
 public:
  virtual ~AbstractMetricsBackend() = default;

  // A short name ("threadpool", "dask", "taskvine") recorded in the measurement.
  virtual absl::string_view name() const = 0;

  // Starts sampling every `interval` (> 0). FailedPrecondition if already tracking,
  // InvalidArgument for a non-positive interval.
  virtual absl::Status StartTracking(absl::Duration interval) = 0;

  // Stops sampling and returns everything sampled since StartTracking. FailedPrecondition if
  // not tracking.
  virtual absl::StatusOr<v1::TrackingData> StopTracking() = 0;

  // Opens a span (a named time window) and returns its id.
  virtual absl::StatusOr<SpanId> CreateSpan(absl::string_view name) = 0;

  // Closes a span opened by CreateSpan. NotFound for an unknown id.
  virtual absl::Status EndSpan(const SpanId& id) = 0;

  // The span with the fine metrics gathered inside it. NotFound for an unknown id,
  // FailedPrecondition before EndSpan. (Every backend gathers fine metrics; the span errors
  // share one wording, backends/internal/span_registry.h.)
  virtual absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) = 0;

  // Statistical profiles the backend took over the tracked window (per worker, and per task
  // prefix or section where asked), available after StopTracking; a second call returns
  // nothing new. Samples are attributed to `chunks` (the run's joined chunk records, may be
  // empty) where the backend can tell which chunk was running (threadpool: per chunk and per
  // section). A table, not records: a backend that does not profile reads nothing of it.
  // Empty when the backend cannot profile or profiling was off.
  virtual std::vector<v1::Profile> TakeProfiles(const ChunkTable& /*chunks*/) { return {}; }

  // Adds to `run` what the backend saw beyond tracking and spans, once, after StopTracking:
  // - engine_chunks: chunk records the backend derived itself (TaskVine: the tasks of the
  //   processing category); most backends have none, chunk records come from
  //   //instrumentation;
  // - warnings, appended: things the user should know about the data (cross-checks that
  //   disagree, skipped input, reconnections), each one human-readable sentence under a stable
  //   code ("taskvine_impossible_value", "dask_fine_metrics_lost", "<name>_warning" when no
  //   specific code applies);
  // - engine_version: the engine's version as it reported it (Dask: the scheduler's
  //   `distributed` version), saved in the measurement's metadata;
  // - window: the window the engine recorded for the run itself (TaskVine's START .. END),
  //   which then frames it instead of the caller's clocks.
  // Default: nothing. (A finished run's logs are not a backend's: ingest/taskvine_run.h reads
  // them into a RawRun.)
  virtual void Contribute(RawRun& /*run*/) {}

  // Tracking samples gathered since the last call (since StartTracking on the first), handed to
  // the caller (the session appends them to its checkpoint on disk, so that a run killed with
  // SIGKILL keeps them). nullopt: the backend hands nothing out (the default). Thread-safe
  // while tracking. What StopTracking returns after segments were taken: final_tracking().
  virtual std::optional<v1::TrackingData> TakeTrackingSegment() { return std::nullopt; }
  // How StopTracking's series relates to the segments TakeTrackingSegment handed out; the
  // session joins them by this one rule for every backend (collector/checkpointed_tracking.h).
  virtual FinalTracking final_tracking() const { return FinalTracking::kExtendsSegments; }

  // The run so far, for the live view: thread-safe (called from the live server's thread while
  // the backend tracks), cheap (a copy of counters). nullopt: the backend has nothing live.
  virtual std::optional<BackendLiveProgress> LiveProgress() const { return std::nullopt; }
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_METRICS_BACKEND_H_
