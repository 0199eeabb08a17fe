// Internal to //backends/threadpool: reads the Linux /proc and cgroup files the threadpool
// backend samples. Parsers take the file text so they can be tested on sample text; readers
// return a non-OK status (never crash) when a file is missing, unreadable or malformed.
//
// Thread-safety: every function is thread-safe (no shared state).
// Cost: one small file read per call (a few microseconds).
#ifndef ROASTCOFFEA_BACKENDS_THREADPOOL_PROC_STATS_H_
#define ROASTCOFFEA_BACKENDS_THREADPOOL_PROC_STATS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace threadpool_internal {

// The byte counters of /proc/<pid>/task/<tid>/io.
struct TaskIoCounters {
  int64_t rchar = 0;        // bytes passed to read()-like syscalls (incl. page cache hits)
  int64_t wchar = 0;        // bytes passed to write()-like syscalls
  int64_t read_bytes = 0;   // bytes fetched from the storage layer
  int64_t write_bytes = 0;  // bytes sent to the storage layer
};

// Parses the text of a /proc/.../io file. InvalidArgument naming the missing key or bad value.
absl::StatusOr<TaskIoCounters> ParseTaskIo(absl::string_view text);

// Parses a /proc/.../stat line and returns utime + stime in seconds. The command name (field 2)
// may contain spaces and parentheses, so fields are counted after the last ')'.
absl::StatusOr<double> ParseTaskStatCpuSeconds(absl::string_view text, int64_t ticks_per_second);

// The fields of /proc/<pid>/task/<tid>/schedstat ("<ns on CPU> <ns runnable, waiting> <slices>").
struct TaskSchedstat {
  int64_t exec_runtime_ns = 0;  // sum_exec_runtime; lags up to a tick for a running thread
  int64_t run_delay_ns = 0;     // time runnable, waiting on a run queue
  int64_t timeslices = 0;
};

// Parses the text of a schedstat file. InvalidArgument, quoting the text, when it is not three
// non-negative integers that fit in int64_t; Unavailable for "0 0 0" (the kernel keeps no
// scheduler statistics).
absl::StatusOr<TaskSchedstat> ParseTaskSchedstat(absl::string_view text);

// Parses /proc/self/statm and returns the resident set size in bytes.
absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view text, int64_t page_size_bytes);

// Reading files and the cgroup limits are //host:linux_files' (host::ReadSmallFile, ...).

// /proc/self/task/<tid>/io of a thread of this process.
absl::StatusOr<TaskIoCounters> ReadTaskIo(int64_t tid);

// /proc/self/task/<tid>/schedstat of a thread of this process.
absl::StatusOr<TaskSchedstat> ReadTaskSchedstat(int64_t tid);

// CPU time of a thread of this process: sum_exec_runtime of /proc/self/task/<tid>/schedstat
// (nanoseconds), else utime + stime of /proc/self/task/<tid>/stat (clock-tick resolution,
// usually 10 ms) when the kernel has no schedstat.
absl::StatusOr<double> ReadTaskCpuSeconds(int64_t tid);

// Resident set size of this process from /proc/self/statm.
absl::StatusOr<int64_t> ReadResidentBytes();

// The memory this process may use: its cgroup memory limit (host::CgroupMemoryLimitBytes),
// capped at the physical memory; physical memory when there is no limit.
int64_t MemoryLimitBytes();

}  // namespace threadpool_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_THREADPOOL_PROC_STATS_H_
