#include "instrumentation/internal/run_queue_delay.h"

#include "instrumentation/internal/process_stats.h"
#include "instrumentation/internal/thread_schedstat.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

// The thread's last real reading, bracketed conservatively: `steady_ns` at or before it,
// `cpu_ns` at or after it (in the thread's CPU time). Trivially constructible: a plain TLS
// access. A forked child inherits it, but its thread CPU clock restarts from 0, so the rule
// (cpu time elapsed far below wall time elapsed) makes it read again.
struct RunDelayCache {
  bool valid;
  int64_t steady_ns;
  int64_t cpu_ns;
  int64_t run_delay_ns;
  int64_t preads;
};
thread_local RunDelayCache tls_cache = {};

}  // namespace

RunDelayReading RunDelayAt(int64_t steady_before_cpu_ns, int64_t cpu_ns,
                           int64_t steady_after_cpu_ns) {
  RunDelayCache& cache = tls_cache;
  if (cache.valid) {
    const int64_t wall_ns = steady_after_cpu_ns - cache.steady_ns;
    const int64_t off_cpu_bound_ns = wall_ns - (cpu_ns - cache.cpu_ns) + wall_ns / 1000;
    if (wall_ns >= 0 && off_cpu_bound_ns < kRunDelayToleranceNs) {
      return RunDelayReading{true, cache.run_delay_ns, false};
    }
  }
  const ThreadSchedstat stats = ReadThreadSchedstat();
  const int64_t steady_after_read_ns = SteadyTimeNs();
  ++cache.preads;
  cache.valid = stats.available;
  if (!stats.available) return RunDelayReading{false, 0, true};
  // The thread's CPU time at the reading is at most cpu_ns plus the wall time from before the
  // CPU reading to after this one.
  cache.steady_ns = steady_after_cpu_ns;
  cache.cpu_ns = cpu_ns + (steady_after_read_ns - steady_before_cpu_ns);
  cache.run_delay_ns = stats.run_delay_ns;
  return RunDelayReading{true, stats.run_delay_ns, true};
}

int64_t RunDelayPreadsOnThisThread() { return tls_cache.preads; }

}  // namespace instrumentation_internal
}  // namespace roastcoffea
