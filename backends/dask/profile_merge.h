// The whole-worker profile rebuilt from per-task-prefix profiles.
//
// Dask never counts a sample on the innermost frame (dask/profile.h), and the innermost counts
// can be restored only below a caller with ONE callee. In the all-tasks tree every task runs
// under one Dask frame (distributed 2022.12: apply_function/execute_task; 2024+:
// dask/_task_spec.py:__call__) with one callee per task function, so nearly every sample stays
// on that frame: 92-100 % of a worker's top stacks on modern Dask. A task prefix's tree usually
// has one code path, where restoration is exact. Dask's counts add up over keys (every sample
// goes to the all-tasks tree and to its task's prefix tree), so
//   whole = Σ_prefix restore(prefix tree) + restore(all-tasks tree − Σ_prefix prefix tree)
// has the same samples as the all-tasks tree, each restored within its own prefix; the second
// term holds the prefixes that were not read.
//
// Trees are matched by their frames' identifiers along the path from the root. Counts are
// Dask's as sent (ConvertProfileTree with restore_innermost_counts false). Differences below 0
// (trees read a moment apart) are clamped to 0, and a parent is raised to its children's sum.
//
// Thread-safety: pure function. Cost: linear in the nodes of all trees (hash lookups).
#ifndef ROASTCOFFEA_BACKENDS_DASK_PROFILE_MERGE_H_
#define ROASTCOFFEA_BACKENDS_DASK_PROFILE_MERGE_H_

#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea::dask {

// The tree rebuilt as above (frames, nodes, estimated_innermost_samples and
// rebuilt_from_task_prefixes set), nodes of count 0 left out. `restore` and `estimate` as
// ProfileConversionOptions' restore_innermost_counts and estimate_innermost_counts; without
// restore the components are summed with Dask's counts.
v1::Profile WholeWorkerFromPrefixes(const v1::Profile& all_tasks,
                                    const std::vector<const v1::Profile*>& prefixes,
                                    bool restore = true, bool estimate = true);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_PROFILE_MERGE_H_
