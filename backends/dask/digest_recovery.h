// Exact fine metrics despite missed heartbeats (issue #13, item 2).
//
// A worker's `digests_total_since_heartbeat` holds only what happened since its previous
// heartbeat, so a heartbeat that falls between two polls is gone. Two tools here:
// - detection: the scheduler sets every worker's heartbeat period from the worker count
//   (HeartbeatPeriodSeconds), so a `last_seen` that advanced by ≥ 1.5 periods means skipped
//   heartbeats (MissedHeartbeats). A worker whose event loop is busy can also be late, so this
//   is an estimate, used to quantify the loss where no lossless source exists;
// - recovery: the workers' cumulative executing seconds per prefix (cluster_state.h) at the
//   span's start and end. What they exceed the seen "execute" digest seconds by is what the
//   missed heartbeats carried. It is added back to the (worker, prefix)'s execute activities in
//   proportion to the ones seen there (counts and bytes scaled alike), or to the prefix's split
//   on the other workers, or else as activity "unattributed". Only the split is estimated.
// Differences within a tolerance are timing noise (the cumulative totals lag the digests by
// ~0.05 %), and a busy start can only make the cumulative side smaller: never recovered.
// Thread-safety: pure functions. Cost: linear in the totals.
#ifndef ROASTCOFFEA_BACKENDS_DASK_DIGEST_RECOVERY_H_
#define ROASTCOFFEA_BACKENDS_DASK_DIGEST_RECOVERY_H_

#include <map>
#include <string>
#include <tuple>

#include "backends/dask/cluster_state.h"

namespace roastcoffea::dask {

// distributed.scheduler.heartbeat_interval: 0.5 s up to 10 workers, 1 s below 50, 2 s below
// 200, then workers / 200 + 1 s.
double HeartbeatPeriodSeconds(int workers);

// Heartbeats skipped between two observed ones `gap_seconds` apart (0 below 1.5 periods).
int MissedHeartbeats(double gap_seconds, double period_seconds);

// (context, task prefix, activity, unit, worker) -> value.
using DigestTotals =
    std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, double>;

struct RecoveryOptions {
  // A shortfall counts when it exceeds both (fraction of the cumulative delta, seconds).
  double relative_tolerance = 0.002;
  double absolute_tolerance_seconds = 0.001;
};

struct Recovery {
  DigestTotals added;             // add these to the span's totals
  double recovered_seconds = 0;   // execute seconds added back, all workers
  double cumulative_seconds = 0;  // Σ cumulative executing deltas (the truth)
  std::map<std::string, double> recovered_by_prefix;
  int estimated_splits = 0;         // (worker, prefix) pairs whose split came from elsewhere
  double unattributed_seconds = 0;  // no split known at all
};

// `seen`: the span's digests. `start`/`end`: cumulative snapshots around the span. Workers
// missing from `end` (they left) are skipped; missing from `start` (they joined) start at 0.
Recovery RecoverLostDigests(const DigestTotals& seen, const CumulativeExecuting& start,
                            const CumulativeExecuting& end, const RecoveryOptions& options = {});

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_DIGEST_RECOVERY_H_
