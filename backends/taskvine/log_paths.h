// Where the logs of a TaskVine / Work Queue run are: resolves what the user passed
// (--taskvine_logs) into the transactions log and the (optional) performance log.
//
// Accepted: a run directory (`vine-run-info/<time>` or `vine-run-info/most-recent`, holding
// `vine-logs/`), the `vine-run-info` directory itself (its `most-recent` run), a `vine-logs`
// directory, a transactions log (its sibling `performance` is used when present), or two files
// separated by a comma in either order (the performance log is recognised by its
// "# timestamp" header, else by "perf"/"stats" in its name). Work Queue logs have no fixed
// names: pass them as files.
//
// Thread-safety: a pure function of the file system. Cost: a few stat(2) and one short read.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_LOG_PATHS_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_LOG_PATHS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace taskvine {

struct LogPaths {
  std::string transactions;
  std::string performance;  // "" when there is none
};

// NotFound (naming what was looked for) when no transactions log is there; FailedPrecondition
// naming its type when a path is a FIFO, a device or a socket (never opened, so never blocks);
// InvalidArgument for an empty spec or two files of the same kind.
absl::StatusOr<LogPaths> ResolveLogPaths(absl::string_view spec);

// True when the transactions log at `path` is a regular file whose last record is MANAGER END
// (the run has ended). False for a run still going or whose manager crashed. Reads only the
// last 4 KiB; never blocks (type checked before open, O_NONBLOCK).
bool TransactionsLogHasEnded(const std::string& path);

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_LOG_PATHS_H_
