// A worker series cut to its ends: the rows that decide whether and how a worker left the run
// with tasks on it (aggregation_internal::DeadWorkers), for readers that print only that
// (`collect show`'s tables). A TaskVine log of 10^6 tasks holds ~340 MB of worker steps; cut
// while read, one series at a time, they cost a few hundred bytes per worker.
//
// Kept rows: the first, the last before the final instant, and the final one, in order; every
// column as long as the time column keeps those rows, every other column is cleared (so a
// series the capacity analysis cannot use stays unusable, and a usable one stays usable).
// Whether DeadWorkers finds a worker is then exactly as on the whole series; what it reports of
// one (and the task timeline's start) is not: a reader that finds one reads the series whole.
//
// Thread-safety: pure. Cost: linear in the series' rows.
#ifndef ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_
#define ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {

void CutWorkerSeriesToEnds(v1::WorkerSeries* series);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_WORKER_SERIES_ENDS_H_
