// The engine backends collect can measure a run with, by the name given to --backend.
#ifndef ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_
#define ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "backends/metrics_backend.h"
#include "backends/threadpool/executor.h"
#include "tools/run_config.h"

namespace roastcoffea {

struct CollectBackend {
  // threadpool: the pool that runs the built-in sample analysis (`metrics` samples it).
  // Null for the backends that track an engine elsewhere.
  std::shared_ptr<ThreadPoolExecutor> executor;
  std::unique_ptr<AbstractMetricsBackend> metrics;
};

// The backend `config.backend` names: "threadpool", "dask" or "taskvine", made from its part of
// `config` (config.threadpool, config.dask, config.taskvine). InvalidArgument naming --backend
// for any other name; the backend's own errors otherwise.
absl::StatusOr<CollectBackend> MakeBackend(const RunConfig& config);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_
