// Mean, min, max and sample standard deviation of a set of values (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_
#define ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_

#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// count, mean, min, max and the sample standard deviation (n-1 in the denominator; 0 for a
// single value), as the original's chunk statistics. Values are sorted first so the result does
// not depend on their order, even in the last bit. Empty input gives an all-zero message.
// Cost: O(n log n).
v1::DistributionStats ComputeDistributionStats(std::vector<double> values);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_DISTRIBUTION_STATS_H_
