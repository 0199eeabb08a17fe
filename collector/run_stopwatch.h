// The clocks of one run: UTC instants, monotonic elapsed time, process CPU time, and this
// machine's state (host facts) over the run.
#ifndef ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_
#define ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_

#include <optional>

#include "absl/time/time.h"
#include "host/clock.h"
#include "host/host_facts.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"  // RunWindow

namespace roastcoffea {

// Started at construction; Stop() reads every clock, and the host, again. Stop() may be called
// more than once (and from any thread): each call gives the window up to then. `clock` (not
// owned, outlives the stopwatch) gives the start (wall) and the elapsed time (monotonic).
class RunStopwatch {
 public:
  explicit RunStopwatch(Clock* clock = Clock::Real());
  RunWindow Stop() const;
  absl::Time start() const { return start_; }

 private:
  Clock* clock_;
  absl::Time start_;
  absl::Duration monotonic_start_;
  double cpu_start_;
  host::HostSnapshot host_start_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_
