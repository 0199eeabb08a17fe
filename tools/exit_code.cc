#include "tools/exit_code.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

constexpr char kUsagePayload[] = "type.roastcoffea/collect.UsageError";

}  // namespace

std::string ExitCodeTable() {
  return absl::StrCat(
      "Exit status:\n", "  ", ToInt(ExitCode::kOk), "    done\n", "  ", ToInt(ExitCode::kFailure),
      "    cannot run or save; an input file is unreadable or holds bad data; a chunk failed\n",
      "  ", ToInt(ExitCode::kUsage), "    bad flags or arguments (nothing else)\n", "  ",
      ToInt(ExitCode::kPartial), "    partial measurement (saved)\n", "  ",
      ToInt(ExitCode::kCommandFailed), "    the measured COMMAND failed (measurement saved)\n",
      "  ", ToInt(ExitCode::kRegression), "    compare --fail_on_regression: a regression\n", "  ",
      ToInt(ExitCode::kSavedElsewhere),
      "    could not save under --output_dir: saved in $TMPDIR/roastcoffea-unsaved (printed)\n",
      "  ", ToInt(ExitCode::kInterrupted),
      "  interrupted by SIGINT or SIGTERM (measurement of what was done saved)\n");
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
