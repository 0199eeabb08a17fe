// The `--backend=taskvine` flags of collect, their typed config (tools/collect_flags.cc reads
// the flags into it) and the factory that turns the config into a backend.
//
// Flags (defined in taskvine_collect.cc, declared below for the one reader):
//   --taskvine_logs=PATH             run dir (vine-run-info/<time> or most-recent), vine-run-info,
//                                    a vine-logs dir, a transactions log, or "TXN,PERF" (two
//                                    files, any order); Work Queue logs are recognised by content
//   --follow                         tail the logs while the run goes on (until the command after
//                                    `--` exits, or Ctrl-C); without it the logs are of a finished
//                                    run
//   --taskvine_category=processing   the task category whose tasks are chunks
#ifndef ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_
#define ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_

#include <memory>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/metrics_backend.h"
#include "schema/raw_run.h"

ABSL_DECLARE_FLAG(std::string, taskvine_logs);
ABSL_DECLARE_FLAG(bool, follow);
ABSL_DECLARE_FLAG(std::string, taskvine_category);

namespace roastcoffea {

// The values of the flags above, as given (MakeTaskVineBackend checks them). Its defaults are
// the flags' defaults.
struct TaskVineConfig {
  std::string logs;                           // --taskvine_logs
  bool follow = false;                        // --follow
  std::string chunk_category = "processing";  // --taskvine_category
};

// Builds the TaskVine backend from `config`. InvalidArgument naming the flag for a bad value
// (every problem listed, one per line), including logs that do not exist when --follow is off.
absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeTaskVineBackend(
    const TaskVineConfig& config);

// Without --follow the logs are those of a finished run: with no command to wait for, nothing
// is tracked and ingest/taskvine_run.h reads them (call after MakeTaskVineBackend accepted
// `config`).
bool LogsAreOfAFinishedRun(const TaskVineConfig& config);
absl::StatusOr<RawRun> ReadFinishedTaskVineRun(const TaskVineConfig& config,
                                               absl::Duration interval);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_TASKVINE_COLLECT_H_
