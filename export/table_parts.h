// Internal to //export:tables: the table type the summary tables are built as, how they are
// drawn (text_table.cc), the cell formats they share, and the chunk tables (chunk_tables.cc).
#ifndef ROASTCOFFEA_EXPORT_TABLE_PARTS_H_
#define ROASTCOFFEA_EXPORT_TABLE_PARTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "export/tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace tables_internal {

inline constexpr absl::string_view kNoWorkerTracking = "N/A (no worker tracking)";
inline constexpr absl::string_view kNotReported = "N/A (not reported)";

struct Row {
  std::string metric;
  std::string value;
};

// A (Metric, Value) table in `rows`, or, with a header, a table of real columns in `cells`.
struct Table {
  std::string title;
  std::vector<Row> rows;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
  std::vector<bool> right_aligned;
};

// The characters a table is drawn with.
struct BoxStyle {
  // Top border: left corner, horizontal, middle junction, right corner. Same for the rule under
  // the header and the bottom border.
  absl::string_view top[4];
  absl::string_view header_rule[4];
  absl::string_view bottom[4];
  absl::string_view header_vertical;
  absl::string_view row_vertical;
  absl::string_view bullet;
  absl::string_view ellipsis;  // marks the middle of an elided cell
};

// Rich's default box (HEAVY_HEAD), so the tables look like the original's.
inline constexpr BoxStyle kUnicodeBoxStyle = {
    {"\u250F", "\u2501", "\u2533", "\u2513"},
    {"\u2521", "\u2501", "\u2547", "\u2529"},
    {"\u2514", "\u2500", "\u2534", "\u2518"},
    "\u2503",
    "\u2502",
    "\u2022",
    "\u2026",
};

inline constexpr BoxStyle kAsciiBoxStyle = {
    {"+", "-", "+", "+"}, {"+", "-", "+", "+"}, {"+", "-", "+", "+"}, "|", "|", "-", "...",
};

inline const BoxStyle& UnicodeBox() { return kUnicodeBoxStyle; }
inline const BoxStyle& AsciiBox() { return kAsciiBoxStyle; }

// `table` drawn with `box`, at most `max_width` columns wide (wider text columns shrink, long
// cells are elided in the middle).
std::string RenderColumns(const TextTable& table, const BoxStyle& box, size_t max_width);

// `text` padded with spaces to `width` display columns.
std::string PadRight(absl::string_view text, size_t width);

// A (Metric, Value) table as a TextTable with the header {"Metric", "Value"}.
TextTable ToTextTable(Table table);

// Python's "{:,}".
std::string WithThousandsSeparators(int64_t value);

// Python's "{:.1%}".
std::string Percent(double fraction);

// `text` of figure `figure` (its flat key), marked when the invariant check found it impossible
// (aggregation/invariants.h), so no impossible value reads as a measurement.
std::string FlagIfImpossible(const v1::AggregatedMetrics& metrics, absl::string_view figure,
                             std::string text);

// "  • label": a row under the row above it.
std::string Bullet(const BoxStyle& box, absl::string_view label);

// The chunk count the original shows: the chunk records' count overrides the report's.
int64_t NumChunks(const v1::AggregatedMetrics& metrics);

// The chunk tables (chunk_tables.cc): durations as columns; the top `top_n` sections; the
// failed chunks (at most `limit`).
Table ChunkDurationsTable(const v1::ChunkMetrics& chunks);
Table SectionStatsTable(const v1::ChunkMetrics& chunks, int top_n);
Table FailedChunksTable(const v1::ChunkMetrics& chunks, int limit);

}  // namespace tables_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TABLE_PARTS_H_
