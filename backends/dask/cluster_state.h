// The workers' lossless per-prefix execution totals from the scheduler's `get_cluster_state`
// (docs/modern-dask-study.md §6, §7.3).
//
// Each worker's `task_cumulative_elapsed` (distributed ≥ 2023.2.1) maps (prefix, state) to the
// seconds its tasks spent in that state since the worker started; it only grows. The
// ("prefix", "executing") entry equals the sum of the "execute" fine-metric seconds of that
// prefix (within 0.05 % in the study), so the difference of two snapshots sizes what the
// per-heartbeat digests missed. Keys arrive as the Python repr of a list or tuple
// ("['busy', 'executing']") or as a msgpack array; both are read.
// The call fans out to every worker: ask rarely (at a span's start and end).
// Thread-safety: pure functions. Cost: linear in the reply.
#ifndef ROASTCOFFEA_BACKENDS_DASK_CLUSTER_STATE_H_
#define ROASTCOFFEA_BACKENDS_DASK_CLUSTER_STATE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

// worker address -> task prefix -> cumulative executing seconds.
using CumulativeExecuting = std::map<std::string, std::map<std::string, double>>;

// The arguments of a small get_cluster_state request: everything but the per-worker counters
// is excluded (the workers' `data` alone can list every key they hold).
Value ClusterStateRequestArgs();

// Workers without `task_cumulative_elapsed` (distributed < 2023.2.1) are left out; a reply
// whose workers all lack it is NotFound (no cumulative source; no workers is an empty map).
// InvalidArgument naming the field for a reply that is not a map with a `workers` map.
absl::StatusOr<CumulativeExecuting> ParseCumulativeExecuting(const Value& reply);

// "['busy', 'executing']" / "('sum-part', 'memory')" -> {prefix, state}; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> ParsePrefixStateKey(absl::string_view repr);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_CLUSTER_STATE_H_
