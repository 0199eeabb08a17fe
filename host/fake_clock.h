// A Clock for tests: time moves only when the test moves it (Advance wakes the threads
// waiting in WaitUntil), and the test can wait until a thread has read the clock or is
// waiting on it (so that "nothing happened yet" needs no sleep).
#ifndef ROASTCOFFEA_HOST_FAKE_CLOCK_H_
#define ROASTCOFFEA_HOST_FAKE_CLOCK_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/time/time.h"
#include "host/clock.h"

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
    changed_.notify_all();
    return monotonic_;
  }
  bool WaitUntil(absl::Duration deadline, const StopToken& stop) override {
    const std::shared_ptr<StopToken::State> state = stop.state();
    std::unique_lock<std::mutex> state_lock(state->mu);
    // Registered before the time is read: an Advance after the read notifies this wait.
    {
      std::lock_guard<std::mutex> lock(mu_);
      waiting_.push_back({state, deadline});
      changed_.notify_all();
    }
    bool stopped = false;
    while (true) {
      if (state->stopped) {
        stopped = true;
        break;
      }
      if (Monotonic() >= deadline) break;
      state->wake.wait(state_lock);
    }
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.erase(std::find_if(waiting_.begin(), waiting_.end(),
                                [&](const Waiter& waiter) { return waiter.state == state; }));
    changed_.notify_all();
    return stopped;
  }

  // Moves both readings forward by `duration`, and wakes the waiting threads.
  void Advance(absl::Duration duration) {
    std::vector<Waiter> waiting;
    {
      std::lock_guard<std::mutex> lock(mu_);
      wall_ += duration;
      monotonic_ += duration;
      waiting = waiting_;
    }
    // Under each waiter's lock: a waiter is either before its check (and reads the new time)
    // or inside wait() (and is woken).
    for (const Waiter& waiter : waiting) {
      std::lock_guard<std::mutex> lock(waiter.state->mu);
      waiter.state->wake.notify_all();
    }
  }
  // Lets the threads waiting on this clock run `steps` times: each time once `waiters` of them
  // wait for a deadline ahead, moves the clock by `step`; returns once they wait again. A
  // periodic thread whose period is at most `step` then ticks exactly once per step. False
  // when they did not wait within `timeout` of real time (at each step).
  bool AdvanceInSteps(absl::Duration step, int steps = 1, int waiters = 1,
                      absl::Duration timeout = absl::Seconds(60)) {
    for (int i = 0; i < steps; ++i) {
      if (!WaitForWaiters(waiters, timeout)) return false;
      Advance(step);
    }
    return WaitForWaiters(waiters, timeout);
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
    return changed_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                             [&] { return monotonic_reads_ > reads; });
  }
  // Until at least `threads` calls of WaitUntil wait for a deadline still ahead (so that only
  // an Advance or a stop ends them), or `timeout` of real time; true when they do.
  bool WaitForWaiters(int threads, absl::Duration timeout = absl::Seconds(60)) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] {
      return std::count_if(waiting_.begin(), waiting_.end(), [&](const Waiter& waiter) {
               return waiter.deadline > monotonic_;
             }) >= threads;
    });
  }

 private:
  std::mutex mu_;  // taken after a StopToken's, never before
  std::condition_variable changed_;
  absl::Time wall_;
  absl::Duration monotonic_ = absl::Hours(1);
  int64_t monotonic_reads_ = 0;
  struct Waiter {
    std::shared_ptr<StopToken::State> state;
    absl::Duration deadline;
  };
  std::vector<Waiter> waiting_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_FAKE_CLOCK_H_
