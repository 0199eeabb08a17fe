#include "tools/threadpool_engine.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/threadpool/threadpool_backend.h"

namespace roastcoffea {

std::vector<std::string> ThreadPoolEngineProblems(const ThreadPoolEngineOptions& options) {
  std::vector<std::string> problems;
  if (options.threads < 1) {
    problems.push_back(absl::StrCat("--threads must be at least 1, got ", options.threads));
  }
  if (options.profile_hz < 1 || options.profile_hz > 1000) {
    problems.push_back(absl::StrCat("--profile_hz must be in [1, 1000], got ", options.profile_hz));
  }
  return problems;
}

absl::StatusOr<ThreadPoolEngine> MakeThreadPoolEngine(const ThreadPoolEngineOptions& options) {
  if (std::vector<std::string> problems = ThreadPoolEngineProblems(options); !problems.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
  }
  absl::StatusOr<std::unique_ptr<ThreadPoolExecutor>> executor =
      ThreadPoolExecutor::Create(ThreadPoolOptions{options.threads});
  if (!executor.ok()) return executor.status();
  ThreadPoolEngine engine;
  engine.executor = *std::move(executor);
  ThreadPoolBackendOptions backend_options;
  backend_options.task_prefix = kSampleProcessorName;
  backend_options.profile = options.profile;
  backend_options.profile_hz = options.profile_hz;
  engine.backend =
      std::make_unique<ThreadPoolMetricsBackend>(engine.executor.get(), backend_options);
  return engine;
}

}  // namespace roastcoffea
