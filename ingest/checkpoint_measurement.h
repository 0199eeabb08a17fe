// A measurement rebuilt from a run's checkpoint (store/checkpoint.h): what a run killed by
// SIGKILL, the OOM killer or a crash (or whose save failed) had measured up to its last
// checkpoint. It is marked partial: metadata.interrupted with the reason, a warning with the
// code "partial_checkpoint", and the window ends at the last checkpoint. It holds the chunk
// records and what follows from them (the report, the chunk figures, findings), and the
// tracking series of backends that hand them to the checkpoint as they come (Dask, the thread
// pool: at most aggregation/series_reduction.h's budget per worker); spans and profiles are
// taken at the end of a run and are not in it.
//
// Thread-safety: no shared state. Cost: one pass over the checkpoint, then aggregation.
#ifndef ROASTCOFFEA_INGEST_CHECKPOINT_MEASUREMENT_H_
#define ROASTCOFFEA_INGEST_CHECKPOINT_MEASUREMENT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// `directory` is a checkpoint directory (<name>.checkpoint). Errors: ReadCheckpoint's, and
// aggregation's, each naming the directory.
absl::StatusOr<v1::Measurement> LoadCheckpointMeasurement(absl::string_view directory);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_CHECKPOINT_MEASUREMENT_H_
