// The clocks of one run: UTC instants, monotonic elapsed time, process CPU time, and this
// machine's state (host facts) over the run.
#ifndef ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_
#define ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_

#include <chrono>
#include <optional>

#include "absl/time/time.h"
#include "host/host_facts.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"  // RunWindow

namespace roastcoffea {

// Started at construction; Stop() reads every clock, and the host, again. Stop() may be called
// more than once (and from any thread): each call gives the window up to then.
class RunStopwatch {
 public:
  RunStopwatch();
  RunWindow Stop() const;
  absl::Time start() const { return start_; }

 private:
  absl::Time start_;
  std::chrono::steady_clock::time_point steady_start_;
  double cpu_start_;
  host::HostSnapshot host_start_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_RUN_STOPWATCH_H_
