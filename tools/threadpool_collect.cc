#include "tools/threadpool_collect.h"

#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/threadpool/threadpool_backend.h"
#include "host/host_facts.h"

ABSL_FLAG(int, threads, roastcoffea::host::UsableWholeCpus(),
          "Worker threads that process chunks (default: the CPUs this process may use: its "
          "affinity mask and cgroup CPU quota).");
ABSL_FLAG(bool, profile, false,
          "threadpool: also take a statistical CPU profile of the worker threads (call trees "
          "per worker and per timed section, samples per chunk; under 1 % overhead at 100 Hz). "
          "Read it with `collect profile DIR`.");
ABSL_FLAG(int, profile_hz, 100,
          "threadpool with --profile: samples per second of each worker thread's CPU time, "
          "1..1000.");

namespace roastcoffea {

std::vector<std::string> ThreadPoolFlagProblems() {
  std::vector<std::string> problems;
  if (absl::GetFlag(FLAGS_threads) < 1) {
    problems.push_back(
        absl::StrCat("--threads must be at least 1, got ", absl::GetFlag(FLAGS_threads)));
  }
  if (absl::GetFlag(FLAGS_profile_hz) < 1 || absl::GetFlag(FLAGS_profile_hz) > 1000) {
    problems.push_back(
        absl::StrCat("--profile_hz must be in [1, 1000], got ", absl::GetFlag(FLAGS_profile_hz)));
  }
  return problems;
}

absl::StatusOr<ThreadPoolEngine> MakeThreadPoolEngineFromFlags() {
  if (std::vector<std::string> problems = ThreadPoolFlagProblems(); !problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  }
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create(ThreadPoolOptions{absl::GetFlag(FLAGS_threads)});
  if (!executor.ok()) return executor.status();
  ThreadPoolEngine engine;
  engine.executor = *std::move(executor);
  ThreadPoolBackendOptions options;
  options.task_prefix = kSampleProcessorName;
  options.profile = absl::GetFlag(FLAGS_profile);
  options.profile_hz = absl::GetFlag(FLAGS_profile_hz);
  engine.backend = std::make_unique<ThreadPoolMetricsBackend>(engine.executor.get(), options);
  return engine;
}

}  // namespace roastcoffea
