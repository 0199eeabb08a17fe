// A worker series cut to its ends: the rows that decide whether and how a worker left the run
// with tasks on it, for readers that print only that (`collect show`'s "Workers That Left" table
// and flat rows, export/worker_tables.h). A TaskVine log of 10^6 tasks holds ~340 MB of worker
// steps; cut while read, one series at a time, they cost a few hundred bytes per worker.
//
// Kept rows, in order: the first; the one that holds at the first instant (the last row of that
// instant); the last before the final instant and the final one (how it left:
// aggregation_internal::DeadWorkers); the row of its latest last-message time and the row that
// holds at that instant (DeadWorkers' "last seen"); for a STEP series with cores and executing
// tasks, the first row that holds a slot and the last that holds a running task with the row
// that holds after it (where the capacity timeline, AnalyseCapacity, starts: the instant the
// departures are counted from). Every column keeps those rows when it has one value per row;
// every other column is cleared. What DeadWorkers and AnalyseCapacity(...)->start_ns compute
// from the tracking is then exactly what they compute from the whole series, so the table needs
// no second, whole read; the other figures of the capacity timeline are not kept.
//
// Kept whole (exactness first, these are rare): a series whose instants are not in order, one
// whose last-message column is not one per row, and a usable STEP series whose cores or
// executing tasks are not whole numbers of at most 2^31 (or NaN): the timeline's running sums
// of those are exact only for whole numbers. Instants of exactly 0 (1970) are not supported:
// the capacity timeline takes 0 for "no start yet".
//
// Thread-safety: pure. Cost: linear in the series' rows.
#ifndef ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_
#define ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {

void CutWorkerSeriesToEnds(v1::WorkerSeries* series);

// The same into `*ends` (overwritten), leaving `*series` with its columns' allocations for the
// next series parsed into it (its contents are then unspecified): a reader of many long series
// reuses one message instead of allocating each series' columns afresh.
void TakeWorkerSeriesEnds(v1::WorkerSeries* series, v1::WorkerSeries* ends);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_
