// Test helper: hand-built profile trees for the flame-graph and table tests.
#ifndef ROASTCOFFEA_EXPORT_TEST_PROFILE_H_
#define ROASTCOFFEA_EXPORT_TEST_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_export {

struct ProfileNodeSpec {
  int parent;  // index of the parent node; 0 is the root
  std::string function;
  int64_t count;  // inclusive samples
};

// A profile whose node i+1 is nodes[i] (node 0 is the root, count `root_count`), one frame
// per node, with the given source, worker and sampling interval.
v1::Profile ProfileTree(const std::vector<ProfileNodeSpec>& nodes, const std::string& source,
                        const std::string& worker, int64_t root_count = 0,
                        double interval_seconds = 0.01);

}  // namespace testing_export
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TEST_PROFILE_H_
