// The tracking samples a backend hands to the session's checkpoint while a run goes on
// (AbstractMetricsBackend::TakeTrackingSegment), and the run's whole series at its end. One
// rule for every backend, the backend's FinalTracking:
// - kExtendsSegments: the whole series is the segments handed out (read back from the
//   checkpoint, then those whose append failed), then StopTracking's samples;
// - kReplacesSegments: StopTracking's series alone (the segments were a copy for a kill).
// Either way a run killed before its end keeps the segments written so far (the checkpoint's
// reader joins them, ingest/checkpoint_measurement.h).
//
// Thread-safety: none; the session guards it with its checkpoint mutex. Cost: the segments
// waiting for an append; the join at the end reads the checkpoint once.
#ifndef ROASTCOFFEA_COLLECTOR_CHECKPOINTED_TRACKING_H_
#define ROASTCOFFEA_COLLECTOR_CHECKPOINTED_TRACKING_H_

#include <optional>
#include <vector>

#include "backends/metrics_backend.h"
#include "schema/measurement.pb.h"
#include "store/checkpoint.h"

namespace roastcoffea {

class CheckpointedTracking {
 public:
  // Takes the backend's samples since the last call, if it hands them out, to be appended.
  void TakeFrom(AbstractMetricsBackend& backend);
  // The samples taken and not appended yet: nullptr when none.
  const v1::TrackingData* unwritten() const;
  // The append of unwritten() succeeded: they are in the checkpoint now.
  void Written() { unwritten_.Clear(); }

  // The series so far when the run cannot stop (the last-resort save): the segments taken, in
  // the checkpoint and unwritten, whatever the FinalTracking rule. nullopt when none was taken
  // or the checkpoint cannot be read back.
  std::optional<v1::TrackingData> SoFar(const CheckpointWriter& checkpoint) const;

  // The run's whole series from StopTracking's `last`, by `rule`. Segments are read back
  // through `checkpoint` (CheckpointWriter::ReadBack: even when its directory was removed);
  // a checkpoint that cannot be read back is a warning in `warnings` (its samples are lost,
  // the rest is kept). Leaves nothing unwritten.
  v1::TrackingData Whole(FinalTracking rule, v1::TrackingData last,
                         const CheckpointWriter& checkpoint, std::vector<v1::Warning>* warnings);

 private:
  v1::TrackingData unwritten_;
  bool taken_ = false;  // some segment was handed out
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_CHECKPOINTED_TRACKING_H_
