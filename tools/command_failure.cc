#include "tools/command_failure.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "export/display_width.h"

namespace roastcoffea {

std::string ForTerminal(absl::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back(export_internal::ReplaceControlCharacters(line));
  }
  return absl::StrJoin(lines, "\n");
}

ExitCode Fail(const absl::Status& status) {
  std::cerr << "collect: " << ForTerminal(status.message()) << "\n";
  // Cancelled: a signal stopped the run before anything was measured (nothing to save).
  if (absl::IsCancelled(status)) return ExitCode::kInterrupted;
  return ExitCodeFor(status);
}

}  // namespace roastcoffea
