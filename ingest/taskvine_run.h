// Importer of a finished TaskVine or Work Queue run: its manager's logs (transactions +
// performance) into a RawRun (aggregation/raw_run.h) that MeasurementSession::Finish
// (RunOutputs::engine_record) or Measure turns into the measurement like any other run.
//
// The logs are read with the TaskVine backend (backends/taskvine/taskvine_backend.h, without
// follow): the tracking series, the whole run's span (kCollectWindowSpanName) with its fine
// metrics, one engine chunk record per task of the chunk category, and the backend's warnings.
// The window is the run's own record (START .. END, or its last record), with no host facts:
// a run that ended before it was read happened elsewhere, at another time.
#ifndef ROASTCOFFEA_INGEST_TASKVINE_RUN_H_
#define ROASTCOFFEA_INGEST_TASKVINE_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "schema/raw_run.h"

namespace roastcoffea {

struct TaskVineRunOptions {
  // What --taskvine_logs names (backends/taskvine/log_paths.h).
  std::string logs;
  // Tasks of this category are chunks.
  std::string chunk_category = "processing";
  // The period the tracking series are sampled at (> 0).
  absl::Duration interval = absl::Seconds(1);
};

// Errors: the backend's (NotFound naming a missing transactions log, InvalidArgument for a
// non-positive interval, ...).
absl::StatusOr<RawRun> ReadFinishedTaskVineRun(const TaskVineRunOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INGEST_TASKVINE_RUN_H_
