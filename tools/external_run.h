// Measuring an analysis that runs elsewhere (a Dask or TaskVine cluster), around one measurement
// session: start it, run the user's command (or wait for a duration, or until Ctrl-C), read what
// the command left behind (a Coffea report and chunk records, as JSON), finish the session.
#ifndef ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_
#define ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "aggregation/measure.h"
#include "backends/metrics_backend.h"
#include "collector/measurement_session.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

// The command learns where to leave its report and chunk records from these variables.
// Python: json.dump(report, open(os.environ["ROASTCOFFEA_REPORT"], "w")).
inline constexpr char kReportPathVariable[] = "ROASTCOFFEA_REPORT";
inline constexpr char kChunkRecordsPathVariable[] = "ROASTCOFFEA_CHUNK_RECORDS";

struct ExternalRunOptions {
  // The command to run (argv; searched in PATH). Empty: no command.
  std::vector<std::string> command;
  // Without a command: track this long. Zero: until Ctrl-C (SIGINT) or SIGTERM.
  absl::Duration duration = absl::ZeroDuration();
  // The session's (interval, processor patterns, metadata, output directory, grace period).
  SessionOptions session;
};

struct ExternalRunResult {
  // Finished: Save the run with it.
  std::unique_ptr<MeasurementSession> session;
  // The measurement, its chunk records held apart as a table (FinishRun).
  MeasuredRun run;
  // The command's exit status (128 + signal when it was killed); 0 without a command.
  int command_exit_code = 0;
  // The backend lost sight of the engine for a while (TrackingData.gaps is not empty).
  bool partial = false;
  // Stopped early by SIGINT or SIGTERM (run.measurement.metadata().interrupted()); never when the
  // signal was the planned end (no command and no duration: tracking until Ctrl-C).
  bool interrupted = false;
};

// Runs the whole measurement. The first SIGINT or SIGTERM ends the wait: a signal sent with
// kill() is passed on to the command (Ctrl-C reached it already), which gets the session's grace
// period to exit before it is killed; the measurement is then finished with what there is.
// Warnings about what the command left (unreadable report, ...) are in run.measurement.warnings
// under "external_run". Errors: the backend's (named), a command that cannot be started
// (NotFound naming it).
absl::StatusOr<ExternalRunResult> RunExternalMeasurement(AbstractMetricsBackend& backend,
                                                         ExternalRunOptions options);

// A run that ended before collect began, read by `read` (an importer, e.g.
// ingest/taskvine_run.h) into the engine's record of a session started with StartRecording
// (named `backend`): nothing to wait for, and the record's window frames the run. Nothing is
// recorded while it is read, so no checkpoint is written. Errors: the session's and `read`'s.
absl::StatusOr<ExternalRunResult> MeasureFinishedRun(
    absl::string_view backend, const std::function<absl::StatusOr<RawRun>()>& read,
    SessionOptions session);

// Each run keeps the command's two files in $TMPDIR/roastcoffea-run-<pid>-XXXXXX and removes it
// at the end; a run killed with SIGKILL cannot. RunExternalMeasurement first removes such
// directories of this user under `root` whose run is gone (and earlier versions'
// roastcoffea-XXXXXX over an hour old), when they hold nothing but those two files.
void SweepStaleScratchDirectories(const std::string& root);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_
