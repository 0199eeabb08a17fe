#include "tools/taskvine_collect.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/taskvine/log_paths.h"
#include "backends/taskvine/taskvine_backend.h"
#include "ingest/taskvine_run.h"

ABSL_FLAG(
    std::string, taskvine_logs, roastcoffea::TaskVineConfig{}.logs,
    "--backend=taskvine: the manager's logs: a run directory (vine-run-info/<time> or "
    "vine-run-info/most-recent), vine-run-info, a vine-logs directory, a transactions log, or "
    "TRANSACTIONS,PERFORMANCE. Work Queue logs are recognised automatically.");
ABSL_FLAG(bool, follow, roastcoffea::TaskVineConfig{}.follow,
          "--backend=taskvine: follow the logs while the run goes on (until the command after -- "
          "exits); without it the logs are those of a finished run.");
ABSL_FLAG(std::string, taskvine_category, roastcoffea::TaskVineConfig{}.chunk_category,
          "--backend=taskvine: the task category whose tasks are chunks (coffea: processing; "
          "DaskVine: the category of the chunk function).");

namespace roastcoffea {

absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeTaskVineBackend(
    const TaskVineConfig& config) {
  std::vector<std::string> problems;
  TaskVineBackendOptions options;
  options.logs = config.logs;
  options.follow = config.follow;
  options.chunk_category = config.chunk_category;
  if (options.logs.empty()) {
    problems.push_back(
        "--taskvine_logs is required with --backend=taskvine (e.g. vine-run-info/most-recent)");
  } else {
    absl::StatusOr<taskvine::LogPaths> paths = taskvine::ResolveLogPaths(options.logs);
    // --follow waits for logs that do not exist yet, but a FIFO or a device would block or
    // never end: a path of the wrong type is refused in both modes.
    if (!paths.ok() && (!options.follow || absl::IsFailedPrecondition(paths.status()))) {
      problems.push_back(absl::StrCat("--taskvine_logs: ", paths.status().message(),
                                      absl::IsNotFound(paths.status())
                                          ? " (use --follow for a run that has not started yet)"
                                          : ""));
    }
  }
  if (options.chunk_category.empty()) problems.push_back("--taskvine_category must not be empty");
  if (problems.empty() && !options.follow) {
    // Read without --follow, a run still going is measured as recorded so far: say so, since
    // it is not the finished run the reading implies.
    absl::StatusOr<taskvine::LogPaths> paths = taskvine::ResolveLogPaths(options.logs);
    if (paths.ok() && !taskvine::TransactionsLogHasEnded(paths->transactions)) {
      std::cerr << "collect: the run in " << paths->transactions
                << " has not ended (no MANAGER END record: still going, or its manager "
                   "crashed): it is measured as recorded so far; use --follow to follow it to "
                   "its end\n";
    }
  }
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
  return std::unique_ptr<AbstractMetricsBackend>(new TaskVineMetricsBackend(std::move(options)));
}

bool LogsAreOfAFinishedRun(const TaskVineConfig& config) { return !config.follow; }

absl::StatusOr<RawRun> ReadFinishedTaskVineRun(const TaskVineConfig& config,
                                               absl::Duration interval) {
  TaskVineRunOptions options;
  options.logs = config.logs;
  options.chunk_category = config.chunk_category;
  options.interval = interval;
  return ReadFinishedTaskVineRun(options);
}

}  // namespace roastcoffea
