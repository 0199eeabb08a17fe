// The workers that left an engine run while tasks ran on them, as a table: which worker, when it
// left, what was running, when it went silent, and the work it lost. A worker killed without its
// process group stays connected (and counted busy) until the manager's keepalive gives up; its
// "Silent since" column says from when it was already dead.
//
//   "Workers That Left": one row per worker of aggregation's DeadWorkers (capacity.h), in order
//     of leaving (the first kMaxWorkerRows; a last row counts the rest): Worker, Host, Left
//     (seconds into the task timeline, as the findings say it), Running (tasks executing just
//     before), Silent since (its last message, when it was quiet >= kSilentMinSeconds before it
//     left; its last record, "(never declared lost)", when the backend found it died without
//     the engine noticing (warning taskvine_worker_silent_death); "no" when heard from until it
//     left; "N/A" when the log has no last-message times),
//     Lost work (the engine's lost-task-seconds of that worker, when measured).
// Empty without such workers (thread pools, Dask, runs where no worker died).
//
// Flat rows (`show --format=csv|json`; a worker's name is kept as the engine wrote it):
//   workers_left (workers); per worker of the table's first kMaxWorkerRows:
//   worker_left.<worker>.left_seconds / .running_tasks / .silent_since_seconds (only when it
//   was silent, or unknown: empty/null without last-message times) / .lost_work_seconds (empty
//   when not measured); workers_left_not_listed (the rest, when more left).
//
// Thread-safety: pure. Cost: O(tracking points log tracking points).
#ifndef ROASTCOFFEA_EXPORT_WORKER_TABLES_H_
#define ROASTCOFFEA_EXPORT_WORKER_TABLES_H_

#include <cstddef>
#include <vector>

#include "aggregation/aggregate.h"
#include "export/tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

inline constexpr size_t kMaxWorkerRows = 20;

std::vector<SummaryTable> BuildWorkerTables(const v1::Measurement& measurement);

// The flat rows above.
std::vector<FlatMetric> WorkerFlatMetrics(const v1::Measurement& measurement);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_WORKER_TABLES_H_
