// collect's exit status: one enum, documented in README.md ("Exit status") and `collect --help`.
// Bad flags or arguments are the only usage errors (2); anything wrong with the data collect
// reads (a corrupt measurement, a garbled reply from a scheduler) is a failure (1).
#ifndef ROASTCOFFEA_TOOLS_EXIT_CODE_H_
#define ROASTCOFFEA_TOOLS_EXIT_CODE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

enum class ExitCode : int {
  kOk = 0,
  // Cannot run or save; an input file or peer is unreadable or holds bad data; a chunk failed.
  kFailure = 1,
  // Bad flags or arguments, and nothing else.
  kUsage = 2,
  // The measurement is saved but partial (the backend lost sight of the engine, chunks never
  // came back).
  kPartial = 3,
  // The measured COMMAND (after --) exited with a non-zero status; the measurement is saved.
  kCommandFailed = 4,
  // compare --fail_on_regression: a metric regressed beyond the threshold.
  kRegression = 5,
  // The measurement could not be saved under --output_dir (a full or read-only disk, the
  // directory gone) and was saved in the fallback directory, whose path is printed.
  kSavedElsewhere = 6,
  // Interrupted by SIGINT or SIGTERM; the measurement of what was done is saved.
  kInterrupted = 130,
};

constexpr int ToInt(ExitCode code) { return static_cast<int>(code); }

// The table printed by `collect --help` (README.md "Exit status" says the same): every code, or
// only `codes` (a mode's own, for `collect MODE --help`) when not empty.
std::string ExitCodeTable(const std::vector<ExitCode>& codes = {});

// A usage error: InvalidArgument marked as being about the command line. Only these exit 2.
absl::Status UsageError(absl::string_view message);

// `status` (any code) re-marked as a usage error: for the checks of flag values, whose
// libraries return plain InvalidArgument.
absl::Status AsUsageError(const absl::Status& status);

bool IsUsageError(const absl::Status& status);

// kOk for OK, kUsage for usage errors, kFailure for everything else (InvalidArgument included:
// the data parsers use it for bad input files).
ExitCode ExitCodeFor(const absl::Status& status);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_EXIT_CODE_H_
