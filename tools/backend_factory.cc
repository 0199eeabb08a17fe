#include "tools/backend_factory.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/dask_collect.h"
#include "tools/taskvine_collect.h"
#include "tools/threadpool_engine.h"

namespace roastcoffea {
namespace {

absl::StatusOr<CollectBackend> Tracking(
    absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> backend) {
  if (!backend.ok()) return backend.status();
  CollectBackend made;
  made.metrics = *std::move(backend);
  return made;
}

}  // namespace

absl::StatusOr<CollectBackend> MakeBackend(const RunConfig& config) {
  const std::string& name = config.backend;
  if (name == "threadpool") {
    absl::StatusOr<ThreadPoolEngine> engine = MakeThreadPoolEngine(config.threadpool);
    if (!engine.ok()) return engine.status();
    CollectBackend made;
    made.executor = std::move(engine->executor);
    made.metrics = std::move(engine->backend);
    return made;
  }
  if (name == "dask") return Tracking(MakeDaskBackend(config.dask));
  if (name == "taskvine") return Tracking(MakeTaskVineBackend(config.taskvine));
  return absl::InvalidArgumentError(
      absl::StrCat("--backend must be threadpool, workqueue, dask or taskvine, got '", name, "'"));
}

}  // namespace roastcoffea
