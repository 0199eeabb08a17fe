#include "tools/compare_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "export/compare.h"
#include "export/compare_html.h"
#include "export/tables.h"
#include "ingest/any_measurement.h"
#include "tools/command_failure.h"
#include "tools/paths.h"
#include "tools/table_style.h"

namespace roastcoffea {

ExitCode CompareCommand(const CompareConfig& config, const std::vector<std::string>& arguments) {
  absl::StatusOr<TableOptions> tables = TableStyle(config.tables);
  if (!tables.ok()) return Fail(tables.status());
  std::vector<v1::Measurement> runs;
  std::vector<std::string> labels;
  ComparisonOptions options;
  // "A1,A2": repeats of one configuration, given explicitly (unless the name is a directory).
  const bool explicit_groups = std::any_of(arguments.begin(), arguments.end(), [](auto& a) {
    return absl::StrContains(a, ',') && !std::filesystem::exists(ResolveUserPath(a));
  });
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::vector<std::string> directories = {arguments[i]};
    if (explicit_groups && !std::filesystem::exists(ResolveUserPath(arguments[i]))) {
      directories = absl::StrSplit(arguments[i], ',', absl::SkipEmpty());
    }
    for (const std::string& directory : directories) {
      absl::StatusOr<v1::Measurement> run = LoadAnyMeasurement(ResolveUserPath(directory));
      if (!run.ok()) return Fail(run.status());
      runs.push_back(ComparedPart(*std::move(run)));  // one big run in memory at a time
      labels.push_back(directory);
      if (explicit_groups) options.configuration_of_run.push_back(static_cast<int>(i));
    }
  }
  options.unicode = tables->unicode;
  options.regression_threshold_percent = config.regression_threshold;
  // Given explicitly, the threshold alone gates where no noise estimate exists.
  options.threshold_given = config.threshold_given;
  options.fail_on_regression = config.fail_on_regression;
  absl::StatusOr<ComparisonFormat> format = ParseComparisonFormat(config.format);
  if (!format.ok()) return Fail(AsUsageError(format.status()));
  options.format = *format;
  // CompareRuns' errors are about the arguments (nothing to compare).
  absl::StatusOr<ComparisonResult> result = CompareRuns(labels, runs, options);
  if (!result.ok()) return Fail(AsUsageError(result.status()));
  std::cout << result->text;
  if (const std::string& html = config.html_output; !html.empty()) {
    const absl::Status written = WriteComparisonHtml(ResolveUserPath(html), *result);
    if (!written.ok()) return Fail(written);
    std::cerr << "collect: wrote " << html << "\n";
  }
  return result->failed() ? ExitCode::kRegression : ExitCode::kOk;
}

}  // namespace roastcoffea
