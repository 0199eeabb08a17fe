// The time the collector and the backends read, injected (LevelDB's Env is the model):
// deadlines and periods use the monotonic reading, so that a step of the wall clock (NTP,
// `date -s`) neither stretches nor cuts them, and tests move a fake clock (host/fake_clock.h)
// instead of sleeping.
#ifndef ROASTCOFFEA_HOST_CLOCK_H_
#define ROASTCOFFEA_HOST_CLOCK_H_

#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/time/time.h"

namespace roastcoffea {

// Ends Clock::WaitUntil early, from any thread: the stop of a periodic loop. Once requested
// the stop stays until Reset. Thread-safe.
class StopToken {
 public:
  // What a Clock waits on: `stopped` is guarded by `mu`; `wake` is notified when it is set
  // (and, for a fake clock, when time moves).
  struct State {
    std::mutex mu;
    std::condition_variable wake;
    bool stopped = false;
  };

  StopToken() : state_(std::make_shared<State>()) {}
  void RequestStop();
  bool stop_requested() const;
  void Reset();
  // For Clock implementations (shared: a fake clock may notify it after the wait returned).
  const std::shared_ptr<State>& state() const { return state_; }

 private:
  std::shared_ptr<State> state_;
};

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  // Wall-clock time: for timestamps, never for deadlines.
  virtual absl::Time Now() = 0;
  // Time since a fixed, arbitrary point; never steps backward or with the wall clock: for
  // deadlines and durations.
  virtual absl::Duration Monotonic() = 0;
  // Blocks until Monotonic() reaches `deadline` or `stop` is requested; true when stopped
  // (also when it already was on entry).
  virtual bool WaitUntil(absl::Duration deadline, const StopToken& stop) = 0;

  // WaitUntil without a stop.
  void SleepUntil(absl::Duration deadline);
  void SleepFor(absl::Duration duration) { SleepUntil(Monotonic() + duration); }

  // The process's real clock (absl::Now, std::chrono::steady_clock). Never null; not owned.
  static Clock* Real();
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_HOST_CLOCK_H_
