// The chunk tables of the summary: durations per dataset; sections; failed chunks. (Counts,
// time per event and memory are catalogue rows: export/tables.cc.)
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "export/display_width.h"
#include "export/table_parts.h"

namespace roastcoffea {
namespace tables_internal {

using export_internal::ReplaceControlCharacters;

// The chunk count the original shows: the chunk records' count overrides the report's.
int64_t NumChunks(const v1::AggregatedMetrics& metrics) {
  return metrics.has_chunks() ? metrics.chunks().num_chunks() : metrics.workflow().num_chunks();
}

// Chunk durations as columns: all successful chunks, then each dataset when there are several.
Table ChunkDurationsTable(const v1::ChunkMetrics& chunks) {
  Table table;
  table.title = "Chunk Durations";
  table.header = {"Chunks of", "Count", "Mean", "Min", "p50", "p90", "p95", "p99", "Max"};
  table.right_aligned = {false, true, true, true, true, true, true, true, true};
  const auto add = [&](std::string name, const v1::DistributionStats& d) {
    if (d.count() == 0) return;
    const bool p = d.has_percentiles();
    const auto pct = [&](double value) { return p ? FormatDuration(value) : std::string("N/A"); };
    table.cells.push_back(
        {std::move(name), WithThousandsSeparators(d.count()), FormatDuration(d.mean()),
         FormatDuration(d.min()), pct(d.percentiles().p50()), pct(d.percentiles().p90()),
         pct(d.percentiles().p95()), pct(d.percentiles().p99()), FormatDuration(d.max())});
  };
  add("all datasets", chunks.duration_seconds());
  if (chunks.per_dataset_size() > 1) {
    for (const v1::DatasetChunkMetrics& dataset : chunks.per_dataset()) {
      std::string name = dataset.dataset().empty() ? std::string("unknown")
                                                   : ReplaceControlCharacters(dataset.dataset());
      if (dataset.duration_distribution_seconds().count() > 0) {
        add(std::move(name), dataset.duration_distribution_seconds());
      } else if (dataset.num_chunks() > 0) {
        // Written before per-dataset distributions: the original's count and mean only.
        table.cells.push_back({std::move(name), WithThousandsSeparators(dataset.num_chunks()),
                               FormatDuration(dataset.mean_duration_seconds()), "N/A", "N/A", "N/A",
                               "N/A", "N/A", "N/A"});
      }
    }
  }
  if (table.cells.empty()) table.title.clear();
  return table;
}

namespace {

// A SectionStats value in its kind's unit.
std::string SectionValue(v1::SectionRecord::Kind kind, double value) {
  switch (kind) {
    case v1::SectionRecord::KIND_MEMORY:
    case v1::SectionRecord::KIND_BYTES:
      return FormatBytes(value);
    default:
      return FormatDuration(value);
  }
}

absl::string_view KindLabel(v1::SectionRecord::Kind kind) {
  switch (kind) {
    case v1::SectionRecord::KIND_MEMORY:
      return "memory";
    case v1::SectionRecord::KIND_BYTES:
      return "bytes";
    default:
      return "time";
  }
}

}  // namespace

// New: per-section statistics across chunks as columns, the top `top_n` by total time (then in
// name order); a section's bytes or memory rows carry their kind, never the time row's label.
Table SectionStatsTable(const v1::ChunkMetrics& chunks, int top_n) {
  std::vector<const v1::SectionStats*> sections;
  for (const v1::SectionStats& section : chunks.section_stats()) sections.push_back(&section);
  std::stable_sort(sections.begin(), sections.end(), [](const auto* a, const auto* b) {
    return a->total_duration_seconds() > b->total_duration_seconds();
  });
  const size_t shown = std::min(sections.size(), static_cast<size_t>(std::max(top_n, 0)));
  Table table;
  table.title = shown == sections.size()
                    ? std::string("Sections")
                    : absl::StrCat("Sections (top ", shown, " of ", sections.size(), " by time)");
  table.header = {"Section", "Kind", "Chunks", "Total", "Share", "Mean", "p50", "p95"};
  table.right_aligned = {false, false, true, true, true, true, true, true};
  for (size_t i = 0; i < shown; ++i) {
    const v1::SectionStats& section = *sections[i];
    const v1::DistributionStats& values = section.values();
    const auto value = [&](double v) { return SectionValue(section.kind(), v); };
    const bool time = section.kind() == v1::SectionRecord::KIND_TIME;
    table.cells.push_back(
        {ReplaceControlCharacters(section.name()), std::string(KindLabel(section.kind())),
         WithThousandsSeparators(values.count()), value(section.total()),
         time ? Percent(section.share_of_chunk_time_fraction()) : std::string(""),
         value(values.mean()),
         values.has_percentiles() ? value(values.percentiles().p50()) : std::string("N/A"),
         values.has_percentiles() ? value(values.percentiles().p95()) : std::string("N/A")});
  }
  return table;
}

namespace {

// An error reads "context: context: cause" (each layer prefixes where it was); a narrow column
// elides the middle, which is where the cause lands ("CRC mismatch" lost between "dijet
// processor, dataset..." and "...basket 0"). An error too long to fit whole shows its cause, the
// part after the last ": " (the File column names the file; the whole text is in the
// measurement and in collect's error line); "ValueError: bad value" stays as it is.
std::string CauseOf(const std::string& error) {
  constexpr size_t kFitsWhole = 48;
  if (error.size() <= kFitsWhole) return error;
  const size_t colon = error.rfind(": ");
  if (colon == std::string::npos || colon == 0 || colon + 2 >= error.size()) return error;
  return absl::StrCat("... ", error.substr(colon + 2));
}

}  // namespace

// New: the failed chunks with their error text (first line; its cause when long), at most `limit`.
Table FailedChunksTable(const v1::ChunkMetrics& chunks, int limit) {
  Table table;
  table.title = "Failed Chunks";
  table.header = {"File", "Entries", "Attempt", "Error"};
  table.right_aligned = {false, true, true, false};
  int shown = 0;
  for (const v1::FailedChunk& failed : chunks.failed_chunks()) {
    if (shown++ >= limit) break;
    std::string error = CauseOf(failed.error_text().substr(0, failed.error_text().find('\n')));
    if (error.empty()) error = "(no error text)";
    // The base name: the path is in the measurement, and the error needs the room.
    const absl::string_view file = failed.file();
    const size_t slash = file.find_last_of('/');
    // A chunk without a file (a TaskVine task) is named by its task, as in the findings.
    std::string name;
    if (!file.empty()) {
      name = std::string(slash == absl::string_view::npos ? file : file.substr(slash + 1));
    } else if (!failed.task_id().empty()) {
      name = absl::StrCat("task ", failed.task_id());
    } else {
      name = "N/A (not reported)";
    }
    table.cells.push_back(
        {ReplaceControlCharacters(name),
         file.empty() && failed.entry_stop() <= failed.entry_start()
             ? std::string("N/A")
             : absl::StrCat("[", failed.entry_start(), ", ", failed.entry_stop(), ")"),
         absl::StrCat(failed.attempt()), ReplaceControlCharacters(error)});
  }
  if (chunks.failed_chunks_size() > limit) {
    table.cells.push_back(
        {absl::StrCat("... and ", chunks.failed_chunks_size() - limit, " more"), "", "", ""});
  }
  return table;
}

}  // namespace tables_internal
}  // namespace roastcoffea
