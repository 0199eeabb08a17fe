// The measurement's figures as live gauges: one per metric catalogue entry marked `live`
// (aggregation/metric_catalogue.h), read from the metrics aggregated over the chunks so far,
// named after its key with a Prometheus base unit ("roastcoffea_figure_cpu_efficiency_ratio",
// "roastcoffea_figure_data_rate_bytes_per_second"). Unknown figures get no sample (N/A is never
// exported as 0).
#ifndef ROASTCOFFEA_LIVE_FIGURE_GAUGES_H_
#define ROASTCOFFEA_LIVE_FIGURE_GAUGES_H_

#include <string>
#include <vector>

#include "aggregation/metric_catalogue.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace live {

struct FigureGauge {
  std::string name;  // "roastcoffea_figure_<key without its unit><base unit suffix>"
  std::string help;  // the catalogue's label and description
  double value = 0;  // in the base unit of the name
};

// The gauge name of `metric`, e.g. "roastcoffea_figure_event_rate_elapsed_hertz" for
// event_rate_elapsed_khz (kHz: events per second).
std::string FigureGaugeName(const MetricDef& metric);

// The catalogue's live figures known in `metrics`, in catalogue order, in base units: seconds,
// bytes, ratios (fractions and percentages), hertz (event rates), bytes per second (data
// rates); counts as they are.
std::vector<FigureGauge> FigureGauges(const v1::AggregatedMetrics& metrics);

}  // namespace live
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_LIVE_FIGURE_GAUGES_H_
