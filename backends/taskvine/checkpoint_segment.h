// The part of a followed TaskVine run's tracking series that a checkpoint has not received yet.
//
// TaskVine's series are rebuilt from the logs (RunModel::Tracking), so StopTracking returns the
// whole run and the checkpoint only holds a copy, for a run killed before it could save
// (SIGKILL, the OOM killer). A checkpoint gets, per series, the points after those it already
// has, up to the last one that can no longer move: the worker count's last point and a connected
// worker's last point stand at the log's last record and move as the log grows, so they wait
// for a later checkpoint (a disconnected worker's last point, its DISCONNECTION, is final).
// Limits of the copy: a worker's cores and limits are those known when its points were handed
// out (RESOURCES follows CONNECTION within milliseconds); a worker found dead only at the end
// (RunModel::MarkLogComplete) keeps the points it had; the manager (performance log) series is
// not in it.
//
// Thread-safety: none (the backend calls it under its lock). Cost: linear in the points of
// `whole`.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_CHECKPOINT_SEGMENT_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_CHECKPOINT_SEGMENT_H_

#include <cstdint>
#include <vector>

#include "backends/taskvine/run_model.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace taskvine {

// How many points of each series earlier segments held.
struct HandedOutPoints {
  int count_points = 0;            // the worker count (and queued chunks)
  std::vector<int> worker_points;  // by index into RunModel::workers()
};

// The points of `whole` (model.Tracking() now) not handed out before and final, with the
// series' names and kinds; `handed` is advanced past them.
v1::TrackingData NewFinalPoints(const RunModel& model, const v1::TrackingData& whole,
                                HandedOutPoints* handed);

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_CHECKPOINT_SEGMENT_H_
