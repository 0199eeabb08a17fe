// The `--backend=threadpool` flags of collect. tools/collect_flags.cc reads them into the
// thread pool's typed options (ThreadPoolEngineOptions); threadpool_engine.h makes the engine
// from those.
//
// Flags (defined in threadpool_collect.cc, declared below for the one reader):
//   --threads=N        worker threads (default: the CPUs this process may use)
//   --profile          statistical CPU profile of the worker threads
//   --profile_hz=100   its samples per second of each thread's CPU time, 1..1000
#ifndef ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
#define ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(bool, profile);
ABSL_DECLARE_FLAG(int, profile_hz);

#endif  // ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
