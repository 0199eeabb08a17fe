// The calling thread's run-queue delay (run_delay of thread_schedstat.h) at a chunk's start
// and end, without the schedstat pread when the value cannot have moved by more than
// kRunDelayToleranceNs since the thread's last reading. Internal to //instrumentation.
//
// Why a reading may be reused: run_delay grows only while the thread is off its CPU (runnable,
// waiting for one). Between two moments at which the thread runs, the time it spent off its CPU
// is at most the steady-clock time elapsed minus the thread-CPU time elapsed. So when, since
// the last real reading, the steady clock advanced by less than the thread's CPU time plus
// kRunDelayToleranceNs, that reading is still right to within the tolerance: the thread was on
// its CPU all along but for (at most) that long. A margin of elapsed / 1000 covers the two
// clocks' rate difference (NTP slews CLOCK_MONOTONIC by at most 500 ppm), so readings are only
// reused within about 1 ms of a real one: chunks of a millisecond or more always read. Back to
// back short chunks (the wrapper's own cost matters most there) read about once per
// millisecond instead of twice per chunk.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_RUN_QUEUE_DELAY_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_RUN_QUEUE_DELAY_H_

#include <cstdint>

namespace roastcoffea {
namespace instrumentation_internal {

// The most a reused reading can be behind the real run_delay.
inline constexpr int64_t kRunDelayToleranceNs = 2000;

struct RunDelayReading {
  bool available = false;  // false: no schedstat here (the chunk then has no wait)
  int64_t run_delay_ns = 0;
  bool pread = false;  // a system call was made now (else the last reading was reused)
};

// run_delay as of the moment the thread CPU clock read `cpu_ns` (ThreadCpuTimeNs), with the
// steady clock (SteadyTimeNs) read just before (`steady_before_cpu_ns`) and just after
// (`steady_after_cpu_ns`) that CPU reading. Reuses the thread's last real reading when the rule
// above allows, else preads /proc/thread-self/schedstat and remembers the result. No lock or
// allocation after the thread's first reading.
RunDelayReading RunDelayAt(int64_t steady_before_cpu_ns, int64_t cpu_ns,
                           int64_t steady_after_cpu_ns);

// Real schedstat readings RunDelayAt made on this thread so far: for tests.
int64_t RunDelayPreadsOnThisThread();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_RUN_QUEUE_DELAY_H_
