#include "tools/report_command.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "export/html_report.h"
#include "ingest/any_measurement.h"
#include "tools/command_failure.h"
#include "tools/paths.h"

namespace roastcoffea {

ExitCode ReportCommand(const ReportConfig& config, const std::string& user_directory) {
  const std::string directory = MeasurementDirectoryFor(ResolveUserPath(user_directory));
  absl::StatusOr<v1::Measurement> measurement = LoadAnyMeasurement(directory);
  if (!measurement.ok()) return Fail(measurement.status());
  const std::string& requested = config.html_output;
  if (!requested.empty()) {
    const std::string output = ResolveUserPath(requested);
    if (absl::Status written = WriteHtmlReport(*measurement, output); !written.ok()) {
      return Fail(written);
    }
    std::cout << "HTML report written to " << output << "\n";
    return ExitCode::kOk;
  }
  // A shared measurement is often read-only: like `profile`, fall back to the current directory,
  // then $TMPDIR, and say so.
  const std::string base = directory.substr(directory.find_last_of('/') + 1);
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string file =
      (base.empty() || base == "." || base == ".." ? "measurement" : base) + ".html";
  const std::vector<std::string> candidates = {
      directory + ".html", ResolveUserPath(file),
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp", "/", file)};
  absl::Status last;
  for (const std::string& output : candidates) {
    last = WriteHtmlReport(*measurement, output);
    if (last.ok()) {
      std::cout << "HTML report written to " << output << "\n";
      return ExitCode::kOk;
    }
    std::cerr << "collect: note: cannot write the report to " << output << ": " << last.message()
              << "\n";
  }
  return Fail(last);
}

}  // namespace roastcoffea
