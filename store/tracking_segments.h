// Joining tracking data written in segments (a run's checkpoint holds the samples a backend
// handed out since the previous checkpoint): the samples of segment 2 follow those of segment 1,
// worker by worker, so the joined series is the one the backend would have kept whole.
//
// The rule for columns: a worker's optional column (spilled bytes, rates, occupancy, ...) is
// kept when every segment that has samples of the worker has it for each sample; otherwise it
// is dropped for the worker (a column must have one value per time). Scalars (backend,
// interval, kinds) come from the first segment that sets them; gaps are appended.
//
// Bounded: a joined worker series past its budget (by default the tracking's share of
// kMaxTrackingSamples) is reduced
// (aggregation/series_reduction.h: every time integral and the memory peak kept), so joining
// any number of segments holds at most that many samples per worker. No window edge is
// protected: the segments of a run's checkpoint lie inside the run's window.
//
// Thread-safety: pure. Cost: linear in the samples of `segment` (amortised over reductions).
#ifndef ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_
#define ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_

#include "aggregation/series_reduction.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Appends `segment`'s samples to `into` (workers matched by name, new ones added at the end),
// then reduces each worker series it touched that holds more than `max_samples_per_worker`
// samples: by default the tracking's share of its budget (MaxSamplesPerWorker of the workers
// joined, this segment's included); 0: no limit.
void MergeTrackingSegment(v1::TrackingData segment, v1::TrackingData* into,
                          int max_samples_per_worker = kShareOfTrackingBudget);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_
