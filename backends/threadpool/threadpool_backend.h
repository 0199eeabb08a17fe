// ThreadPoolMetricsBackend: the metrics backend of the in-process ThreadPoolExecutor.
//
// Produces the same shapes as the Dask backend from in-process sources:
//  * Tracking: a sampler thread appends, every interval, the live worker-thread count and the
//    executor's queued items, and one WorkerSeries per worker thread ("<host>:<pid>/thread-<k>")
//    with cores (1), cpu_percent (the thread's CPU time over wall time; 100 = one core busy),
//    memory_bytes (the PROCESS resident set size, the same value on every thread's series),
//    memory_limit_bytes (cgroup limit or physical memory), executing_tasks and active_tasks (both
//    0 or 1: items are not queued per thread). Other WorkerSeries columns stay empty.
//  * Spans: fine metrics per worker thread in Dask's model, context "execute", task prefix
//    options.task_prefix: "thread-cpu" and "thread-noncpu" (seconds; noncpu = wall time spent
//    inside work items minus CPU time, >= 0), "thread-run-queue-wait" (seconds, the part of
//    thread-noncpu the thread was runnable but waiting for a CPU, from schedstat run_delay;
//    left out when the kernel keeps no schedstat) and "read"/"write"/"disk-read"/"disk-write"
//    (bytes, from /proc/self/task/<tid>/io; left out when that file is unreadable).
//  * Profiles (options.profile, off by default): a SamplingProfiler of the worker threads runs
//    from StartTracking to StopTracking; TakeProfiles returns one profile per worker thread and
//    one per ScopedTimer section (sampling_profiler.h).
//
// Thread-safety: drive a backend from one thread (see AbstractMetricsBackend). The executor must
// outlive the backend. Sampling reads a few /proc files per worker per interval.
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_THREADPOOL_BACKEND_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_THREADPOOL_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "backends/internal/periodic_thread.h"
#include "backends/internal/span_registry.h"
#include "backends/metrics_backend.h"
#include "backends/threadpool/executor.h"
#include "backends/threadpool/sampling_profiler.h"
#include "host/clock.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct ThreadPoolBackendOptions {
  // Task prefix of the fine metrics (Dask uses the processor's class name).
  std::string task_prefix = "processor";
  // Statistical CPU profile of the worker threads, at profile_hz samples per second of each
  // thread's CPU time (1..1000; overhead under 1 % at 100 Hz, see sampling_profiler.h).
  bool profile = false;
  int profile_hz = 100;
  // What the sampling period is timed on (monotonic). Not owned; outlives the backend. Null:
  // Clock::Real().
  Clock* clock = Clock::Real();
};

class ThreadPoolMetricsBackend : public AbstractMetricsBackend {
 public:
  // `executor` is not owned and must outlive the backend. A null executor makes StartTracking
  // and CreateSpan return FailedPrecondition.
  explicit ThreadPoolMetricsBackend(const ThreadPoolExecutor* executor,
                                    ThreadPoolBackendOptions options = {});
  // Stops the sampler thread if tracking is still on (the samples are discarded).
  ~ThreadPoolMetricsBackend() override;

  ThreadPoolMetricsBackend(const ThreadPoolMetricsBackend&) = delete;
  ThreadPoolMetricsBackend& operator=(const ThreadPoolMetricsBackend&) = delete;

  absl::string_view name() const override { return "threadpool"; }

  // Takes a first sample now, then starts a sampler thread that samples every `interval`, and
  // the profiler when options.profile. InvalidArgument for interval <= 0 or infinite or a bad
  // profile_hz, FailedPrecondition when already tracking or without an executor; the
  // profiler's errors (e.g. Unimplemented under ThreadSanitizer).
  absl::Status StartTracking(absl::Duration interval) override;

  // Stops the sampler, takes a last sample (so even a short run has >= 2 samples) and returns
  // all samples. FailedPrecondition when not tracking.
  absl::StatusOr<v1::TrackingData> StopTracking() override;

