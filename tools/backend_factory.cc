#include "tools/backend_factory.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/dask_collect.h"
#include "tools/taskvine_collect.h"

namespace roastcoffea {

absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeExternalBackend(
    absl::string_view name) {
  if (name == "dask") return MakeDaskBackendFromFlags();
  if (name == "taskvine") return MakeTaskVineBackendFromFlags();
  return absl::InvalidArgumentError(
      absl::StrCat("--backend must be threadpool, workqueue, dask or taskvine, got '", name, "'"));
}

}  // namespace roastcoffea
