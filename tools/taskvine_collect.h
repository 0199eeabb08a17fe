// The `--backend=taskvine` flags of collect and the factory that turns them into a backend.
//
// Flags (defined in taskvine_collect.cc):
//   --taskvine_logs=PATH             run dir (vine-run-info/<time> or most-recent), vine-run-info,
//                                    a vine-logs dir, a transactions log, or "TXN,PERF" (two
//                                    files, any order); Work Queue logs are recognised by content
//   --follow                         tail the logs while the run goes on (until the command after
//                                    `--` exits, or Ctrl-C); without it the logs are of a finished
//                                    run
//   --taskvine_category=processing   the task category whose tasks are chunks
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_
#define ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/metrics_backend.h"
#include "schema/raw_run.h"

namespace roastcoffea {

// Builds the TaskVine backend from the flags. InvalidArgument naming the flag for a bad value
// (every problem listed, one per line), including logs that do not exist when --follow is off.
absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeTaskVineBackendFromFlags();

// Without --follow the logs are those of a finished run: with no command to wait for, nothing
// is tracked and ingest/taskvine_run.h reads them (call after MakeTaskVineBackendFromFlags
// accepted the flags).
bool TaskVineLogsAreOfAFinishedRun();
absl::StatusOr<RawRun> ReadFinishedTaskVineRunFromFlags(absl::Duration interval);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_
