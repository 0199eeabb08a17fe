// Terminal summary tables for a measurement, after the original tool's print_summary.
//
// Thread-safety: every function is pure except UseUnicodeTables, which reads the environment
// and is safe to call from any thread as long as nobody modifies the environment concurrently.
// Cost: linear in the size of the aggregated metrics; chunk records are not read.
#ifndef ROASTCOFFEA_EXPORT_TABLES_H_
#define ROASTCOFFEA_EXPORT_TABLES_H_

#include <string>

#include "schema/measurement.pb.h"

namespace roastcoffea {

struct TableOptions {
  // Draw boxes with Unicode box-drawing characters and bullets with "•"; false draws them with
  // plain ASCII ("+", "-", "|"). Text taken from the measurement (dataset names) is shown as is.
  bool unicode = true;
};

// True when stdout is a terminal and the NO_COLOR environment variable is unset: the
// conditions under which Unicode boxes are used by the command-line tools.
bool UseUnicodeTables();

// The run summary: a short header (name, backend, host, UTC start, elapsed) followed by every
// table of the original tool that has data, in its order and with its titles:
//   Throughput Metrics, Event Processing Metrics, Resource Utilization, Timing Breakdown,
//   Chunk Metrics (only when there are chunks).
// Each table has two aligned columns, "Metric" and "Value"; every line of a table has the same
// display width. Differences from the original, on purpose:
//   * byte amounts use binary units labelled as such (KiB, MiB, ...), rates stay decimal (Gbps,
//     MB/s);
//   * the "Efficiency Ratio" row (the speedup again, shown as a misleading percentage) is gone:
//     "Speedup Factor" is shown once, and "Parallel Efficiency" = speedup / total cores replaces
//     "Core Efficiency" (the same number);
//   * a value that is unknown without worker tracking shows "N/A (no worker tracking)";
//   * rows for uncompressed bytes and the compression factor are added when they are known.
// Only `measurement.metadata()` and `measurement.metrics()` are read. The text ends in '\n'.
std::string FormatSummaryTables(const v1::Measurement& measurement, const TableOptions& options);

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
