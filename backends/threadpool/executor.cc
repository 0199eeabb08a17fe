#include "backends/threadpool/executor.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "instrumentation/chunk_tracking.h"

namespace roastcoffea {
namespace {

// The executor whose worker is the current thread; lets Map detect a call from a work item.
thread_local const ThreadPoolExecutor* current_executor = nullptr;

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ExceptionText(std::exception_ptr exception) {
  try {
    std::rethrow_exception(exception);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception (not derived from std::exception)";
  }
}

// CPU time used so far by a live thread of this process; -1 when the clock is unavailable.
double ThreadCpuSeconds(std::thread::native_handle_type handle) {
  clockid_t clock;
  if (pthread_getcpuclockid(handle, &clock) != 0) return -1;
  timespec now;
  if (clock_gettime(clock, &now) != 0) return -1;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> ThreadPoolExecutor::Create(
    const ThreadPoolOptions& options) {
  if (options.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("threads must be >= 0, got ", options.threads));
  }
  if (options.threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("threads must be <= ", kMaxThreads, ", got ", options.threads));
  }
  int threads = options.threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());

  std::unique_ptr<ThreadPoolExecutor> executor(new ThreadPoolExecutor());
  executor->first_thread_index_ = ReserveThreadIndices(threads);
  executor->states_.reserve(threads);
  for (int i = 0; i < threads; ++i) executor->states_.push_back(std::make_unique<WorkerState>());
  executor->workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    try {
      executor->workers_.emplace_back(&ThreadPoolExecutor::WorkerLoop, executor.get(), i);
    } catch (const std::system_error& e) {
      // The destructor stops and joins the threads started so far, once they registered.
      {
        std::unique_lock<std::mutex> lock(executor->mutex_);
        executor->work_done_.wait(lock, [&] { return executor->registered_workers_ == i; });
      }
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot start worker thread ", i, " of ", threads, ": ", e.what()));
    }
  }
  std::unique_lock<std::mutex> lock(executor->mutex_);
  executor->work_done_.wait(lock, [&] { return executor->registered_workers_ == threads; });
  lock.unlock();
  return executor;
}

ThreadPoolExecutor::~ThreadPoolExecutor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutting_down_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPoolExecutor::WorkerLoop(int index) {
  current_executor = this;
  AdoptThreadIndex(ThreadIndexOf(index));
  WorkerState& state = *states_[index];
  state.tid.store(static_cast<int64_t>(syscall(SYS_gettid)));
  live_workers_.fetch_add(1);
  uint64_t seen_generation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_generation = generation_;
    ++registered_workers_;
  }
  work_done_.notify_all();

  while (true) {
    const ItemBody* body;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return shutting_down_ || generation_ != seen_generation; });
      if (shutting_down_) break;
      seen_generation = generation_;
      body = body_;
    }
    const size_t n = job_size_.load();
    while (!stop_job_.load()) {
      const size_t item = next_item_.fetch_add(1);
      if (item >= n) break;
      const int64_t start_ns = SteadyNowNs();
      state.item_start_ns.store(start_ns);
      state.executing.store(true);
      absl::Status failure;
      try {
        (*body)(index, item);
      } catch (...) {
        failure = absl::InternalError(
            absl::StrCat("work item ", item, " threw: ", ExceptionText(std::current_exception())));
      }
      state.busy_ns.fetch_add(SteadyNowNs() - start_ns);
      state.executing.store(false);
      state.items_completed.fetch_add(1);
      if (!failure.ok()) {
        stop_job_.store(true);
        std::lock_guard<std::mutex> lock(mutex_);
        if (job_status_.ok()) job_status_ = failure;  // the first failure wins
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--workers_in_job_ == 0) work_done_.notify_all();
    }
  }
  live_workers_.fetch_sub(1);
}

absl::Status ThreadPoolExecutor::Run(size_t n, const ItemBody& body) {
  if (current_executor == this) {
    return absl::FailedPreconditionError(
        "Map called from inside a work item of the same executor (would deadlock)");
  }
  if (n == 0) return absl::OkStatus();
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  job_status_ = absl::OkStatus();
  job_size_.store(n);
  next_item_.store(0);
  stop_job_.store(false);
  job_running_.store(true);
  workers_in_job_ = threads();
  ++generation_;
  work_ready_.notify_all();
  work_done_.wait(lock, [&] { return workers_in_job_ == 0; });
  job_running_.store(false);
  body_ = nullptr;
  return job_status_;
}

absl::Status ThreadPoolExecutor::MergeFailure(std::exception_ptr exception) {
  return absl::InternalError(
      absl::StrCat("merging per-thread results threw: ", ExceptionText(exception)));
}

ExecutorSnapshot ThreadPoolExecutor::Snapshot() const {
  ExecutorSnapshot snapshot;
  snapshot.worker_threads = live_workers_.load();
  if (job_running_.load() && !stop_job_.load()) {
    const size_t n = job_size_.load();
    const size_t next = next_item_.load();
    snapshot.queued = static_cast<int>(next < n ? n - next : 0);
  }
  const int64_t now_ns = SteadyNowNs();
  for (size_t i = 0; i < states_.size(); ++i) {
    const WorkerState& state = *states_[i];
    WorkerThreadSnapshot worker;
    worker.index = static_cast<int>(i);
    worker.thread_index = ThreadIndexOf(worker.index);
    worker.tid = state.tid.load();
    worker.executing = state.executing.load();
    int64_t busy_ns = state.busy_ns.load();
    if (worker.executing) busy_ns += std::max<int64_t>(0, now_ns - state.item_start_ns.load());
    worker.busy_seconds = static_cast<double>(busy_ns) * 1e-9;
    worker.items_completed = state.items_completed.load();
    worker.cpu_seconds = ThreadCpuSeconds(const_cast<std::thread&>(workers_[i]).native_handle());
    if (worker.executing) ++snapshot.executing;
    snapshot.worker_tids.push_back(worker.tid);
    snapshot.workers.push_back(worker);
  }
  return snapshot;
}

}  // namespace roastcoffea
