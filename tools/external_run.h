// Measuring an analysis that runs elsewhere (a Dask or TaskVine cluster): start a backend's
// tracking, run the user's command (or wait for a duration, or until Ctrl-C), stop, read what the
// command left behind (a Coffea report and chunk records, as JSON), aggregate.
#ifndef ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_
#define ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/metrics_backend.h"
#include "schema/measurement.pb.h"

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
  absl::Duration interval = absl::Seconds(1);
  // Fine-metric task prefixes (or glob patterns) that are the processor's.
  std::vector<std::string> processor_patterns;
};

struct ExternalRunResult {
  v1::Measurement measurement;
  // The command's exit status (128 + signal when it was killed); 0 without a command.
  int command_exit_code = 0;
  // The backend lost sight of the engine for a while (TrackingData.gaps is not empty).
  bool partial = false;
  // Stopped by Ctrl-C or SIGTERM (the command, if any, got the signal too).
  bool interrupted = false;
  // The backend's warnings, and ours (unreadable report, ...). measurement.warnings holds them
  // too (after the host warnings), the backend's with their codes, ours as "external_run".
  std::vector<std::string> warnings;
};

// Runs the whole measurement. SIGINT and SIGTERM are held while it runs, so that Ctrl-C ends the
// run (and reaches the command) but still leaves a complete measurement. Errors: the backend's
// (named), a command that cannot be started (NotFound naming it).
absl::StatusOr<ExternalRunResult> RunExternalMeasurement(AbstractMetricsBackend& backend,
                                                         const ExternalRunOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_EXTERNAL_RUN_H_
