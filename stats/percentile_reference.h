// The plain selection (std::nth_element) that the tests compare the radix selection of
// stats/percentile.h with (testonly): the same definition, computed the obvious way.
#ifndef ROASTCOFFEA_STATS_PERCENTILE_REFERENCE_H_
#define ROASTCOFFEA_STATS_PERCENTILE_REFERENCE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace roastcoffea {
namespace stats {

// Percentiles `quantiles` (each in [0, 1], any order) of `values`, in the order asked.
// `values` is reordered in place (std::nth_element). Same errors as PercentilesOfConst.
// Cost: O(n * number of distinct quantiles) worst case.
absl::StatusOr<std::vector<double>> ReferencePercentiles(absl::Span<double> values,
                                                         absl::Span<const double> quantiles);

}  // namespace stats
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STATS_PERCENTILE_REFERENCE_H_
