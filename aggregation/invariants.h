// Invariants on every aggregated measurement: figures that cannot be true are named, not shown
// silently (internal to //aggregation; Aggregate runs it last).
//
// Checked (each with a relative tolerance of 1e-6 for rounding):
//   invalid_efficiency: cpu_efficiency, core_efficiency (the original's),
//     core_efficiency_over_core_seconds, parallel_efficiency, task_execution_core_efficiency
//     above 1;
//   invalid_share: a section's share_of_chunk_time above 1; a chunk's CPU time, run-queue wait
//     or blocked time above its wall time (summed over chunks);
//   invalid_duration: the longest chunk longer than the run's elapsed time.
// The likely cause is named from the data: chunk records reaching outside the tracked window
// (two time windows mixed, e.g. --follow attached to a run already running: the chunks count
// the whole run, the core-seconds only the window), or capacity below the measured threads.
#ifndef ROASTCOFFEA_AGGREGATION_INVARIANTS_H_
#define ROASTCOFFEA_AGGREGATION_INVARIANTS_H_

#include <cstdint>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

struct InvariantInputs {
  const v1::AggregatedMetrics* metrics = nullptr;  // required
  double elapsed_seconds = 0;                      // the run's; 0: unknown (no duration check)
  // The tracking window the core-seconds were taken over (UTC ns); both 0: none or unknown.
  int64_t window_start_unix_ns = 0;
  int64_t window_end_unix_ns = 0;
  // The chunks' span (UTC ns, earliest start and latest end); both 0: unknown.
  int64_t chunks_start_unix_ns = 0;
  int64_t chunks_end_unix_ns = 0;
};

// One entry per figure outside its range, in the order listed above. Cost: O(sections).
std::vector<v1::ImpossibleFigure> CheckInvariants(const InvariantInputs& inputs);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_INVARIANTS_H_
