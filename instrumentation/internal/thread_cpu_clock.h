// The calling thread's CPU time for chunk and section measurements. Internal to
// //instrumentation (process_stats.h's ThreadCpuTimeNs reads it).
//
// Sources, chosen once per thread at its first reading:
//   * kPerfUserPage: a per-thread perf_event task clock (software event, no PMU needed) whose
//     first page is mapped and read from user space: time_running of the last kernel update
//     plus the TSC time since, under the page's seqlock. No system call (~10-20 ns). Needs
//     perf_event_open (perf_event_paranoid <= 2: exclude_kernel is set; the task clock counts
//     kernel time anyway) and a page with cap_user_time (the kernel publishes a TSC -> ns
//     conversion only when its sched_clock is the native TSC: not in KVM guests using
//     kvm-clock, such as this project's CI VM).
//   * kClockGettime: clock_gettime(CLOCK_THREAD_CPUTIME_ID), one system call per reading
//     (~150 ns on bare metal, ~600 ns in a VM). Used whenever the perf page is not usable.
// The perf task clock counts the time the thread was on a CPU as the guest kernel sees it,
// including time stolen by a hypervisor, which CLOCK_THREAD_CPUTIME_ID leaves out: so the perf
// source is not used when /proc/stat shows steal time, or when ROASTCOFFEA_THREAD_CPU_CLOCK is
// "clock_gettime". Perf readings are offset to the thread's clock_gettime value at first use,
// so both sources count from the thread's start.
//
// Per-thread resources (one descriptor, one mapped page) are released when the thread exits;
// a forked child drops the parent's (the mapping is not inherited) and opens its own.
// Thread-safety: every function may be called from any thread at any time.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_CPU_CLOCK_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_CPU_CLOCK_H_

#include <cstdint>

struct perf_event_mmap_page;  // <linux/perf_event.h>

namespace roastcoffea {
namespace instrumentation_internal {

enum class ThreadCpuClockSource { kClockGettime, kPerfUserPage };

// "clock_gettime" or "perf_user_page".
const char* ThreadCpuClockSourceName(ThreadCpuClockSource source);

// CPU time consumed so far by the calling thread, in nanoseconds; 0 if no clock is available.
// After the thread's first call: no system call (perf source), lock or allocation.
int64_t ThreadCpuClockNs();

// The source of the calling thread's readings (choosing it now if this is the first use).
ThreadCpuClockSource CallingThreadCpuClockSource();

// The task clock in a perf_event_mmap_page extrapolated to now: time_running of the kernel's
// last update plus the TSC cycles since, converted with the page's time_mult / time_shift /
// time_offset, read consistently under the page's `lock` seqlock. False when the page has no
// TSC conversion (cap_user_time = 0). `read_tsc` is the cycle counter (rdtsc; a fake in tests).
bool ReadPerfTaskClockNs(const volatile perf_event_mmap_page& page, uint64_t (*read_tsc)(),
                         int64_t* ns);

// Tests only. Applies to threads whose first reading comes after the call.
struct ThreadCpuClockTestOptions {
  // false: clock_gettime only.
  bool allow_perf_event = true;
  // Keep the perf event even when its page has no TSC conversion (readings then use the last
  // kernel update only, wrong between updates): lets lifecycle tests (thread exit, fork) run on
  // machines without cap_user_time.
  bool keep_perf_event_without_user_time = false;
};
void SetThreadCpuClockTestOptions(const ThreadCpuClockTestOptions& options);

// Threads whose perf event is open right now (descriptor and mapping held): for leak tests.
int ThreadCpuClockOpenPerfEvents();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_THREAD_CPU_CLOCK_H_
