// The time the collector reads, injected (LevelDB's Env is the model): deadlines use the
// monotonic reading, so that a step of the wall clock (NTP, `date -s`) neither stretches nor
// cuts them, and tests move a fake clock (collector/fake_clock.h) instead of sleeping.
#ifndef ROASTCOFFEA_COLLECTOR_CLOCK_H_
#define ROASTCOFFEA_COLLECTOR_CLOCK_H_

#include "absl/time/time.h"

namespace roastcoffea {

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;

  // Wall-clock time: for timestamps, never for deadlines.
  virtual absl::Time Now() = 0;
  // Time since a fixed, arbitrary point; never steps backward or with the wall clock: for
  // deadlines and durations.
  virtual absl::Duration Monotonic() = 0;

  // The process's real clock (absl::Now, std::chrono::steady_clock). Never null; not owned.
  static Clock* Real();
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_CLOCK_H_
