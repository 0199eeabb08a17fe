// Test helper: blocks work items until released, so a test can look at the pool mid-run.
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_TEST_GATE_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_TEST_GATE_H_

#include <condition_variable>
#include <mutex>

namespace roastcoffea {

class Gate {
 public:
  // Called by a work item: counts it as arrived, then waits until Open().
  void Arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  void WaitForArrivals(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return arrived_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  bool open_ = false;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_TEST_GATE_H_
