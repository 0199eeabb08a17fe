// The thread pool that runs the built-in sample analysis and the backend that samples it, made
// from typed options: usable as a library, without collect's flags (tools/collect_flags.cc
// reads those, threadpool_collect.h, into ThreadPoolEngineOptions).
#ifndef ROASTCOFFEA_TOOLS_THREADPOOL_ENGINE_H_
#define ROASTCOFFEA_TOOLS_THREADPOOL_ENGINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/metrics_backend.h"
#include "backends/threadpool/executor.h"

namespace roastcoffea {

// The task prefix of the sample analysis' fine metrics, as Dask would name the processing tasks
// after the processor class.
inline constexpr char kSampleProcessorName[] = "DijetProcessor";

struct ThreadPoolEngineOptions {
  int threads = 1;       // worker threads, at least 1
  bool profile = false;  // statistical CPU profile of the worker threads
  int profile_hz = 100;  // its samples per second of each thread's CPU time, 1..1000
};

// Problems with `options`, one sentence each naming the flag that sets the field.
std::vector<std::string> ThreadPoolEngineProblems(const ThreadPoolEngineOptions& options);

struct ThreadPoolEngine {
  // Shared: a run that is interrupted may leave a chunk running on it past the grace period.
  std::shared_ptr<ThreadPoolExecutor> executor;
  std::unique_ptr<AbstractMetricsBackend> backend;  // samples `executor`
};

// Starts the worker threads. InvalidArgument naming the flag for a bad value;
// ResourceExhausted when the system refuses a thread.
absl::StatusOr<ThreadPoolEngine> MakeThreadPoolEngine(const ThreadPoolEngineOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_THREADPOOL_ENGINE_H_
