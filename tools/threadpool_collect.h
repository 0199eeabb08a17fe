// The `--backend=threadpool` flags of collect and the factory that turns them into the thread
// pool that runs the built-in sample analysis and the backend that samples it.
//
// Flags (defined in threadpool_collect.cc):
//   --threads=N        worker threads (default: the CPUs this process may use)
//   --profile          statistical CPU profile of the worker threads
//   --profile_hz=100   its samples per second of each thread's CPU time, 1..1000
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
#define ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "backends/metrics_backend.h"
#include "backends/threadpool/executor.h"

ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(bool, profile);
ABSL_DECLARE_FLAG(int, profile_hz);

namespace roastcoffea {

// The task prefix of the sample analysis' fine metrics, as Dask would name the processing tasks
// after the processor class.
inline constexpr char kSampleProcessorName[] = "DijetProcessor";

// Problems with the flags above, one sentence each naming its flag.
std::vector<std::string> ThreadPoolFlagProblems();

struct ThreadPoolEngine {
  // Shared: a run that is interrupted may leave a chunk running on it past the grace period.
  std::shared_ptr<ThreadPoolExecutor> executor;
  std::unique_ptr<AbstractMetricsBackend> backend;  // samples `executor`
};

// Starts the worker threads. InvalidArgument naming the flag for a bad value;
// ResourceExhausted when the system refuses a thread.
absl::StatusOr<ThreadPoolEngine> MakeThreadPoolEngineFromFlags();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_THREADPOOL_COLLECT_H_
