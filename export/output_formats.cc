#include "export/output_formats.h"

#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "export/flat_formats.h"

namespace roastcoffea {
namespace {

// The built-in formats. A new one is an entry here, with its renderer in its own file.
std::vector<std::unique_ptr<OutputFormat>> BuiltInFormats() {
  std::vector<std::unique_ptr<OutputFormat>> formats;
  auto flat = [&](std::string name, std::vector<std::string> aliases, FlatFormat format) {
    formats.push_back(std::make_unique<OutputFormat>(OutputFormat{
        std::move(name), std::move(aliases),
        [format](const v1::Measurement& m, std::ostream& out) { WriteFlatMetrics(m, format, out); },
        // Markdown is the summary tables, which read the aggregated figures only.
        format != FlatFormat::kMarkdown}));
  };
  flat("csv", {}, FlatFormat::kCsv);
  flat("json", {}, FlatFormat::kJson);
  flat("markdown", {"md"}, FlatFormat::kMarkdown);
  return formats;
}

struct Table {
  std::mutex mu;
  // unique_ptr: a found format keeps its address while others are added.
  std::vector<std::unique_ptr<OutputFormat>> formats = BuiltInFormats();
};

Table& TheTable() {
  static Table* table = new Table();
  return *table;
}

bool Names(const OutputFormat& format, absl::string_view lower) {
  if (format.name == lower) return true;
  for (const std::string& alias : format.aliases) {
    if (alias == lower) return true;
  }
  return false;
}

const OutputFormat* FindLocked(const Table& table, absl::string_view lower) {
  for (const std::unique_ptr<OutputFormat>& format : table.formats) {
    if (Names(*format, lower)) return format.get();
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> OutputFormatNames() {
  Table& table = TheTable();
  std::lock_guard<std::mutex> lock(table.mu);
  std::vector<std::string> names;
  for (const std::unique_ptr<OutputFormat>& format : table.formats) names.push_back(format->name);
  return names;
}

absl::Status RegisterOutputFormat(OutputFormat format) {
  if (format.name.empty() || !format.write) {
    return absl::InvalidArgumentError(
        absl::StrCat("output format '", format.name, "' needs a name and a writer"));
  }
  Table& table = TheTable();
  std::lock_guard<std::mutex> lock(table.mu);
  std::vector<std::string> names = format.aliases;
  names.push_back(format.name);
  for (const std::string& name : names) {
    if (name != absl::AsciiStrToLower(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output format name '", name, "' is not lower case"));
    }
    if (name == "table" || FindLocked(table, name) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("output format name '", name, "' is taken"));
    }
  }
  table.formats.push_back(std::make_unique<OutputFormat>(std::move(format)));
  return absl::OkStatus();
}

absl::StatusOr<const OutputFormat*> FindOutputFormat(absl::string_view name) {
  Table& table = TheTable();
  std::lock_guard<std::mutex> lock(table.mu);
  if (const OutputFormat* format = FindLocked(table, absl::AsciiStrToLower(name))) return format;
  std::vector<std::string> names = {"table"};
  for (const std::unique_ptr<OutputFormat>& format : table.formats) names.push_back(format->name);
  const std::string last = names.back();
  names.pop_back();
  return absl::InvalidArgumentError(absl::StrCat("--format must be ", absl::StrJoin(names, ", "),
                                                 " or ", last, ", got '", name, "'"));
}

}  // namespace roastcoffea
