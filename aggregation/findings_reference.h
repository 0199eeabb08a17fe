// The findings rules before their big-run rewrite, as a reference for tests (test only).
#ifndef ROASTCOFFEA_AGGREGATION_FINDINGS_REFERENCE_H_
#define ROASTCOFFEA_AGGREGATION_FINDINGS_REFERENCE_H_

#include <vector>

#include "aggregation/findings.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace findings_reference {

// What ComputeFindings returned before the rewrite, by the straightforward algorithm.
std::vector<v1::Finding> ComputeFindingsReference(const FindingsInputs& inputs);

}  // namespace findings_reference
}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_FINDINGS_REFERENCE_H_
