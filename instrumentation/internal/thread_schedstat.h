// The calling thread's scheduler statistics (/proc/thread-self/schedstat) for chunk
// measurements: how long the thread has run, and how long it has been runnable but waiting for
// a CPU (run-queue delay). Internal to //instrumentation.
//
// The file is "<sum_exec_runtime ns> <run_delay ns> <timeslices>\n". run_delay is exact for the
// calling thread (the kernel adds each wait when the thread gets a CPU, so a running thread's
// value is current). sum_exec_runtime lags by up to one scheduler tick (it is updated at ticks
// and context switches, not at the read), which is why CPU time comes from thread_cpu_clock.h.
//
// Each thread opens the file once, at its first reading, and re-reads it with pread (one system
// call, no allocation: ~1 us); the descriptor is closed when the thread exits. A forked child
// closes the descriptors it inherited (they name the parent's threads) and reopens its own.
// Readings are "unavailable" when the file cannot be opened or read (no procfs, permission) or
// when the kernel does not keep the statistics (it then prints "0 0 0").
// Thread-safety: every function may be called from any thread at any time.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_SCHEDSTAT_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_SCHEDSTAT_H_

#include <cstddef>
#include <cstdint>

namespace roastcoffea {
namespace instrumentation_internal {

struct ThreadSchedstat {
  bool available = false;       // false: the other fields are meaningless (not 0 = "none")
  int64_t exec_runtime_ns = 0;  // sum_exec_runtime: time on a CPU
  int64_t run_delay_ns = 0;     // time runnable, waiting on a run queue
  int64_t timeslices = 0;       // times the thread got a CPU
};

// Parses the text of a schedstat file (not NUL-terminated; `length` bytes). Unavailable when
// the text does not start with three non-negative decimal integers that fit in int64_t, or
// when all three are 0 (the kernel keeps no statistics). No allocation.
ThreadSchedstat ParseThreadSchedstat(const char* text, size_t length);

// The calling thread's statistics now. After the thread's first call: one pread, no lock or
// allocation. Unavailable as described above; a thread that found the file unusable does not
// retry (until it forks).
ThreadSchedstat ReadThreadSchedstat();

// Threads whose schedstat descriptor is open right now: for leak tests.
int ThreadSchedstatOpenDescriptors();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_SCHEDSTAT_H_
