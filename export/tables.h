// Terminal summary tables for a measurement, after the original tool's print_summary.
//
// Thread-safety: every function is pure except UseUnicodeTables, which reads the environment
// and is safe to call from any thread as long as nobody modifies the environment concurrently.
// Cost: linear in the size of the aggregated metrics; chunk records are not read.
#ifndef ROASTCOFFEA_EXPORT_TABLES_H_
#define ROASTCOFFEA_EXPORT_TABLES_H_

#include <string>
#include <utility>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {

struct TableOptions {
  // Draw boxes with Unicode box-drawing characters and bullets with "•"; false draws them with
  // plain ASCII ("+", "-", "|"). Text taken from the measurement (dataset names) is shown as is.
  bool unicode = true;
  // Rows of the "Section Statistics" table (the sections with the largest total time); 0 hides
  // the table.
  int top_sections = 10;
  // Rows of the "Failed Chunks" table; the rest is summarised in one "... and N more" row.
  int max_failed_chunks = 10;
};

// One line describing the machine ("2 online CPUs (1 usable), <model>, load 0.52 -> 1.90, steal
// 0.0%") and a build ("opt, gcc 12.2.0"; "fastbuild, gcc 12.2.0 (NOT optimised)"), as the
// table header, the HTML report and compare show them.
std::string DescribeHost(const v1::HostFacts& host);
std::string DescribeBuild(const v1::BuildInfo& build);

// True when stdout is a terminal and the NO_COLOR environment variable is unset: the
// conditions under which Unicode boxes are used by the command-line tools.
bool UseUnicodeTables();

// The run summary: a short header (name, backend, host, UTC start, elapsed) followed by every
// table of the original tool that has data, in its order and with its titles:
//   Throughput Metrics, Event Processing Metrics, Resource Utilization, Timing Breakdown,
//   Fine Metrics (from Dask Spans) (only with span fine metrics), Chunk Metrics (only when
//   there are chunks; with the original's "Section Timing" top 5),
// followed by our additions, each only when it has data: Section Statistics (top
// `options.top_sections` sections by total time, with p50/p95 and share of chunk time) and
// Failed Chunks (file, entry range, first line of the error text).
// Each table has two aligned columns, "Metric" and "Value"; every line of a table has the same
// display width. Differences from the original, on purpose:
//   * byte amounts use binary units labelled as such (KiB, MiB, ...), rates stay decimal (Gbps,
//     MB/s);
//   * the "Efficiency Ratio" row (the speedup again, shown as a misleading percentage) is gone:
//     "Speedup Factor" is shown once, and "Parallel Efficiency" = speedup / total cores replaces
//     "Core Efficiency" (the same number);
//   * a value that is unknown without worker tracking shows "N/A (no worker tracking)";
//   * rows for uncompressed bytes and the compression factor are added when they are known;
//   * chunk duration percentiles (p50/p90/p95/p99), time per event, per-dataset p50/p95, and
//     the core efficiency and parallel efficiency over core-seconds are shown when known.
// Only `measurement.metadata()` and `measurement.metrics()` are read. The text ends in '\n'.
std::string FormatSummaryTables(const v1::Measurement& measurement, const TableOptions& options);

// The same tables as data, for other renderers (the HTML report): title and (metric, value)
// rows, exactly as FormatSummaryTables shows them (bullets in `options`' style).
struct SummaryTable {
  std::string title;
  std::vector<std::pair<std::string, std::string>> rows;
};
std::vector<SummaryTable> BuildSummaryTables(const v1::Measurement& measurement,
                                             const TableOptions& options);

// A table with any number of columns, drawn exactly like the summary tables (title centred
// above, heavy header box in Unicode, "+-|" in ASCII). Cells are shown as given (callers
// replace control characters); `right_aligned[c]` right-aligns column c (numbers), missing
// entries mean left. Rows shorter than the header are padded with empty cells. Ends in '\n'.
struct TextTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_aligned;
};
std::string FormatTextTable(const TextTable& table, const TableOptions& options);

// The original's _format_time: below 60 s "12.3s" (one decimal); below an hour "1m 1s" and
// otherwise "1h 2m 3s", truncating to whole units. Negative values below 60 s keep their sign
// ("-5.0s"); NaN and infinities give "N/A".
std::string FormatDuration(double seconds);

// Bytes in binary units with two decimals: "1023.00 B", "1.00 KiB", "4.66 GiB", up to PiB.
// The unit is chosen so that the printed number is below 1024 in magnitude; negative amounts
// (memory deltas) keep their sign ("-1.50 MiB"). NaN and infinities give "N/A".
std::string FormatBytes(double bytes);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TABLES_H_
