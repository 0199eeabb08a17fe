// A one-shot list of independent jobs shared by the calling thread and one helper thread
// (internal to //aggregation). Uses std::mutex/std::condition_variable/std::atomic only, so
// ThreadSanitizer sees every synchronisation.
#ifndef ROASTCOFFEA_AGGREGATION_JOB_QUEUE_H_
#define ROASTCOFFEA_AGGREGATION_JOB_QUEUE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {

// Usage: the helper thread calls Work() when it has nothing else to do; the owner calls
// Publish(jobs) once, then Work() itself, then joins the helper. Cancel() instead of Publish
// releases a waiting helper without running anything (error paths). Each job runs exactly
// once, on either thread; jobs must write to disjoint data.
class JobQueue {
 public:
  void Publish(std::vector<std::function<void()>> jobs) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_ = std::move(jobs);
      ready_ = true;
    }
    ready_changed_.notify_all();
  }
  void Cancel() { Publish({}); }
  // Waits until jobs are published, then runs jobs until none is left.
  void Work() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_changed_.wait(lock, [this] { return ready_; });
    }
    for (size_t i = next_.fetch_add(1); i < jobs_.size(); i = next_.fetch_add(1)) jobs_[i]();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_changed_;
  bool ready_ = false;  // guarded by mutex_; jobs_ is immutable once ready_
  std::vector<std::function<void()>> jobs_;
  std::atomic<size_t> next_{0};
};

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_JOB_QUEUE_H_
