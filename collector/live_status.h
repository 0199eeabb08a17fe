// What a run looks like while it goes on, for a live view (live/: the /metrics endpoint and the
// live page): counters kept by the session as chunks are recorded, and the findings of the
// chunks so far. Every figure means what the saved measurement's figure of the same name means;
// the saved measurement is the final word.
//
// Thread-safety: a plain value, copied out under the session's lock.
#ifndef ROASTCOFFEA_COLLECTOR_LIVE_STATUS_H_
#define ROASTCOFFEA_COLLECTOR_LIVE_STATUS_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "backends/metrics_backend.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Upper bounds (seconds) of the chunk-duration histogram's buckets; the last bucket is +Inf.
inline constexpr std::array<double, 12> kLiveDurationBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                1,    2.5,   5,    10,  30,   60};

struct LiveStatus {
  std::string name;     // the measurement's name ("" until the session chose it)
  std::string backend;  // "threadpool", "dask", ...
  absl::Time start = absl::InfinitePast();
  double elapsed_seconds = 0;  // monotonic, since the start
  bool interrupted = false;    // a first signal arrived
  bool finished = false;       // the run ended (Finish was called)

  int64_t chunks_ok = 0;
  int64_t chunks_failed = 0;
  int64_t events = 0;                       // of successful chunks
  int64_t compressed_bytes_read = 0;        // of every chunk
  double chunk_seconds = 0;                 // summed wall time of every chunk
  double chunk_cpu_seconds = 0;             // where chunks measured it
  double chunk_run_queue_wait_seconds = 0;  // where chunks measured it
  // Chunks whose wall time was at most kLiveDurationBuckets[i] (not cumulative); the last
  // entry counts the longer ones.
  std::array<int64_t, kLiveDurationBuckets.size() + 1> duration_buckets{};

  // Chunks to run in all, when the run knows (the sample analysis does); 0: unknown.
  int64_t chunks_total = 0;
  // Worker threads of an in-process run; 0: unknown.
  int worker_threads = 0;

  // From the engine while it runs (the backend's LiveProgress), absent when not known live:
  // chunks running now, and the workers now with their cores and memory summed.
  std::optional<int64_t> chunks_running;
  std::optional<int64_t> workers;
  std::optional<double> cores;
  std::optional<double> worker_memory_bytes;
  std::optional<double> worker_memory_limit_bytes;
  // chunks_ok / chunks_failed count the engine's finished processor tasks (Dask's task stream,
  // TaskVine's log) because the chunk records arrive only at the end; events and bytes then
  // stay 0 until the end (N/A live).
  bool chunks_from_engine_tasks = false;
  // Workers over time, for the live page: one point per live_status() call at least
  // kWorkerTimelineStep apart, at most kWorkerTimelinePoints (then every other point is dropped
  // and the step doubles).
  struct WorkerPoint {
    double elapsed_seconds = 0;
    int64_t workers = 0;
    double cores = 0;
    double memory_bytes = 0;
  };
  std::vector<WorkerPoint> worker_timeline;

  // The findings of the chunks so far (aggregated at most every few seconds), with the rules'
  // evaluation states; absent before the first aggregation.
  // Shared, not copied: a scrape copies the status, and the metrics of 50,000 chunks are MBs.
  std::shared_ptr<const v1::AggregatedMetrics> so_far;
};

// Adds one finished chunk to the counters of `status`: the one rule for what the live view
// counts, used by the session as chunks are recorded and for a saved measurement.
void CountChunk(const v1::ChunkRecord& record, LiveStatus* status);

// Adds what the engine says of the run to `status`: chunks running (the processor's tasks,
// matched by `processor_patterns` as the fine metrics match them; every prefix when empty), the
// workers, cores and memory; and, when the session recorded no chunk itself, the processor's
// finished tasks as chunks done and failed (chunks_from_engine_tasks).
void AddBackendProgress(const BackendLiveProgress& progress,
                        const std::vector<std::string>& processor_patterns, LiveStatus* status);

inline constexpr double kWorkerTimelineStep = 1.0;  // seconds
inline constexpr size_t kWorkerTimelinePoints = 600;
// Appends the workers of `status` to `timeline` at `status.elapsed_seconds` (see
// LiveStatus::worker_timeline): nothing when the workers are not known or the last point is
// closer than `*step`; past kWorkerTimelinePoints, every other point goes and `*step` doubles.
void ExtendWorkerTimeline(const LiveStatus& status, double* step,
                          std::vector<LiveStatus::WorkerPoint>* timeline);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_LIVE_STATUS_H_
