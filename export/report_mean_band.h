// The mean and range (or the sum) of many workers' series in the report's worker charts
// (export/report_plots.h), internal to //export:report_plots.
#ifndef ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_
#define ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_

#include <string>
#include <vector>

#include "export/svg_plot.h"

namespace roastcoffea {
namespace export_internal {

// One line across `series` with its min-max band (or, `sum`, their sum without a band): at every
// instant any series has, or, above kMaxLinePoints instants, in kMaxLinePoints time bins (said in
// `note`). A STEP series counts with the value it holds from its first to its last point.
LineSeries MeanBand(const std::vector<LineSeries>& series, bool sum, std::string* note);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_
