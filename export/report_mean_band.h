// The mean and range (or the sum) of many workers' series in the report's worker charts
// (export/report_plots.h), internal to //export:report_plots.
//
// Made in two passes over the series, each series held only while it is added, so that a
// report streams the workers' series from a saved run (export/report_worker_lines.h): a survey
// (MeanBandSurvey: the instants, the time range) and then the figures (MeanBandBuilder), the
// same series in the same order both times.
#ifndef ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_
#define ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "export/svg_plot.h"

namespace roastcoffea {
namespace export_internal {

// What the figures need to know of the series first. Holds at most kMaxLinePoints + 1 instants.
class MeanBandSurvey {
 public:
  void Add(const LineSeries& s);

 private:
  friend class MeanBandBuilder;
  absl::flat_hash_set<double> instants_;  // while at most kMaxLinePoints
  bool many_ = false;                     // more than kMaxLinePoints distinct instants
  double low_ = std::numeric_limits<double>::infinity();
  double high_ = -std::numeric_limits<double>::infinity();
  int64_t samples_ = 0;
  bool all_step_ = true;
};

// One line across the series with its min-max band (or, `sum`, their sum without a band): at
// every instant any series has, or, above kMaxLinePoints instants, in kMaxLinePoints time bins
// (said in Finish's `note`). A STEP series counts with the value it holds from its first to its
// last point. Memory: O(kMaxLinePoints), whatever the number of series and samples.
class MeanBandBuilder {
 public:
  MeanBandBuilder(const MeanBandSurvey& survey, bool sum);
  ~MeanBandBuilder();
  void Add(const LineSeries& s);
  LineSeries Finish(std::string* note);

 private:
  class AtInstants;
  class InBins;
  bool sum_, all_step_;
  double high_;
  int64_t samples_;
  std::unique_ptr<AtInstants> at_instants_;
  std::unique_ptr<InBins> in_bins_;
};

// Both passes over `series`.
LineSeries MeanBand(const std::vector<LineSeries>& series, bool sum, std::string* note);

}  // namespace export_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_MEAN_BAND_H_
