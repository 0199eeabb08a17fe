// RawRun: everything one run produced before it is measured, the one hand-off between the
// sources of a run (the live session, the Work Queue runner, importers of finished runs) and
// Measure (aggregation/measure.h). Sources fill it with raw records only; no formula. Engine
// backends add what they saw to it (AbstractMetricsBackend::Contribute), hence its place here,
// below them.
#ifndef ROASTCOFFEA_SCHEMA_RAW_RUN_H_
#define ROASTCOFFEA_SCHEMA_RAW_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The span that covers the whole run: what the tool watched, not one of the workload's spans.
inline constexpr char kCollectWindowSpanName[] = "collect window";

// The run's window on every clock we report.
struct RunWindow {
  absl::Time start;                // UTC
  absl::Time end;                  // UTC
  double elapsed_seconds = 0;      // monotonic
  double process_cpu_seconds = 0;  // getrusage(RUSAGE_SELF), user + system
  // This machine over the run (snapshots at its start and end); absent for a run that ran
  // elsewhere at another time (a finished run read from its logs).
  std::optional<v1::HostFacts> host_facts;
};

struct RawRun {
  RunWindow window;
  std::string backend;
  // The engine's version as it reported it; empty when unknown.
  std::string engine_version;
  // The engine's report (Coffea's). Without one, the chunk records are the report.
  std::optional<v1::WorkflowReport> report;
  std::optional<v1::TrackingData> tracking;
  // Chunk records the engine backend derived itself (e.g. TaskVine tasks of the chunk category),
  // joined by task id with `chunks`, the instrumentation's (aggregation/chunk_join.h). Both as
  // columns (~190 B a record against ~980 B as v1::ChunkRecord objects); Measure materializes
  // the joined records once, into the measurement.
  ChunkTable engine_chunks;
  ChunkTable chunks;
  std::vector<v1::Span> spans;
  std::vector<v1::Profile> profiles;
  // What the sources found worth saying, each under a stable code.
  std::vector<v1::Warning> warnings;
  // Threads of this process that ran the analysis (threadpool); absent when it ran elsewhere.
  std::optional<int> in_process_worker_threads;
  // How the measured code was built, when known (the built-in sample analysis: collect's).
  std::optional<v1::BuildInfo> analysis_build;
  // How the tool that measured it was built (collector/tool_build.h).
  v1::BuildInfo tool_build;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SCHEMA_RAW_RUN_H_
