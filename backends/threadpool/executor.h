// ThreadPoolExecutor: the in-process engine. Runs a processor over work items on N worker
// threads and merges the outputs.
//
//   absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
//       ThreadPoolExecutor::Create(ThreadPoolOptions{/*threads=*/4});
//   absl::StatusOr<Histogram> total =
//       (*executor)->Map<Histogram>(chunks.size(), [&](size_t i) { return Process(chunks[i]); });
//
// Thread-safety: Map is meant to be called from one thread at a time (concurrent calls are
// serialised); calling Map from inside a work item returns FailedPrecondition instead of
// deadlocking. Snapshot and threads() may be called from any thread at any time, e.g. by a
// metrics sampler while Map runs.
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_EXECUTOR_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_EXECUTOR_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace roastcoffea {

struct ThreadPoolOptions {
  // Worker threads. 0 = all cores (std::thread::hardware_concurrency, at least 1).
  int threads = 0;
};

// One worker thread as seen at Snapshot time.
struct WorkerThreadSnapshot {
  int index = 0;             // 0 .. threads()-1, stable for the executor's life
  int64_t thread_index = 0;  // ThreadIndexOf(index): the thread_index of its chunk records
  int64_t tid = 0;           // Linux thread id
  bool executing = false;    // running a work item now
  // CPU time the thread has used since it started (pthread_getcpuclockid); -1 when unknown.
  double cpu_seconds = -1;
  // Wall time the thread has spent inside work items (monotonic clock), incl. the current one.
  double busy_seconds = 0;
  int64_t items_completed = 0;  // work items finished (successfully or not)
};

struct ExecutorSnapshot {
  int worker_threads = 0;            // live worker threads
  int executing = 0;                 // work items running now
  int queued = 0;                    // work items of the current Map not yet taken by a thread
  std::vector<int64_t> worker_tids;  // Linux tids of live workers, in worker index order
  std::vector<WorkerThreadSnapshot> workers;  // parallel to worker_tids
};

class ThreadPoolExecutor {
 public:
  // Starts the worker threads and waits until each has registered its tid.
  // InvalidArgument("threads must be >= 0, got -3") for a negative count, or above kMaxThreads;
  // ResourceExhausted when the system refuses to start a thread.
  static absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> Create(
      const ThreadPoolOptions& options);

  static constexpr int kMaxThreads = 4096;

  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;

  // Stops and joins the worker threads. Must not run while Map runs.
  ~ThreadPoolExecutor();

  // Number of worker threads (fixed at Create).
  int threads() const { return static_cast<int>(workers_.size()); }

  // The chunk-record thread_index of worker `worker` (//instrumentation ReserveThreadIndices):
  // its records and anything named after the worker ("host:pid/thread-<i>") agree.
  int64_t ThreadIndexOf(int worker) const { return first_thread_index_ + worker; }

  // Runs fn(i) for every i in [0, n) on the worker threads. Scheduling is dynamic: each thread
  // takes the next index when it is free. Each thread accumulates its results locally with
  // Output::operator+= (its first result is moved in), then the per-thread partials are merged
  // in worker order on the calling thread. Requires Output to be default constructible (the
  // result of n == 0) and fn(i) to return something `Output += ` accepts (Output itself works).
  //
  // An exception escaping fn (or operator+=) stops the run: no new items start, running ones
  // finish, and Map returns Internal("work item 7 threw: <what()>"). An exception while merging
  // the partials returns Internal("merging per-thread results threw: <what()>").
  // Blocks until all items ran. Cost: one std::function call per item plus the merges.
  template <typename Output, typename Fn>
  absl::StatusOr<Output> Map(size_t n, Fn&& fn);

  // Counters of the pool right now. Thread-safe; cost: one clock_gettime per worker.
  ExecutorSnapshot Snapshot() const;

 private:
  // Per-worker state written by the worker and read by Snapshot from other threads.
  struct WorkerState {
    std::atomic<int64_t> tid{0};
    std::atomic<bool> executing{false};
    std::atomic<int64_t> busy_ns{0};        // finished items only
    std::atomic<int64_t> item_start_ns{0};  // steady clock; valid while executing
    std::atomic<int64_t> items_completed{0};
  };

  using ItemBody = std::function<void(int worker, size_t item)>;

  ThreadPoolExecutor() = default;
  void WorkerLoop(int index);
  // Runs body(worker, i) for every i in [0, n) on the workers; the non-template core of Map.
  absl::Status Run(size_t n, const ItemBody& body);
  // Internal status for an exception thrown while merging the per-thread partials.
  static absl::Status MergeFailure(std::exception_ptr exception);

  int64_t first_thread_index_ = 0;
  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<WorkerState>> states_;
  std::atomic<int> live_workers_{0};

  std::mutex run_mutex_;  // serialises Map calls

  std::mutex mutex_;  // guards the fields below
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  uint64_t generation_ = 0;
  bool shutting_down_ = false;
  int registered_workers_ = 0;
  int workers_in_job_ = 0;
  const ItemBody* body_ = nullptr;
  absl::Status job_status_;

  // Read lock-free by workers and by Snapshot.
  std::atomic<size_t> job_size_{0};
  std::atomic<size_t> next_item_{0};
  std::atomic<bool> job_running_{false};
  std::atomic<bool> stop_job_{false};
};

template <typename Output, typename Fn>
absl::StatusOr<Output> ThreadPoolExecutor::Map(size_t n, Fn&& fn) {
  // Slot k is touched only by worker k while Run is in progress.
  std::vector<std::optional<Output>> partials(workers_.size());
  const ItemBody body = [&partials, &fn](int worker, size_t item) {
    std::optional<Output>& partial = partials[static_cast<size_t>(worker)];
    if (partial.has_value()) {
      *partial += fn(item);
    } else {
      partial.emplace(fn(item));
    }
  };
  absl::Status status = Run(n, body);
  if (!status.ok()) return status;
  std::optional<Output> merged;
  try {
    for (std::optional<Output>& partial : partials) {
      if (!partial.has_value()) continue;
      if (merged.has_value()) {
        *merged += std::move(*partial);
      } else {
        merged.emplace(std::move(*partial));
      }
    }
  } catch (...) {
    return MergeFailure(std::current_exception());
  }
  if (!merged.has_value()) return Output{};
  return std::move(*merged);
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_EXECUTOR_H_
