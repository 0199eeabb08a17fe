// Wall-clock helpers shared by the DaskMetricsBackend's source files.
#ifndef ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_TIME_H_
#define ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_TIME_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace roastcoffea {
namespace dask_backend_internal {

inline int64_t NowUnixNs() { return absl::ToUnixNanos(absl::Now()); }

// "2026-11-27T05:17:43.123Z", for warnings.
inline std::string FormatUnixNs(int64_t ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(ns), absl::UTCTimeZone());
}

}  // namespace dask_backend_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_DASK_DASK_BACKEND_TIME_H_
