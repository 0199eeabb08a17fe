// PeriodicThread: the one sampling loop of the backends (threadpool sampler, Dask poller,
// TaskVine log follower). Calls a function at a fixed rate on a thread of its own until Stop.
//
// Fixed rate: ticks are due at start + k x period. A tick that overruns skips the ticks it
// missed (the next one is the first due time still ahead) instead of running them in a burst.
// Stop wakes the waiting thread at once, lets a running tick finish, and joins. Due times are
// on the monotonic reading of the injected clock: a step of the wall clock changes no wait,
// and a test moves a FakeClock (host/fake_clock.h) instead of sleeping.
//
// Thread-safety: Start and Stop from one controlling thread; `tick` runs on the periodic thread.
#ifndef ROASTCOFFEA_BACKENDS_INTERNAL_PERIODIC_THREAD_H_
#define ROASTCOFFEA_BACKENDS_INTERNAL_PERIODIC_THREAD_H_

#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "host/clock.h"

namespace roastcoffea {
namespace backends_internal {

struct PeriodicThreadOptions {
  absl::Duration period = absl::Seconds(1);
  // Run one tick as soon as the thread starts (at start + 0), not only after one period.
  bool tick_at_start = false;
  // What due times are read on (null: Clock::Real()). Not owned; outlives the thread.
  Clock* clock = Clock::Real();
};

// OkStatus when `period` is positive and finite, else InvalidArgument naming it as `what`
// ("tracking interval"): the check of PeriodicThread::Start and of every backend's
// StartTracking.
absl::Status CheckPeriod(absl::Duration period, absl::string_view what);

// When the tick after one due at `due` runs, the tick having finished at `now` (monotonic
// readings): the first of due + k x period (k >= 1) that is later than `now`, or due + period
// when that is. `period` > 0.
absl::Duration NextTickAfter(absl::Duration due, absl::Duration period, absl::Duration now);

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread();  // Stop()
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread. InvalidArgument for a period that is not positive and finite,
  // FailedPrecondition while running.
  absl::Status Start(PeriodicThreadOptions options, std::function<void()> tick);
  // Stops the thread and joins it; no tick runs after Stop returns. Idempotent.
  void Stop();
  bool running() const { return thread_.joinable(); }

 private:
  void Loop(PeriodicThreadOptions options, std::function<void()> tick);

  std::thread thread_;
  StopToken stop_;
};

}  // namespace backends_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_INTERNAL_PERIODIC_THREAD_H_
