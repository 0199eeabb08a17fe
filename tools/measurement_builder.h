// Turning one run's raw records into a measurement, the same way for every backend: the clocks
// of the run (UTC instants, monotonic elapsed time, process CPU time), the host it ran on, the
// builds, the metadata, the warnings, and the aggregated metrics.
#ifndef ROASTCOFFEA_TOOLS_MEASUREMENT_BUILDER_H_
#define ROASTCOFFEA_TOOLS_MEASUREMENT_BUILDER_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "host/host_facts.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The run's window on every clock we report.
struct RunWindow {
  absl::Time start;  // UTC
  absl::Time end;    // UTC
  double elapsed_seconds = 0;      // monotonic
  double process_cpu_seconds = 0;  // getrusage(RUSAGE_SELF), user + system
  // This machine over the run (snapshots at construction and at Stop()).
  std::optional<v1::HostFacts> host_facts;
};

// Started at construction; Stop() reads every clock, and the host, again.
class RunStopwatch {
 public:
  RunStopwatch();
  RunWindow Stop() const;

 private:
  absl::Time start_;
  std::chrono::steady_clock::time_point steady_start_;
  double cpu_start_;
  host::HostSnapshot host_start_;
};

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
  // How the measured code was built, when known (the built-in sample analysis: ToolBuildInfo()).
  std::optional<v1::BuildInfo> analysis_build;
};

// Metadata (schema version, UTC start/end, elapsed, process CPU, host, backend, host facts,
// tool and analysis builds), the host warnings (//host:host_warnings), the raw records, and the
// aggregated metrics. The caller adds name, tool version, command line and configuration.
// Errors are aggregation's (bad input, named).
absl::StatusOr<v1::Measurement> AssembleMeasurement(RawRun run);

// How collect itself was built (Bazel's -c mode, compiler, optimisation, assertions).
v1::BuildInfo ToolBuildInfo();

std::string HostName();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_MEASUREMENT_BUILDER_H_
