// `collect compare --html_output=FILE`: one self-contained HTML page with the configuration
// block, the comparison table, the verdict lines, each run's warnings and findings and, for a
// scaling study, the scaling plot (measured speedup per core count against Amdahl's fitted curve
// when there is one, and ideal linear scaling), drawn with svg_plot.h.
//
// Thread-safety: pure functions (WriteComparisonHtml writes one file). Cost: linear in the
// table size.
#ifndef ROASTCOFFEA_EXPORT_COMPARE_HTML_H_
#define ROASTCOFFEA_EXPORT_COMPARE_HTML_H_

#include <string>

#include "absl/status/status.h"
#include "export/compare.h"

namespace roastcoffea {

// The page (no external resources; every text from the runs is escaped).
std::string ComparisonHtml(const ComparisonResult& result);

// Writes ComparisonHtml atomically to `path`; the error names the path.
absl::Status WriteComparisonHtml(const std::string& path, const ComparisonResult& result);

// The scaling plot as SVG: "Measured" speedup (fitted 1-core time per event / mean time per
// event at each core count), the "Amdahl" curve and "Ideal" linear scaling; oversubscribed runs
// as their own series, not fitted. Without a fit (fewer than 3 core counts): the measured
// speedups against the smallest core count with their standard errors, and "Ideal" scaling.
// "" when the runs are on one core count.
std::string ScalingPlotSvg(const ComparisonResult& result);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_COMPARE_HTML_H_
