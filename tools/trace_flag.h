// collect's --trace=FILE: write the run's timeline (every chunk and its timed sections as
// slices on their worker threads) as Chrome trace-event JSON, which ui.perfetto.dev opens.
// Works for `collect` (the run just measured) and `collect show DIR` (a saved measurement).
#ifndef ROASTCOFFEA_TOOLS_TRACE_FLAG_H_
#define ROASTCOFFEA_TOOLS_TRACE_FLAG_H_

#include <ostream>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "schema/measurement.pb.h"

ABSL_DECLARE_FLAG(std::string, trace);

namespace roastcoffea {

// With --trace empty: does nothing. Else writes the trace of measurement.chunks() to the
// flag's path (relative to the directory the user ran from) and says where on `out`.
// Errors name the path.
absl::Status WriteTraceIfRequested(const v1::Measurement& measurement, std::ostream& out);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_TRACE_FLAG_H_
