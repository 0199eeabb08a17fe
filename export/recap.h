// The recap a run prints last, just above "Measurement saved to": the headline figures in one
// line and the top finding, so that what matters is on screen when a long run's tables have
// scrolled away (a default run prints about 170 lines).
//
//   Recap: 1,200,000 events in 2.28 s = 526.3 kHz, 0.46 Gbps; CPU efficiency 24.8%
//   Top finding: WARNING CPU starvation: ... (1 of 3; all in the Findings above)
//
// The figures are the summary tables' own cells (same labels, same formatting); one the
// measurement does not know is left out.
//
// Thread-safety: pure. Cost: that of BuildSummaryTables.
#ifndef ROASTCOFFEA_EXPORT_RECAP_H_
#define ROASTCOFFEA_EXPORT_RECAP_H_

#include <string>

#include "export/tables.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Two or three lines, each ending in '\n'; "" when the measurement has no figures at all.
std::string FormatRecap(const v1::Measurement& measurement, const TableOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_RECAP_H_
