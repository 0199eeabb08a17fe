// Test helper: a measurement with data for every table and plot (tracking of three workers,
// chunk records on two workers x two threads with one failure, span fine metrics, branch
// coverage), aggregated by //aggregation, and with hostile strings (markup, quotes, ampersands)
// in its name, worker and dataset names.
#ifndef ROASTCOFFEA_EXPORT_TEST_MEASUREMENT_H_
#define ROASTCOFFEA_EXPORT_TEST_MEASUREMENT_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_export {

inline constexpr char kHostileName[] = "<script>alert('x')</script> & \"run\"";
inline constexpr char kHostileWorker[] = "<b>worker</b>&1";
inline constexpr char kHostileDataset[] = "ttbar<&>\"'";

// `workers` tracked workers (the first named kHostileWorker).
v1::Measurement RichMeasurement(int workers = 3);

}  // namespace testing_export
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_TEST_MEASUREMENT_H_
