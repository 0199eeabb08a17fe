#include "collector/checkpointed_tracking.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "store/tracking_segments.h"

namespace roastcoffea {

void CheckpointedTracking::TakeFrom(AbstractMetricsBackend& backend) {
  std::optional<v1::TrackingData> segment = backend.TakeTrackingSegment();
  if (!segment.has_value()) return;
  MergeTrackingSegment(*std::move(segment), &unwritten_);
  taken_ = true;
}

const v1::TrackingData* CheckpointedTracking::unwritten() const {
  return unwritten_.ByteSizeLong() > 0 ? &unwritten_ : nullptr;
}

std::optional<v1::TrackingData> CheckpointedTracking::SoFar(
    const CheckpointWriter& checkpoint) const {
  if (!taken_) return std::nullopt;
  absl::StatusOr<Checkpoint> read = checkpoint.ReadBack(/*with_chunks=*/false);
  if (!read.ok()) return std::nullopt;
  v1::TrackingData so_far = read->tracking.value_or(v1::TrackingData());
  MergeTrackingSegment(unwritten_, &so_far);
  return so_far;
}

v1::TrackingData CheckpointedTracking::Whole(FinalTracking rule, v1::TrackingData last,
                                             const CheckpointWriter& checkpoint,
                                             std::vector<v1::Warning>* warnings) {
  v1::TrackingData unwritten = std::move(unwritten_);
  unwritten_.Clear();
  if (!taken_ || rule == FinalTracking::kReplacesSegments) return last;
  // kExtendsSegments: the segments in their order (those in the checkpoint, then those whose
  // appends failed), then the rest.
  v1::TrackingData whole;
  if (absl::StatusOr<Checkpoint> read = checkpoint.ReadBack(/*with_chunks=*/false); !read.ok()) {
    v1::Warning& warning = warnings->emplace_back();
    warning.set_code("tracking_segments_lost");
    warning.set_message(
        absl::StrCat("the tracking series before the last checkpoint could not be read back: ",
                     read.status().message()));
  } else if (read->tracking.has_value()) {
    whole = *std::move(read->tracking);
  }
  MergeTrackingSegment(std::move(unwritten), &whole);
  // The rest (one interval) may pass the run's end: Finish reduces it knowing the window.
  MergeTrackingSegment(std::move(last), &whole, /*max_samples_per_worker=*/0);
  return whole;
}

}  // namespace roastcoffea
