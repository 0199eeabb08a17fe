// Joining tracking data written in segments (a run's checkpoint holds the samples a backend
// handed out since the previous checkpoint): the samples of segment 2 follow those of segment 1,
// worker by worker, so the joined series is the one the backend would have kept whole.
//
// The rule for columns: a worker's optional column (spilled bytes, rates, occupancy, ...) is
// kept when every segment that has samples of the worker has it for each sample; otherwise it
// is dropped for the worker (a column must have one value per time). Scalars (backend,
// interval, kinds) come from the first segment that sets them; gaps are appended.
//
// Thread-safety: pure. Cost: linear in the samples of `segment`.
#ifndef ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_
#define ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {

// Appends `segment`'s samples to `into` (workers matched by name, new ones added at the end).
void MergeTrackingSegment(v1::TrackingData segment, v1::TrackingData* into);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_TRACKING_SEGMENTS_H_
