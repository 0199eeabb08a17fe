// The engine backends collect can measure a run with, by the name given to --backend.
#ifndef ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_
#define ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/metrics_backend.h"

namespace roastcoffea {

// "dask" or "taskvine", configured from their own flags (--scheduler, --taskvine_logs, ...).
// InvalidArgument naming --backend for any other name; the backend's own errors otherwise.
absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeExternalBackend(
    absl::string_view name);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_BACKEND_FACTORY_H_
