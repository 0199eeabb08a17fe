// The built-in entries of the metric catalogue (metric_catalogue.h), in flat key order: the one
// place where a metric's key, label, unit, direction and getter are written.
#ifndef ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_ENTRIES_H_
#define ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_ENTRIES_H_

#include <vector>

#include "aggregation/metric_catalogue.h"

namespace roastcoffea {

std::vector<MetricDef> BuiltInMetrics();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_METRIC_CATALOGUE_ENTRIES_H_