  // Snapshots the per-thread counters of the executor's workers. InvalidArgument for an empty
  // name, FailedPrecondition without an executor. Ids are "threadpool-span-<n>".
  absl::StatusOr<SpanId> CreateSpan(absl::string_view name) override;

  // Snapshots the counters again. NotFound for an unknown id, FailedPrecondition when the span
  // already ended.
  absl::Status EndSpan(const SpanId& id) override;

  // The span with one FineMetric per worker thread and activity (see the file comment).
  // NotFound for an unknown id, FailedPrecondition before EndSpan.
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId& id) override;

  // After StopTracking, with options.profile: the profiles (see the file comment), samples
  // attributed to these chunk records by thread_index and time (the rest counted in
  // samples_outside_chunks). Empty when profiling was off; a second call returns nothing new.
  std::vector<v1::Profile> TakeProfiles(const ChunkTable& chunks) override;

  // The samples taken since the last call (or StartTracking), handed to the caller for good
  // (the session appends them to its checkpoint): StopTracking returns only what came after.
  // nullopt when not tracking. Thread-safe while the sampler runs.
  std::optional<v1::TrackingData> TakeTrackingSegment() override;
  FinalTracking final_tracking() const override { return FinalTracking::kExtendsSegments; }

  // As of the last sample: the worker threads (one core each) and the process's resident
  // memory and limit (not summed per thread). Chunks are the session's own records.
  std::optional<BackendLiveProgress> LiveProgress() const override;

 private:
  // Counters of one worker thread at one instant.
  struct ThreadCounters {
    int64_t tid = 0;
    double cpu_seconds = 0;
    double busy_seconds = 0;
    // Time runnable but waiting for a CPU (schedstat run_delay), when the kernel keeps it.
    bool has_run_delay = false;
    double run_delay_seconds = 0;
    bool has_io = false;
    int64_t rchar = 0, wchar = 0, read_bytes = 0, write_bytes = 0;
  };
  // What a span measured, beside its window in spans_.
  struct SpanCounters {
    std::map<int, ThreadCounters> start;  // by worker index
    std::map<int, ThreadCounters> end;
  };
  // Previous CPU reading of a thread, for cpu_percent.
  struct CpuReading {
    double cpu_seconds = 0;
    int64_t steady_ns = 0;
  };

  std::string WorkerName(int index) const;
  std::map<int, ThreadCounters> ReadThreadCounters() const;
  // Appends one sample to tracking_. Called by the sampler thread, or by the controlling thread
  // while no sampler runs.
  void Sample();
  // tracking_ with no samples, only what describes them. Requires tracking_mu_.
  void ResetTrackingLocked(double interval_seconds);

  const ThreadPoolExecutor* const executor_;
  const ThreadPoolBackendOptions options_;
  const std::string host_;
  const std::string worker_prefix_;  // "<host>:<pid>/thread-"

  // Tracking state. The maps below are touched by the sampler thread only while it runs, and
  // by the controlling thread otherwise (the join orders the two); tracking_ and
  // series_by_tid_ also by TakeTrackingSegment, under tracking_mu_.
  std::atomic<bool> tracking_on_{false};
  std::mutex tracking_mu_;
  v1::TrackingData tracking_;
  int64_t memory_limit_bytes_ = 0;
  std::map<int64_t, int> series_by_tid_;    // tid -> index into tracking_.workers
  std::map<int64_t, CpuReading> last_cpu_;  // tid -> previous reading
  backends_internal::PeriodicThread sampler_;

  // Runs while tracking when options_.profile; kept after StopTracking until TakeProfiles.
  std::unique_ptr<SamplingProfiler> profiler_;

  mutable std::mutex live_mu_;
  std::optional<BackendLiveProgress> live_;  // guarded by live_mu_

  backends_internal::SpanRegistry spans_{"threadpool"};
  std::map<SpanId, SpanCounters> span_counters_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_THREADPOOL_BACKEND_H_
