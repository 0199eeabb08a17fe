#include "tools/exit_code.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

constexpr char kUsagePayload[] = "type.roastcoffea/collect.UsageError";

}  // namespace

std::string ExitCodeTable(const std::vector<ExitCode>& codes) {
  struct Row {
    ExitCode code;
    const char* meaning;
  };
  static constexpr Row kRows[] = {
      {ExitCode::kOk, "done"},
      {ExitCode::kFailure,
       "cannot run or save; an input file is unreadable or holds bad data; a chunk failed"},
      {ExitCode::kUsage, "bad flags or arguments (nothing else)"},
      {ExitCode::kPartial, "partial measurement (saved)"},
      {ExitCode::kCommandFailed, "the measured COMMAND failed (measurement saved)"},
      {ExitCode::kRegression, "compare --fail_on_regression: a regression"},
      {ExitCode::kSavedElsewhere,
       "could not save under --output_dir: saved in $TMPDIR/roastcoffea-unsaved (printed)"},
      {ExitCode::kInterrupted,
       "interrupted by SIGINT or SIGTERM (measurement of what was done saved)"},
  };
  std::string table = "Exit status:\n";
  for (const Row& row : kRows) {
    if (!codes.empty() && std::find(codes.begin(), codes.end(), row.code) == codes.end()) {
      continue;
    }
    const std::string number = absl::StrCat(ToInt(row.code));
    absl::StrAppend(&table, "  ", number, std::string(5 - number.size(), ' '), row.meaning, "\n");
  }
  return table;
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord());
  return status;
}

absl::Status AsUsageError(const absl::Status& status) {
  if (status.ok()) return status;
  return UsageError(status.message());
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

ExitCode ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return ExitCode::kOk;
  return IsUsageError(status) ? ExitCode::kUsage : ExitCode::kFailure;
}

}  // namespace roastcoffea
