// The capacity rules of the findings (internal to //aggregation; findings.cc runs them): what
// limited an engine run, read from its task timeline (aggregation/capacity.h), and the work its
// dead workers lost.
//   worker_bound    tasks waited with every slot busy for >= kWorkerBoundShare of the timeline,
//                   and replaying the observed chunk durations (list scheduling in task order,
//                   none before its submission, ChunkRecord.ready_unix_ns) onto twice the mean
//                   slots shortens the makespan by >= kMinSavingShare: says
//                   by how much.
//   dispatch_bound  slots sat free while tasks waited (free slot-seconds not explained by a retry
//                   penalty or slow start >= kDispatchBoundShare of all slot-seconds and
//                   >= kMinStallSeconds of the run), or the queue ran dry with slots
//                   free and filled again later (underfed >= kDispatchBoundShare of the timeline):
//                   a manager or application stall, with its longest stretch.
//   retry_penalty   a dispatch-bound stall (>= kStallKeptSeconds) that ended when a retried chunk
//                   started (within kRetryDispatchToleranceSeconds): the engine held a failed task
//                   back while slots sat free; fires from kMinStallSeconds and
//                   kRetryPenaltyShare of the timeline in all.
//   slow_start      a worker connected while tasks waited and ran its first task only
//                   >= kSlowStartSeconds of waiting later (environment or library start-up);
//                   when >= 2 such workers connected at different times yet all started within
//                   kSimultaneousStartSeconds, it says the manager or application held the
//                   tasks back instead.
//   dead_workers    workers that left with tasks executing on them (killed, lost, or declared
//                   dead at a keepalive timeout), named with the work they lost.
//   silent_workers  a dead worker quiet >= kSilentMinSeconds (its last message,
//                   WorkerSeries.last_seen_unix_seconds) before the engine declared it lost, or a
//                   silent death the backend inferred (warning taskvine_worker_silent_death).
//   slow_hosts      chunks on >= 2 hosts and one host's median chunk >= kSlowHostRatio x the
//                   other hosts' (>= kMinChunksPerHost chunks on it).
//   (cpu_contention runs before the stragglers: findings_contention.h; its cost competes here.)
//   limiting_cause  of the causes above that fired, the one that cost the most seconds of the
//                   run: worker-bound (the saving with 2x slots), retry penalty (the stalls),
//                   slow start (idle slot-seconds / mean slots), dispatch-bound (free
//                   slot-seconds while tasks waited / mean slots, less those two), underfed
//                   (stall time), dead workers (lost work / mean slots), CPU contention (its
//                   cost_seconds).
// Not evaluated without a task timeline (TaskVine / Work Queue step series of worker cores and
// executing tasks, and the manager's ready queue).
//
// Thread-safety: pure.
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_CAPACITY_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_CAPACITY_H_

#include "aggregation/findings.h"
#include "aggregation/findings_rules.h"

namespace roastcoffea {
namespace aggregation_internal {

// Worker-bound: tasks waited with every slot busy for at least half of the timeline.
inline constexpr double kWorkerBoundShare = 0.50;
// ... and twice the slots would shorten the replayed makespan by at least a tenth.
inline constexpr double kMinSavingShare = 0.10;
// Dispatch-bound / underfed: a tenth of the slot-seconds (or of the timeline) lost to stalls,
inline constexpr double kDispatchBoundShare = 0.10;
// ... and at least this long in all (a manager's per-task dispatch latency is milliseconds).
inline constexpr double kMinStallSeconds = 1.0;
// Retry penalty: a stall ends with a retried chunk's start within this much of its end.
inline constexpr double kRetryDispatchToleranceSeconds = 1.0;
// ... and the stalls so matched take at least this share of the timeline.
inline constexpr double kRetryPenaltyShare = 0.05;
// Slow start: a worker waited this long (while tasks waited) before its first task.
inline constexpr double kSlowStartSeconds = 2.0;
// ... unless the slow workers, connected over a longer spread, all ran their first task within
// this much of each other: then the manager or the application held the tasks back.
inline constexpr double kSimultaneousStartSeconds = 1.0;
// Silent worker: quiet this long before it was declared lost.
inline constexpr double kSilentMinSeconds = 2.0;
// Slow host: its median chunk against the other hosts' median, with this many chunks on it.
inline constexpr double kSlowHostRatio = 1.5;
inline constexpr int kMinChunksPerHost = 5;

namespace findings_rules {

// worker_bound, dispatch_bound, dead_workers, limiting_cause.
void Capacity(const FindingsInputs& in, Builder& b);

// Work the engine lost with dead workers (lost-task-seconds summed over workers), when the
// engine measured it.
std::optional<double> LostWorkSeconds(const FindingsInputs& in);

}  // namespace findings_rules
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_CAPACITY_H_
