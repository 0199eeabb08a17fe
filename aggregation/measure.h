// Measure: the one way from a run's raw records (RawRun) to its measurement, the same for every
// source (a live session of any backend, the Work Queue runner, a finished run's logs), in one
// fixed order:
//   1. host facts: metadata (schema version, UTC start/end, elapsed, process CPU, host,
//      backend, engine version, host facts, tool and analysis builds) and the host warnings
//      (//host:host_warnings);
//   2. chunk join: the engine's chunk records with the instrumentation's, by task id
//      (aggregation/chunk_join.h), then the profiles attributed to the joined records;
//   3. report from chunks, when the run has no report of its own;
//   4. repair: a bad value costs that value, not the run (RepairForAggregation);
//   5. aggregate, findings included (aggregate.h).
// From step 2 on the chunk records stay a ChunkTable (MeasuredRun::chunks): the report, the
// repair and Aggregate read it, and no step builds a v1::ChunkRecord per record.
// The caller adds name, tool version, command line, configuration and interruption.
#ifndef ROASTCOFFEA_AGGREGATION_MEASURE_H_
#define ROASTCOFFEA_AGGREGATION_MEASURE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {

struct MeasureOptions {
  // Fine-metric task prefixes (or glob patterns) that are the processor's; the rest is overhead.
  std::vector<std::string> processor_task_patterns;
  // Profiles the source takes once the chunk records are joined, attributed to them (e.g. the
  // threadpool backend's per-chunk profiles); appended to RawRun::profiles. Unset: none.
  std::function<std::vector<v1::Profile>(const ChunkTable&)> profiles_of_chunks;
};

// A measurement with its chunk records held apart as a table (issue #25): at 10^6 chunks the
// records as v1::ChunkRecord messages are ~1 KB each, as a ChunkTable ~190 B. Whoever saves or
// renders it treats `chunks` as if it were `measurement.chunks()`.
struct MeasuredRun {
  v1::Measurement measurement;  // everything but the chunk records: measurement.chunks() empty
  ChunkTable chunks;            // the run's joined, repaired chunk records, in order
};

// The measurement of `run`, its chunk records as a table. Errors are aggregation's (bad input,
// named).
absl::StatusOr<MeasuredRun> MeasureRun(RawRun run, const MeasureOptions& options);

// MeasureRun with the records materialized into measurement.chunks(), for callers that want one
// message. Errors are aggregation's (bad input, named).
absl::StatusOr<v1::Measurement> Measure(RawRun run, const MeasureOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_MEASURE_H_
