// Turning one run's raw records into a measurement, the same way for every backend: the clocks
// of the run, the host it ran on, the builds, the metadata, the warnings, and the aggregated
// metrics. Internal to //collector: MeasurementSession is the way in.
#ifndef ROASTCOFFEA_COLLECTOR_ASSEMBLE_MEASUREMENT_H_
#define ROASTCOFFEA_COLLECTOR_ASSEMBLE_MEASUREMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/run_stopwatch.h"
// HostName() for this package's callers (the measurement's host; Work Queue worker commands).
#include "host/host_name.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct RawRun {
  RunWindow window;
  std::string backend;
  v1::WorkflowReport report;
  std::optional<v1::TrackingData> tracking;
  std::vector<v1::ChunkRecord> chunks;
  std::vector<v1::Span> spans;
  std::vector<v1::Profile> profiles;
  // The backend's warnings that qualify the numbers (AbstractMetricsBackend::MeasurementWarnings).
  std::vector<v1::Warning> warnings;
  // Fine-metric task prefixes (or glob patterns) that are the processor's; the rest is overhead.
  std::vector<std::string> processor_patterns;
  // Threads of this process that ran the analysis (threadpool); absent when it ran elsewhere.
  std::optional<int> in_process_worker_threads;
  // How the measured code was built, when known (the built-in sample analysis: collect's).
  std::optional<v1::BuildInfo> analysis_build;
};

// Metadata (schema version, UTC start/end, elapsed, process CPU, host, backend, host facts,
// tool and analysis builds), the host warnings (//host:host_warnings), the raw records, and the
// aggregated metrics. The caller adds name, tool version, command line and configuration.
// Errors are aggregation's (bad input, named).
absl::StatusOr<v1::Measurement> AssembleMeasurement(RawRun run);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_ASSEMBLE_MEASUREMENT_H_
