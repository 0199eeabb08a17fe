// Terminal summary tables for a measurement, after the original tool's print_summary.
//
// Thread-safety: every function is pure except UseUnicodeTables and TerminalWidth (and the
// formatters with TableOptions.width 0, which call it): they read the environment and stdout's
// terminal, safe from any thread as long as nobody modifies the environment concurrently.
// Cost: linear in the size of the aggregated metrics; chunk records are not read.
#ifndef ROASTCOFFEA_EXPORT_TABLES_H_
#define ROASTCOFFEA_EXPORT_TABLES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct TableOptions {
  // Draw boxes with Unicode box-drawing characters and bullets with "•"; false draws them with
  // plain ASCII ("+", "-", "|"). Text taken from the measurement (dataset names) is shown as is.
  bool unicode = true;
  // Rows of the "Sections" table (the sections with the largest total time); 0 hides it.
  int top_sections = 10;
  // Rows of the "Failed Chunks" table; the rest is summarised in one "... and N more" row.
  int max_failed_chunks = 10;
  // Columns the output may use: a wider table shrinks its widest text column and elides the
  // middle of longer cells ("…", "..." in ASCII); findings are wrapped. 0: TerminalWidth();
  // negative: no limit.
  int width = 0;
};

// $COLUMNS when set (at least 40), else the width of the terminal on stdout, else 100.
int TerminalWidth();

// One line describing the machine ("2 online CPUs (1 usable), <model>, load 0.52 -> 1.90, steal
// 0.0%") and a build ("opt, gcc 12.2.0"; "fastbuild, gcc 12.2.0 (NOT optimised)"), as the
// table header, the HTML report and compare show them.
std::string DescribeHost(const v1::HostFacts& host);
std::string DescribeBuild(const v1::BuildInfo& build);

// True when stdout is a terminal and the NO_COLOR environment variable is unset: the
// conditions under which Unicode boxes are used by the command-line tools.
bool UseUnicodeTables();

// "CRITICAL", "WARNING" or "INFO".
absl::string_view SeverityLabel(v1::Finding::Severity severity);

// The findings block (AggregatedMetrics.findings, computed by //aggregation findings.h), most
// severe first: per finding its severity and title, then the evidence and "Try: <suggestion>"
// indented under it, wrapped to the width, then which rules were not evaluated and why
// (RuleStatesLine). "Findings: none of the N rules checked fired; ..." when no rule fired, and
// "Findings: not evaluated (...)" for measurements written before findings existed (and the
// original tool's directories).
std::string FormatFindings(const v1::Measurement& measurement, const TableOptions& options);
// The rules that could not be checked, "stragglers (no chunk records), debug_build (no build
// info)"; "" when every rule was checked or the measurement has no rule states.
std::string NotEvaluatedRules(const v1::AggregatedMetrics& metrics);
// One line on the rule states: without findings "Findings: none of the 7 rules checked fired;
// not evaluated: ..."; with findings "Not evaluated: ..." ("" when every rule was checked); for
// a measurement written before rule states were saved, that they are unknown.
std::string RuleStatesLine(const v1::AggregatedMetrics& metrics);

// A table with any number of columns, drawn like the summary tables (title centred above, heavy
// header box in Unicode, "+-|" in ASCII). Cells are shown as given (callers replace control
// characters); `right_aligned[c]` right-aligns column c (numbers), missing entries mean left.
// Rows shorter than the header are padded with empty cells. Ends in '\n'.
struct TextTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_aligned;
};
std::string FormatTextTable(const TextTable& table, const TableOptions& options);

// The run summary: a short header (name, backend, host, UTC start, elapsed, machine, build,
// warnings), the findings block, then the tables that have data, in this order:
//   CPU Efficiency (measured CPU against core-seconds), Chunk Time Split (on CPU, waiting for a
//   CPU, blocked: Time and Share columns), Throughput Metrics, Event Processing Metrics,
//   Resource Utilization, Timing Breakdown, the thread-time split titled by its source
//   ("Thread Time Split (worker threads' CPU clocks)", "Fine Metrics (Dask spans)") or the
//   engine's activities, Chunk Metrics (counts, time per event, memory, events), Chunk
//   Durations (columns Count, Mean, Min, p50, p90, p95, p99, Max for all chunks and per
//   dataset), Sections (columns Section, Kind, Chunks, Total, Share, Mean, p50, p95; the top
//   `options.top_sections` by time) and Failed Chunks (File, Entries, Attempt, Error).
// One name per concept: each figure appears in one row of one table. Byte amounts use binary
// units (KiB, MiB), rates stay decimal (Gbps, MB/s); unknown values show "N/A (why)".
// Then the spans and task prefixes (span_tables.h) and the workers that left the run
// (worker_tables.h). Only `measurement.metadata()`, `.warnings()`, `.metrics()`, `.spans()`
// and `.tracking()` are read. Ends in '\n'.
std::string FormatSummaryTables(const v1::Measurement& measurement, const TableOptions& options);

// The run header alone, one "Label: value" line each (control characters replaced).
std::string FormatRunHeader(const v1::Measurement& measurement);

// The same tables as data, for other renderers (the HTML report, Markdown): exactly as
// FormatSummaryTables shows them, before any fitting to a width. (Metric, Value) tables have
// the header {"Metric", "Value"}.
using SummaryTable = TextTable;
std::vector<SummaryTable> BuildSummaryTables(const v1::Measurement& measurement,
                                             const TableOptions& options);

// Durations with three significant digits below a minute, in ns, µs, ms or s: "420 ns",
// "850 µs", "142 ms", "1.23 s", "12.3 s", "0 s"; from a minute on, whole units as the original's
// _format_time ("1m 5s", "1h 2m 3s", truncated). Negative values below a minute keep their
// sign; NaN and infinities give "N/A".
std::string FormatDuration(double seconds);

// Bytes in binary units with two decimals: "1023.00 B", "1.00 KiB", "4.66 GiB", up to PiB.
// The unit is chosen so that the printed number is below 1024 in magnitude; negative amounts
// (memory deltas) keep their sign ("-1.50 MiB"). NaN and infinities give "N/A".
std::string FormatBytes(double bytes);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TABLES_H_
