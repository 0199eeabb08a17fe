// The metric catalogue: one entry per figure of a measurement, saying once its key, label, unit,
// group, which direction is better, how it moves with more cores, what it means, and how to
// read it from AggregatedMetrics. The outputs iterate it instead of describing metrics again:
// the flat formats (AllFlatMetrics, ToFlatMetrics), compare's rows (export/compare.h), the
// summary tables' rows (export/tables.h, also the HTML report's) and the live /metrics gauges
// (live/figure_gauges.h). How to add a metric: docs/ARCHITECTURE.md.
#ifndef ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_H_
#define ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_H_

#include <optional>
#include <string>
#include <vector>

#include "aggregation/aggregate.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Which way a metric gets better (kNeither: a size, not a quality, e.g. Total Events).
enum class Better { kHigher, kLower, kNeither };

// How a metric moves when the same workload runs on more cores, nothing being wrong.
enum class CoreTrend { kSteady, kFallsWithCores, kGainsWithCores };

// The part of AggregatedMetrics a metric belongs to.
enum class MetricGroup { kCpu, kWorkflow, kWorkers, kEfficiency, kFine, kChunks, kBranches };

// Where a metric's key goes in the flat formats. The flat key order is fixed (the original
// tool's order, then ours); per-name families (per_dataset.*, sections.*, file_*, ...) sit
// between these parts and are written by flat_metrics.cc and export/flat_formats.cc.
enum class FlatPart {
  kNone,                    // not a flat key
  kHeadline,                // first: measured CPU (AllFlatMetrics)
  kOriginal,                // the original's keys (ToFlatMetrics), before its families
  kOriginalBranchAverages,  // after file_* and compression_ratios.*
  kOriginalBranchTotal,     // after bytes_read_percent_per_file.*
  kAddition,                // ours, before impossible.*
  kChunkAddition,           // ours from chunk records, before the per-dataset and section stats
};

// When a flat key is written at all. A written key whose value is unknown is null / empty.
enum class FlatPresence {
  kAlways,
  kWhenKnown,          // only with a value
  kWithWorkers,        // with worker tracking (AggregatedMetrics.workers)
  kWithFine,           // with fine metrics
  kWithChunks,         // with chunk records
  kWithDurationStats,  // with chunk duration statistics
  kWithMemoryStats,    // with chunk memory-delta statistics
  kWithEventStats,     // with per-chunk event statistics
  kWithBranches,       // with branch coverage
  kWithFileBytes,      // known, and the files' distinct bytes too (read amplification)
};

using MetricGetter = std::optional<double> (*)(const v1::AggregatedMetrics&);

// The terminal summary table (export/tables.h) a metric is a row of. Rows whose text combines
// values or whose N/A has a reason per case say so through the entry's hooks below.
enum class SummaryTableId {
  kNone,
  kCpu,
  kThroughput,
  kEvents,
  kTiming,
  kThreadTimeSplit,
  kChunks,
  kResources,
};

// How a summary-table row writes its value.
enum class ValueFormat {
  kDuration,      // "1.23 s", "2 min 3 s" (export's FormatDuration)
  kThousands,     // "1,234,567": a count
  kRoundedCount,  // "1,235": a mean count, rounded
  kOneDecimal,    // "%.1f <unit>": "12.3 kHz"
  kBytes,         // "1.23 MiB" (export's FormatBytes)
  kPercent,       // "12.3%"
};

// The cell formats of export/ that a row formatter composes (aggregation/ writes no units).
struct CellFormats {
  std::string (*duration)(double seconds);
  std::string (*bytes)(double bytes);
  std::string (*percent)(double fraction);
  // `text` marked when the invariant check found figure `figure` impossible.
  std::string (*flag_impossible)(const v1::AggregatedMetrics&, const std::string& figure,
                                 std::string text);
};

// A summary-table row's text from its (known) value, for rows that combine values:
// "0.05 Gbps (5.8 MB/s)".
using RowFormatter = std::string (*)(const v1::AggregatedMetrics&, double value,
                                     const CellFormats&);

// A line under a summary-table row that says where its value came from or why it is unknown
// ("measured by", "why"); an empty label: no line.
struct RowNote {
  std::string label;
  std::string text;
};
using RowNoter = RowNote (*)(const v1::AggregatedMetrics&);

// A summary-table row's label when it depends on the measurement.
using RowLabeler = std::string (*)(const v1::AggregatedMetrics&);

struct MetricDef {
  std::string key;    // unique identifier; the flat key when `flat` is not kNone
  std::string label;  // what a person reads: "Event Rate (Elapsed Time)"
  std::string unit;   // unit of `value`: "s", "bytes", "fraction", "kHz", "events", ...
  MetricGroup group = MetricGroup::kWorkflow;
  Better better = Better::kNeither;
  CoreTrend trend = CoreTrend::kSteady;
  std::string description;       // one sentence: what it measures
  MetricGetter value = nullptr;  // nullopt when unknown ("N/A"), never 0

  FlatPart flat = FlatPart::kNone;
  FlatPresence presence = FlatPresence::kAlways;

  // compare: rows in ascending compare_rank (0: not compared), in compare_unit, the value
  // multiplied by compare_scale, or compare_value when the comparison needs a stricter
  // condition than the flat key (e.g. a rate only where its time was reported).
  int compare_rank = 0;
  std::string compare_unit;
  double compare_scale = 1.0;
  MetricGetter compare_value = nullptr;

  // A gauge of the live /metrics endpoint, in base units (live/figure_gauges.h).
  bool live = false;

  // A row of summary table `table`, in ascending table_rank, its value from table_value (or
  // value) written as `format`. Unknown: the text unknown_text returns ("N/A (not reported)"),
  // or no row when unknown_text is null or returns null.
  SummaryTableId table = SummaryTableId::kNone;
  int table_rank = 0;
  ValueFormat format = ValueFormat::kOneDecimal;
  MetricGetter table_value = nullptr;
  const char* (*unknown_text)(const v1::AggregatedMetrics&) = nullptr;
  std::string table_label;          // the row's label when not `label` (empty: `label`)
  RowLabeler label_from = nullptr;  // the row's label, when it depends on the measurement
  bool bullet = false;              // drawn as a row under the one above ("  • label")
  bool flag_impossible = false;     // marked when the invariant check found `key` impossible
  RowFormatter row_text = nullptr;  // the text instead of `format`
  RowNoter note = nullptr;          // a line under the row
};

// Every metric, in flat key order (then the catalogue-only ones). Never empty.
const std::vector<MetricDef>& MetricCatalogue();

// The entry named `key`, or nullptr.
const MetricDef* FindMetric(const std::string& key);

// Appends `metric` at the end of the catalogue, so that a test can walk the recipe for adding a
// metric. Not thread-safe: call before any output is produced. Fails (returns false) when the
// key is already used.
bool RegisterMetricForTesting(MetricDef metric);

// The value compare shows: compare_value, or value times compare_scale.
std::optional<double> ComparedValue(const MetricDef& metric, const v1::AggregatedMetrics& m);

// The value a summary-table row shows: table_value, or value.
std::optional<double> TableValue(const MetricDef& metric, const v1::AggregatedMetrics& m);

// The catalogue's rows of `table`, in ascending table_rank.
std::vector<const MetricDef*> TableRows(SummaryTableId table);

// Appends the catalogue's flat keys of `part` present in `metrics`, in catalogue order.
void AppendFlatPart(const v1::AggregatedMetrics& metrics, FlatPart part,
                    std::vector<FlatMetric>* out);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_H_
