// The `--backend=threadpool` flags of collect, read into the thread pool's typed options
// (threadpool_engine.h makes the engine from them).
//
// Flags (defined in threadpool_collect.cc):
//   --threads=N        worker threads (default: the CPUs this process may use)
//   --profile          statistical CPU profile of the worker threads
//   --profile_hz=100   its samples per second of each thread's CPU time, 1..1000
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
#define ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_

#include "absl/flags/declare.h"
#include "tools/threadpool_engine.h"

ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(bool, profile);
ABSL_DECLARE_FLAG(int, profile_hz);

namespace roastcoffea {

// The flags above, as typed options (not yet validated).
ThreadPoolEngineOptions ThreadPoolEngineOptionsFromFlags();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
