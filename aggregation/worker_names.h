// One naming of worker threads for every output: tables, the Gantt chart, traces and
// profiles. The threadpool backend names its worker series and profiles "host:pid/thread-k";
// a chunk record carries the process ("host:pid", or a Dask worker's address) and the thread
// index separately. WorkerThreadName joins them the same way, so that a trace lane, a table
// row and a Gantt row of the same thread read alike.
//
// Thread-safety: pure functions.
#ifndef ROASTCOFFEA_AGGREGATION_WORKER_NAMES_H_
#define ROASTCOFFEA_AGGREGATION_WORKER_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace roastcoffea {

// "<worker>/thread-<thread_index>": "vm:635", 0 -> "vm:635/thread-0". A worker that already
// names its thread ("vm:635/thread-0") is returned as it is; an empty worker is "worker"; a
// negative index (unknown) gives the worker alone.
std::string WorkerThreadName(absl::string_view worker, int64_t thread_index);

// The process part of a worker name: "vm:635/thread-0" -> "vm:635"; other names unchanged.
std::string WorkerProcessName(absl::string_view worker);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_WORKER_NAMES_H_
