// A Clock for tests: time moves only when the test moves it, and the test can wait until a
// thread has read the clock since (so that "nothing happened yet" needs no sleep).
#ifndef ROASTCOFFEA_COLLECTOR_FAKE_CLOCK_H_
#define ROASTCOFFEA_COLLECTOR_FAKE_CLOCK_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/time/time.h"
#include "collector/clock.h"

namespace roastcoffea {

class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time now = absl::FromUnixSeconds(1800000000)) : wall_(now) {}

  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return wall_;
  }
  absl::Duration Monotonic() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++monotonic_reads_;
    read_.notify_all();
    return monotonic_;
  }

  // Moves both readings forward by `duration`.
  void Advance(absl::Duration duration) {
    std::lock_guard<std::mutex> lock(mu_);
    wall_ += duration;
    monotonic_ += duration;
  }
  // Steps the wall clock only (forward or back), as NTP or `date -s` would.
  void StepWallClock(absl::Duration step) {
    std::lock_guard<std::mutex> lock(mu_);
    wall_ += step;
  }

  // How often Monotonic() was read so far.
  int64_t monotonic_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return monotonic_reads_;
  }
  // Until Monotonic() has been read more than `reads` times, or `timeout` of real time; true
  // when it was.
  bool WaitForMonotonicReadsAfter(int64_t reads, absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return read_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                          [&] { return monotonic_reads_ > reads; });
  }

 private:
  std::mutex mu_;
  std::condition_variable read_;
  absl::Time wall_;
  absl::Duration monotonic_ = absl::Hours(1);
  int64_t monotonic_reads_ = 0;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_FAKE_CLOCK_H_
