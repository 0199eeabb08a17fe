#include "aggregation/aggregate.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "aggregation/branch_coverage.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/chunk_stats.h"
#include "aggregation/cpu_metrics.h"
#include "aggregation/efficiency.h"
#include "aggregation/findings.h"
#include "aggregation/fine_metrics.h"
#include "aggregation/input_validation.h"
#include "aggregation/invariants.h"
#include "aggregation/read_amplification.h"
#include "aggregation/series_integral.h"
#include "aggregation/start_order.h"
#include "aggregation/worker_metrics.h"
#include "aggregation/workflow.h"

namespace roastcoffea {
namespace {

int64_t UnixNanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

// Whether chunk records were given, in either form, and how many.
bool HasChunks(const AggregationInput& input) {
  return input.chunks != nullptr || input.chunk_table != nullptr;
}
size_t NumChunks(const AggregationInput& input) {
  if (input.chunks != nullptr) return static_cast<size_t>(input.chunks->size());
  return input.chunk_table != nullptr ? input.chunk_table->size() : 0;
}

// BuildChunkColumns' parallel_min_records: two threads only for records in memory order.
size_t TwoThreadPassMinRecords(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                               size_t parallel_min_records) {
  return aggregation_internal::RecordsMostlyInMemoryOrder(chunks) ? parallel_min_records : SIZE_MAX;
}

// The figures of the chunk records (read amplification, chunk metrics, branch coverage), all
// read from the columns made in the one pass over the records (or by PrepareChunks), which
// `*columns` points to afterwards (in `*built` or in input.prepared_chunks) for the figures
// computed later.
absl::Status AddChunkFigures(const AggregationInput& input,
                             aggregation_internal::ChunkColumns* built,
                             const aggregation_internal::ChunkColumns** columns,
                             aggregation_internal::StartOrder* start_order,
                             v1::AggregatedMetrics* metrics) {
  aggregation_internal::BranchCoverageAccumulator branches;
  aggregation_internal::SectionAccumulator built_sections;
  const aggregation_internal::SectionAccumulator* sections = &built_sections;
  if (const PreparedChunks* prepared = input.prepared_chunks; prepared != nullptr) {
    if (!prepared->columns.BuiltFrom(input.chunks, input.chunk_table)) {
      return absl::InvalidArgumentError(
          input.chunks != nullptr
              ? "prepared_chunks were made from other chunk records than `chunks`"
              : "prepared_chunks were made from other chunk records than `chunk_table`");
    }
    *columns = &prepared->columns;
    sections = &prepared->sections;  // only read: the statistics copy nothing out of it
  } else {
    built_sections = aggregation_internal::SectionAccumulator(NumChunks(input));
    absl::StatusOr<aggregation_internal::ChunkColumns> made =
        input.chunk_table != nullptr
            ? aggregation_internal::BuildChunkColumns(*input.chunk_table, &branches,
                                                      &built_sections,
                                                      input.options.parallel_min_records)
            : aggregation_internal::BuildChunkColumns(
                  *input.chunks, &branches, &built_sections,
                  TwoThreadPassMinRecords(*input.chunks, input.options.parallel_min_records));
    if (!made.ok()) return made.status();
    *built = *std::move(made);
    *columns = built;
  }
  if (const auto read = aggregation_internal::ComputeReadAmplification(**columns)) {
    metrics->mutable_workflow()->set_distinct_file_bytes(read->distinct_bytes);
    metrics->mutable_workflow()->set_read_amplification(read->ratio);
  }
  if (std::optional<v1::ChunkMetrics> chunks = aggregation_internal::AggregateChunkColumns(
          **columns, sections, input.options.include_chunk_info, input.options.parallel_min_records,
          input.options.evaluate_findings ? start_order : nullptr)) {
    *metrics->mutable_chunks() = *std::move(chunks);
  }
  const aggregation_internal::BranchCoverageAccumulator& coverage_of =
      input.prepared_chunks != nullptr ? input.prepared_chunks->branches : branches;
  if (auto coverage = coverage_of.Finish()) *metrics->mutable_branches() = *std::move(coverage);
  return absl::OkStatus();
}

// The instants the timed chunk records span (0, 0 for none).
void SetChunkSpan(const aggregation_internal::ChunkColumns& chunks,
                  aggregation_internal::InvariantInputs* invariants) {
  for (size_t i = 0; i < chunks.size(); ++i) {
    const int64_t start = chunks.start_unix_ns[i];
    const int64_t end = chunks.end_unix_ns[i];
    if (start <= 0 || end <= 0) continue;
    if (invariants->chunks_start_unix_ns == 0 || start < invariants->chunks_start_unix_ns) {
      invariants->chunks_start_unix_ns = start;
    }
    invariants->chunks_end_unix_ns = std::max(invariants->chunks_end_unix_ns, end);
  }
}

// The figures of the worker tracking: computed apart from the rest (they read nothing else), so
// that they can be made while the chunk records are aggregated.
struct TrackingFigures {
  v1::WorkerMetrics workers;
  absl::flat_hash_map<std::string, double> core_seconds_by_worker;
  aggregation_internal::TimeWindow window{0, 0};
};

TrackingFigures ComputeTrackingFigures(const AggregationInput& input) {
  TrackingFigures figures;
  const bool has_window = input.window_start_unix_ns != 0 || input.window_end_unix_ns != 0;
  figures.window = has_window ? aggregation_internal::TimeWindow{input.window_start_unix_ns,
                                                                 input.window_end_unix_ns}
                              : aggregation_internal::SampleWindow(*input.tracking);
  aggregation_internal::WorkerMetricsOverWindow workers =
      aggregation_internal::ComputeWorkerMetricsOverWindow(*input.tracking, figures.window);
  figures.workers = std::move(workers.metrics);
  figures.core_seconds_by_worker = std::move(workers.core_seconds_by_worker);
  return figures;
}

// The findings, once every other figure is in `metrics`; they read `columns` (of input.chunks)
// rather than the records.
void AddFindings(const AggregationInput& input, const aggregation_internal::ChunkColumns& columns,
                 const aggregation_internal::StartOrder& start_order,
                 v1::AggregatedMetrics* metrics) {
  aggregation_internal::FindingsInputs findings;
  findings.metrics = metrics;
  findings.chunks = input.chunks;
  findings.chunk_table = input.chunk_table;
  if (columns.BuiltFrom(input.chunks, input.chunk_table)) {
    findings.columns = &columns;
    // Made with chunk_info's order (AggregateChunkColumns); empty columns have none to make.
    if (start_order.size == columns.size()) findings.start_order = &start_order;
  }
  findings.tracking = input.tracking;
  findings.warnings = input.warnings;
  findings.analysis_build = input.analysis_build;
  findings.host_facts = input.host_facts;
  findings.elapsed_seconds = input.elapsed_seconds;
  findings.usable_cpus = input.usable_cpus;
  findings.backend = input.backend;
  findings.configuration = input.configuration;
  aggregation_internal::FindingsOutcome outcome = aggregation_internal::EvaluateFindings(findings);
  for (v1::Finding& finding : outcome.findings) *metrics->add_findings() = std::move(finding);
  for (v1::RuleEvaluation& evaluation : outcome.evaluations) {
    *metrics->add_rule_evaluations() = std::move(evaluation);
  }
  metrics->set_findings_evaluated(true);
}

// The findings (unless options.evaluate_findings is false) and the impossible figures, once
// every other figure is in `metrics`.
void AddFindingsAndInvariants(const AggregationInput& input,
                              const aggregation_internal::ChunkColumns& columns,
                              const aggregation_internal::StartOrder& start_order,
                              const aggregation_internal::TimeWindow& tracked_window,
                              v1::AggregatedMetrics* metrics) {
  if (input.options.evaluate_findings) AddFindings(input, columns, start_order, metrics);

  aggregation_internal::InvariantInputs invariants;
  invariants.metrics = metrics;
  invariants.elapsed_seconds = input.elapsed_seconds;
  invariants.window_start_unix_ns = tracked_window.start_unix_ns;
  invariants.window_end_unix_ns = tracked_window.end_unix_ns;
  SetChunkSpan(columns, &invariants);
  for (v1::ImpossibleFigure& figure : aggregation_internal::CheckInvariants(invariants)) {
    *metrics->add_impossible_figures() = std::move(figure);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreparedChunks>> PrepareChunks(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
    size_t parallel_min_records) {
  auto prepared = std::make_unique<PreparedChunks>();
  prepared->sections = aggregation_internal::SectionAccumulator(static_cast<size_t>(chunks.size()));
  absl::StatusOr<aggregation_internal::ChunkColumns> columns =
      aggregation_internal::BuildChunkColumns(
          chunks, &prepared->branches, &prepared->sections,
          TwoThreadPassMinRecords(chunks, parallel_min_records));
  if (!columns.ok()) return columns.status();
  prepared->columns = *std::move(columns);
  return prepared;
}

absl::StatusOr<std::unique_ptr<PreparedChunks>> PrepareChunks(const ChunkTable& chunks,
                                                              size_t parallel_min_records) {
  auto prepared = std::make_unique<PreparedChunks>();
  prepared->sections = aggregation_internal::SectionAccumulator(chunks.size());
  absl::StatusOr<aggregation_internal::ChunkColumns> columns =
      aggregation_internal::BuildChunkColumns(chunks, &prepared->branches, &prepared->sections,
                                              parallel_min_records);
  if (!columns.ok()) return columns.status();
  prepared->columns = *std::move(columns);
  return prepared;
}

bool IsEmptyReport(const v1::WorkflowReport& report) {
  return report.events() == 0 && report.chunks() == 0 && report.datasets_size() == 0 &&
         !report.has_compressed_bytes_read() && !report.has_uncompressed_bytes_read() &&
         !report.has_process_time_seconds() && report.columns_size() == 0;
}

AggregationInput AggregationInputFromMeasurement(const v1::Measurement& measurement,
                                                 const AggregationOptions& options) {
  AggregationInput input;
  if (measurement.has_report() && !IsEmptyReport(measurement.report())) {
    input.report = &measurement.report();
  }
  input.elapsed_seconds = measurement.metadata().elapsed_seconds();
  if (measurement.metadata().has_start_time() && measurement.metadata().has_end_time()) {
    input.window_start_unix_ns = UnixNanos(measurement.metadata().start_time());
    input.window_end_unix_ns = UnixNanos(measurement.metadata().end_time());
  }
  if (measurement.has_tracking()) input.tracking = &measurement.tracking();
  if (measurement.metadata().has_host_facts() &&
      measurement.metadata().host_facts().usable_cpus() > 0) {
    input.usable_cpus = measurement.metadata().host_facts().usable_cpus();
  }
  if (measurement.metadata().has_host_facts()) {
    input.host_facts = &measurement.metadata().host_facts();
  }
  if (measurement.metadata().has_analysis_build()) {
    input.analysis_build = &measurement.metadata().analysis_build();
  }
  input.backend = measurement.metadata().backend();
  input.configuration = &measurement.metadata().configuration();
  input.warnings = &measurement.warnings();
  input.chunks = &measurement.chunks();
  input.spans = &measurement.spans();
  input.options = options;
  return input;
}

absl::StatusOr<v1::AggregatedMetrics> Aggregate(const AggregationInput& input) {
  if (input.chunk_table != nullptr && input.chunks != nullptr) {
    return absl::InvalidArgumentError("both chunk records and a chunk table given");
  }
  absl::Status valid = aggregation_internal::ValidateAggregationInput(input);
  if (!valid.ok()) return valid;

  v1::AggregatedMetrics metrics;
  *metrics.mutable_workflow() =
      aggregation_internal::ComputeWorkflowMetrics(input.report, input.elapsed_seconds);
  // Big runs: the tracking figures on a helper thread while the chunk records are aggregated.
  std::optional<TrackingFigures> tracking;
  std::thread tracking_thread;
  if (input.tracking != nullptr) {
    if (HasChunks(input) && NumChunks(input) >= input.options.parallel_min_records) {
      tracking_thread =
          std::thread([&input, &tracking] { tracking = ComputeTrackingFigures(input); });
    } else {
      tracking = ComputeTrackingFigures(input);
    }
  }
  aggregation_internal::ChunkColumns built;
  const aggregation_internal::ChunkColumns* columns = &built;
  // The records by start instant, made once (with chunk_info's order) for the findings too.
  aggregation_internal::StartOrder start_order;
  absl::Status added = HasChunks(input)
                           ? AddChunkFigures(input, &built, &columns, &start_order, &metrics)
                           : absl::OkStatus();
  if (tracking_thread.joinable()) tracking_thread.join();
  if (!added.ok()) return added;

  std::optional<double> total_cores;
  if (tracking.has_value()) {
    *metrics.mutable_workers() = std::move(tracking->workers);
    if (metrics.workers().has_total_cores()) total_cores = metrics.workers().total_cores();
  }
  *metrics.mutable_efficiency() =
      aggregation_internal::ComputeEfficiencyMetrics(metrics.workflow(), total_cores);
  if (metrics.has_workers()) {
    aggregation_internal::AddCoreSecondsEfficiency(metrics.workflow(), metrics.workers(),
                                                   metrics.mutable_efficiency());
    if (input.spans != nullptr) {
      aggregation_internal::AddTaskExecutionEfficiency(*input.spans, metrics.workers(),
                                                       metrics.mutable_efficiency());
    }
  }

  if (input.spans != nullptr) {
    if (auto fine = aggregation_internal::ComputeFineMetrics(
            *input.spans, input.options.processor_task_patterns,
            tracking.has_value() ? &tracking->core_seconds_by_worker : nullptr)) {
      *metrics.mutable_fine() = *std::move(fine);
    }
  }

  aggregation_internal::CpuInputs cpu;
  cpu.elapsed_seconds = input.elapsed_seconds;
  cpu.workflow = &metrics.workflow();
  cpu.workers = metrics.has_workers() ? &metrics.workers() : nullptr;
  cpu.fine = metrics.has_fine() ? &metrics.fine() : nullptr;
  cpu.chunks = HasChunks(input) ? columns : nullptr;
  cpu.in_process_workers = input.tracking != nullptr && input.tracking->workers_share_process();
  cpu.usable_cpus = input.usable_cpus;
  *metrics.mutable_cpu() = aggregation_internal::ComputeCpuMetrics(cpu);

  AddFindingsAndInvariants(
      input, *columns, start_order,
      tracking.has_value() ? tracking->window : aggregation_internal::TimeWindow{0, 0}, &metrics);
  return metrics;
}

}  // namespace roastcoffea
