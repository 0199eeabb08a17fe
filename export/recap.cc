#include "export/recap.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "export/display_width.h"

namespace roastcoffea {
namespace {

// The value of the summary row labelled `label`, unless it is unknown ("N/A ...").
std::optional<std::string> Cell(const std::vector<SummaryTable>& tables, absl::string_view label) {
  for (const SummaryTable& table : tables) {
    for (const std::vector<std::string>& row : table.rows) {
      if (row.size() < 2 || absl::StripAsciiWhitespace(row[0]) != label) continue;
      if (absl::StartsWith(row[1], "N/A")) return std::nullopt;
      return row[1];
    }
  }
  return std::nullopt;
}

}  // namespace

std::string FormatRecap(const v1::Measurement& measurement, const TableOptions& options) {
  const std::vector<SummaryTable> tables = BuildSummaryTables(measurement, options);
  const std::optional<std::string> events = Cell(tables, "Total Events");
  const std::optional<std::string> elapsed = Cell(tables, "Elapsed Time");
  const std::optional<std::string> rate = Cell(tables, "Event Rate (Elapsed Time)");
  const std::optional<std::string> data_rate = Cell(tables, "Data Rate");
  const std::optional<std::string> efficiency = Cell(tables, "CPU Efficiency");
  std::vector<std::string> parts;
  if (events.has_value()) {
    std::string what = absl::StrCat(*events, " events");
    if (elapsed.has_value()) absl::StrAppend(&what, " in ", *elapsed);
    if (rate.has_value()) absl::StrAppend(&what, " = ", *rate);
    parts.push_back(std::move(what));
  } else if (elapsed.has_value()) {
    parts.push_back(absl::StrCat("elapsed ", *elapsed));
  }
  if (data_rate.has_value()) {
    // "0.46 Gbps (57.3 MB/s)": the Gbps is the headline.
    parts.push_back(data_rate->substr(0, data_rate->find(" (")));
  }
  if (efficiency.has_value()) parts.push_back(absl::StrCat("CPU efficiency ", *efficiency));
  std::string out;
  if (!parts.empty()) out = absl::StrCat("Recap: ", absl::StrJoin(parts, ", "), "\n");
  const v1::AggregatedMetrics& metrics = measurement.metrics();
  if (!metrics.findings_evaluated()) return out;
  if (metrics.findings_size() == 0) {
    absl::StrAppend(&out, "Findings: none fired\n");
    return out;
  }
  // Findings are saved most severe first.
  const v1::Finding& top = metrics.findings(0);
  absl::StrAppend(&out, "Top finding: ", SeverityLabel(top.severity()), " ",
                  export_internal::ReplaceControlCharacters(top.title()),
                  metrics.findings_size() > 1
                      ? absl::StrCat(" (1 of ", metrics.findings_size(), ", all in Findings above)")
                      : "",
                  "\n");
  return out;
}

}  // namespace roastcoffea
