// Process and thread readings used by chunk tracking and section scopes. Internal to
// //instrumentation: other packages get these values through ChunkRecord.
//
// Thread-safety: every function may be called from any thread at any time.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_PROCESS_STATS_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_PROCESS_STATS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace instrumentation_internal {

// Resident set size in bytes from the contents of /proc/<pid>/statm (second field, in pages).
// InvalidArgument, quoting the input, when the text has no resident-pages field or when
// `page_size_bytes` is not positive.
absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view statm_contents,
                                                int64_t page_size_bytes);

// The calling process's resident set size in bytes, read from /proc/self/statm.
// Cost: one pread of a procfs file kept open (a few microseconds; re-opened after a fork).
absl::StatusOr<int64_t> ReadResidentMemoryBytes();

// Same, but 0 when the reading fails (the schema's "unknown").
int64_t ResidentMemoryBytesOrZero();

// CPU time consumed so far by the calling thread, in nanoseconds (thread_cpu_clock.h: a perf
// task clock read without a system call where the kernel allows it, else one clock_gettime
// system call). 0 if no clock is available.
int64_t ThreadCpuTimeNs();

// Monotonic time in nanoseconds (steady_clock), for durations.
int64_t SteadyTimeNs();

// Wall-clock time in nanoseconds since the Unix epoch, UTC (system_clock).
int64_t UnixTimeNs();

// "<hostname>:<pid>", evaluated once per process (again in a forked child, so that it reports
// its own pid); a later change of the host name is not seen.
const std::string& DefaultWorkerName();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_PROCESS_STATS_H_
