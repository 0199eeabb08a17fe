#include "aggregation/measure.h"

#include <utility>
#include <vector>

#include "aggregation/aggregate.h"
#include "aggregation/chunk_join.h"
#include "aggregation/report_from_chunks.h"
#include "host/host_name.h"
#include "host/host_warnings.h"

namespace roastcoffea {
namespace {

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* timestamp) {
  const int64_t nanos = absl::ToUnixNanos(time);
  timestamp->set_seconds(nanos / 1000000000);
  timestamp->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

// Step 1: the metadata of the run and the host's warnings.
void AddHostFacts(const RawRun& run, v1::Measurement* measurement) {
  v1::MeasurementMetadata& metadata = *measurement->mutable_metadata();
  metadata.set_schema_version(1);
  SetTimestamp(run.window.start, metadata.mutable_start_time());
  SetTimestamp(run.window.end, metadata.mutable_end_time());
  metadata.set_elapsed_seconds(run.window.elapsed_seconds);
  metadata.set_process_cpu_seconds(run.window.process_cpu_seconds);
  metadata.set_host(HostName());
  metadata.set_backend(run.backend);
  metadata.set_engine_version(run.engine_version);
  if (run.window.host_facts.has_value()) *metadata.mutable_host_facts() = *run.window.host_facts;
  *metadata.mutable_tool_build() = run.tool_build;
  if (run.analysis_build.has_value()) *metadata.mutable_analysis_build() = *run.analysis_build;
  host::HostWarningOptions warning_options;
  warning_options.in_process_worker_threads = run.in_process_worker_threads;
  warning_options.measured_build = run.analysis_build;
  for (v1::Warning& warning : host::HostWarnings(metadata.host_facts(), warning_options)) {
    *measurement->add_warnings() = std::move(warning);
  }
}

}  // namespace

absl::StatusOr<MeasuredRun> MeasureRun(RawRun run, const MeasureOptions& options) {
  MeasuredRun result;
  v1::Measurement& measurement = result.measurement;
  AddHostFacts(run, &measurement);
  for (v1::Warning& warning : run.warnings) *measurement.add_warnings() = std::move(warning);
  std::vector<v1::Warning>().swap(run.warnings);

  // Step 2. A source without engine records passes its instrumented ones through the join too:
  // retries the application made under new task ids become one record per chunk everywhere.
  ChunkTableJoinResult joined = JoinChunkTables(run.engine_chunks, std::move(run.chunks));
  run.engine_chunks = ChunkTable();
  for (std::string& sentence : joined.warnings) {
    v1::Warning& warning = *measurement.add_warnings();
    warning.set_code("chunk_join");
    warning.set_message(std::move(sentence));
  }
  if (options.profiles_of_chunks) {
    for (v1::Profile& profile : options.profiles_of_chunks(joined.table)) {
      run.profiles.push_back(std::move(profile));
    }
  }
  // The joined records stay a table from here on: no step builds a message per record.
  result.chunks = std::move(joined.table);
  // Step 3: without a report, the chunk records are the best account of what was processed.
  if (run.report.has_value()) {
    *measurement.mutable_report() = *std::move(run.report);
  } else if (!result.chunks.empty()) {
    *measurement.mutable_report() = BuildWorkflowReportOfRecords(result.chunks);
  }
  if (run.tracking.has_value()) *measurement.mutable_tracking() = *std::move(run.tracking);
  for (v1::Span& span : run.spans) *measurement.add_spans() = std::move(span);
  std::vector<v1::Span>().swap(run.spans);
  for (v1::Profile& profile : run.profiles) *measurement.add_profiles() = std::move(profile);
  std::vector<v1::Profile>().swap(run.profiles);

  // Step 4: a bad value from the engine or the user's command costs that value, not the run.
  for (v1::Warning& warning : RepairForAggregation(&measurement, &result.chunks)) {
    *measurement.add_warnings() = std::move(warning);
  }
  // Step 5, as `show` re-aggregates a measurement: an empty report is "nothing reported"
  // (unknown, not 0), host facts cap in-process capacity.
  AggregationOptions aggregation;
  aggregation.processor_task_patterns = options.processor_task_patterns;
  AggregationInput input = AggregationInputFromMeasurement(measurement, aggregation);
  input.chunks = nullptr;
  input.chunk_table = &result.chunks;
  absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
  if (!metrics.ok()) return metrics.status();
  *measurement.mutable_metrics() = *std::move(metrics);
  return result;
}

absl::StatusOr<v1::Measurement> Measure(RawRun run, const MeasureOptions& options) {
  absl::StatusOr<MeasuredRun> measured = MeasureRun(std::move(run), options);
  if (!measured.ok()) return measured.status();
  v1::Measurement measurement = std::move(measured->measurement);
  measured->chunks.AppendRecordsTo(measurement.mutable_chunks());
  return measurement;
}

}  // namespace roastcoffea
