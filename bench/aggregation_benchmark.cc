// Aggregation at scale (issues #3, #25): 1,000,000 chunk records with 5 sections each, plus
// 1,000 workers x 3,600 samples of every tracking series. The headline, BM_AggregateMillionChunks
// (and ...Shuffled), aggregates from the records' compact columns made beforehand
// (PrepareChunks): issue #25's goal is <= 0.12 s for it in either record order, findings apart
// (BM_AggregateMillionChunksWithoutFindings; the findings alone are BM_FindingsMillionChunks).
// The pass from protobuf records to columns is timed on its own (BM_BuildChunkColumns) and
// inside BM_AggregateMillionChunksFromRecords, bound by the records' scattered memory; the same
// from a ChunkTable (what Measure holds) in ...FromTable.
//
//   bazel run -c opt //bench:aggregation_benchmark
//
// Counters: input_bytes (protobuf SpaceUsedLong of the measurement), peak_rss_bytes (VmHWM of
// the process during Aggregate, input included), peak_rss_over_input (< 2 is the goal) and
// extra_rss_over_input (what Aggregate itself added at its peak, relative to the input).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"
#include "aggregation/capacity.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/chunk_stats.h"
#include "aggregation/findings.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int kChunks = 1'000'000;
constexpr int kSectionsPerChunk = 5;
constexpr int kWorkers = 1'000;
constexpr int kSamples = 3'600;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;

v1::Measurement* MakeMeasurement() {
  auto* m = new v1::Measurement();
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> duration(0.0, 0.7);
  std::uniform_int_distribution<int64_t> memory(-50'000'000, 200'000'000);
  const char* datasets[] = {"TTbar", "WJets", "DYJets", "SingleMuon"};
  const char* names[] = {"jets", "muons", "electrons", "load_columns", "read_branches"};
  const v1::SectionRecord::Kind kinds[] = {
      v1::SectionRecord::KIND_TIME, v1::SectionRecord::KIND_TIME, v1::SectionRecord::KIND_TIME,
      v1::SectionRecord::KIND_MEMORY, v1::SectionRecord::KIND_BYTES};

  m->mutable_metadata()->set_elapsed_seconds(3600);
  m->mutable_metadata()->mutable_start_time()->set_seconds(kStart / kSecond);
  m->mutable_metadata()->mutable_end_time()->set_seconds(kStart / kSecond + 3600);
  v1::WorkflowReport* report = m->mutable_report();
  report->set_events(int64_t{kChunks} * 100'000);
  report->set_compressed_bytes_read(int64_t{kChunks} * 50'000'000);
  report->set_process_time_seconds(kChunks * 1.2);
  report->set_chunks(kChunks);

  m->mutable_chunks()->Reserve(kChunks);
  for (int i = 0; i < kChunks; ++i) {
    v1::ChunkRecord* c = m->add_chunks();
    const int file = i / 10;
    c->set_dataset(datasets[file % 4]);
    c->set_file(absl::StrCat("root://eospublic.cern.ch//eos/opendata/cms/file_", file, ".root"));
    c->set_uuid(absl::StrCat("0f6c1a2e-5b7d-4c1e-9a3b-", 100000000000 + file));
    c->set_entry_start(int64_t{i % 10} * 100'000);
    c->set_entry_stop(int64_t{i % 10 + 1} * 100'000);
    c->set_events(100'000);
    const double d = duration(rng);
    c->set_start_unix_ns(kStart + int64_t{i} * 3'600'000);
    c->set_end_unix_ns(c->start_unix_ns() + static_cast<int64_t>(d * 1e9));
    c->set_duration_seconds(d);
    c->set_cpu_seconds(d * 0.9);
    c->set_memory_before_bytes(2'000'000'000);
    c->set_memory_after_bytes(2'000'000'000 + memory(rng));
    c->set_compressed_bytes_read(50'000'000);
    c->set_worker(absl::StrCat("tcp://10.0.", i % kWorkers / 256, ".", i % 256, ":40000"));
    c->set_status(i % 1000 == 999 ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    if (c->status() == v1::CHUNK_STATUS_FAILED) c->set_error_text("OSError: XRootD timeout");
    for (int s = 0; s < kSectionsPerChunk; ++s) {
      v1::SectionRecord* section = c->add_sections();
      section->set_name(names[s]);
      section->set_kind(kinds[s]);
      section->set_entries(1 + s % 2);
      section->set_duration_seconds(d * 0.1 * (s + 1));
      section->set_cpu_seconds(d * 0.08 * (s + 1));
      section->set_memory_delta_bytes(memory(rng));
      section->set_bytes_read(10'000'000);
    }
  }

  v1::TrackingData* tracking = m->mutable_tracking();
  tracking->set_backend("dask");
  tracking->set_interval_seconds(1);
  for (int t = 0; t < kSamples; ++t) {
    tracking->add_worker_count_time_unix_ns(kStart + t * kSecond);
    tracking->add_worker_count(kWorkers);
    tracking->add_queued_chunks(100);
  }
  for (int w = 0; w < kWorkers; ++w) {
    v1::WorkerSeries* series = tracking->add_workers();
    series->set_worker(absl::StrCat("tcp://10.0.", w / 256, ".", w % 256, ":40000"));
    series->set_host(absl::StrCat("node", w));
    for (int t = 0; t < kSamples; ++t) {
      const double x = static_cast<double>((t * 7919 + w) % 1000);
      series->add_time_unix_ns(kStart + t * kSecond + w * 1000);
      series->add_memory_bytes(2e9 + 1e6 * x);
      series->add_memory_limit_bytes(8e9);
      series->add_cores(4);
      series->add_active_tasks(x / 100);
      series->add_executing_tasks(x / 250);
      series->add_managed_bytes(1e6 * x);
      series->add_occupancy_seconds(x / 10);
      series->add_cpu_percent(x / 3);
      series->add_last_seen_unix_seconds(static_cast<double>(kStart / kSecond + t));
      series->add_spilled_bytes(0);
      series->add_network_read_bytes_per_second(1e5 * x);
      series->add_network_write_bytes_per_second(1e4 * x);
      series->add_disk_read_bytes_per_second(1e3 * x);
      series->add_disk_write_bytes_per_second(1e3 * x);
    }
  }
  return m;
}

v1::Measurement& MutableInput() {
  static v1::Measurement* const measurement = MakeMeasurement();
  return *measurement;
}

const v1::Measurement& Input() { return MutableInput(); }

// The same records shuffled in place (records finish out of order in a parallel run); in place
// so that the process never holds two inputs and the RSS counters stay comparable.
const v1::Measurement& ShuffledInput() {
  static const bool shuffled = [] {
    v1::Measurement& m = MutableInput();
    std::mt19937_64 rng(2);
    for (int i = m.chunks_size() - 1; i > 0; --i) {
      m.mutable_chunks()->SwapElements(i, static_cast<int>(rng() % static_cast<uint64_t>(i + 1)));
    }
    return true;
  }();
  (void)shuffled;
  return MutableInput();
}

enum class Parts { kAll, kChunksOnly, kTrackingOnly };

// `prepared`: the records' columns made beforehand (PrepareChunks), null to make them inside.
// `table`: the records as a ChunkTable, read instead of measurement.chunks().
void RunAggregate(benchmark::State& state, const v1::Measurement& measurement,
                  bool include_chunk_info, Parts parts = Parts::kAll,
                  const PreparedChunks* prepared = nullptr, bool evaluate_findings = true,
                  const ChunkTable* table = nullptr) {
  AggregationOptions options;
  options.include_chunk_info = include_chunk_info;
  options.evaluate_findings = evaluate_findings;
  AggregationInput input = AggregationInputFromMeasurement(measurement, options);
  input.prepared_chunks = prepared;
  if (parts == Parts::kChunksOnly) input.tracking = nullptr;
  if (parts == Parts::kTrackingOnly) input.chunks = nullptr;
  double input_bytes = static_cast<double>(measurement.SpaceUsedLong());
  if (table != nullptr) {
    input.chunks = nullptr;
    input.chunk_table = table;
    input_bytes += static_cast<double>(table->MemoryBytes()) -
                   static_cast<double>(measurement.chunks().SpaceUsedExcludingSelfLong());
  }
  int64_t peak = 0;
  int64_t extra = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ResetPeakRss();
    const int64_t before = ProcStatusBytes("VmRSS");
    state.ResumeTiming();
    absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
    benchmark::DoNotOptimize(metrics);
    state.PauseTiming();
    if (!metrics.ok()) state.SkipWithError(std::string(metrics.status().message()).c_str());
    peak = std::max(peak, ProcStatusBytes("VmHWM"));
    extra = std::max(extra, ProcStatusBytes("VmHWM") - before);
    metrics = v1::AggregatedMetrics();  // free the result outside the timing
    state.ResumeTiming();
  }
  state.counters["records"] = kChunks;
  state.counters["sections"] = double{kChunks} * kSectionsPerChunk;
  state.counters["samples"] = double{kWorkers} * kSamples;
  state.counters["input_bytes"] = input_bytes;
  state.counters["peak_rss_bytes"] = static_cast<double>(peak);
  state.counters["peak_rss_over_input"] = static_cast<double>(peak) / input_bytes;
  state.counters["extra_rss_over_input"] = static_cast<double>(extra) / input_bytes;
}

// Aggregation from chunk columns prepared once, before the timing (PrepareChunks: what a caller
// holding the records while the run goes on can do); the pass over the records is
// BM_BuildChunkColumns.
void RunAggregatePrepared(benchmark::State& state, const v1::Measurement& measurement,
                          bool evaluate_findings) {
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(measurement.chunks());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  RunAggregate(state, measurement, /*include_chunk_info=*/true, Parts::kAll, prepared->get(),
               evaluate_findings);
}

void BM_AggregateMillionChunks(benchmark::State& state) {
  RunAggregatePrepared(state, Input(), /*evaluate_findings=*/true);
}
BENCHMARK(BM_AggregateMillionChunks)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(5);

void BM_AggregateMillionChunksWithoutFindings(benchmark::State& state) {
  RunAggregatePrepared(state, Input(), /*evaluate_findings=*/false);
}
BENCHMARK(BM_AggregateMillionChunksWithoutFindings)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(5);

// From the protobuf records: the pass that makes the columns included.
void BM_AggregateMillionChunksFromRecords(benchmark::State& state) {
  RunAggregate(state, Input(), /*include_chunk_info=*/true);
}
BENCHMARK(BM_AggregateMillionChunksFromRecords)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// The two halves of the work, for the record.
void BM_TrackingOnly(benchmark::State& state) {
  RunAggregate(state, Input(), true, Parts::kTrackingOnly);
}
BENCHMARK(BM_TrackingOnly)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_ChunksOnly(benchmark::State& state) {
  RunAggregate(state, Input(), true, Parts::kChunksOnly);
}
BENCHMARK(BM_ChunksOnly)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// The two parts of the chunk work (issue #25): the one pass over the protobuf records that
// builds the compact columns (bound by the records' scattered memory), and the chunk statistics
// and chunk_info computed from the columns.
void RunBuildChunkColumns(benchmark::State& state, const v1::Measurement& measurement) {
  for (auto _ : state) {
    aggregation_internal::BranchCoverageAccumulator branches;
    aggregation_internal::SectionAccumulator sections(kChunks);
    auto columns = aggregation_internal::BuildChunkColumns(
        measurement.chunks(), &branches, &sections, state.range(0) != 0 ? 100'000 : SIZE_MAX);
    benchmark::DoNotOptimize(columns);
    state.PauseTiming();
    if (!columns.ok()) state.SkipWithError(std::string(columns.status().message()).c_str());
    columns = aggregation_internal::ChunkColumns();  // freed outside the timing
    state.ResumeTiming();
  }
}

void RunChunkStatisticsFromColumns(benchmark::State& state, const v1::Measurement& measurement) {
  for (auto _ : state) {
    state.PauseTiming();
    aggregation_internal::BranchCoverageAccumulator branches;
    aggregation_internal::SectionAccumulator sections(kChunks);
    auto columns =
        aggregation_internal::BuildChunkColumns(measurement.chunks(), &branches, &sections,
                                                /*parallel_min_records=*/100'000);
    if (!columns.ok()) state.SkipWithError(std::string(columns.status().message()).c_str());
    state.ResumeTiming();
    std::optional<v1::ChunkMetrics> metrics = aggregation_internal::AggregateChunkColumns(
        *columns, &sections, /*include_chunk_info=*/true, /*parallel_min_records=*/100'000);
    benchmark::DoNotOptimize(metrics);
    state.PauseTiming();
    metrics.reset();
    columns = aggregation_internal::ChunkColumns();
    state.ResumeTiming();
  }
}

void BM_BuildChunkColumns(benchmark::State& state) { RunBuildChunkColumns(state, Input()); }
BENCHMARK(BM_BuildChunkColumns)
    ->ArgName("two_threads")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_ChunkStatisticsFromColumns(benchmark::State& state) {
  RunChunkStatisticsFromColumns(state, Input());
}
BENCHMARK(BM_ChunkStatisticsFromColumns)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// The records as a ChunkTable (what Measure holds from ingest through the join, issue #25):
// Aggregate reads its columns without building a record. Made outside the timing.
std::unique_ptr<ChunkTable> TableOf(const v1::Measurement& measurement) {
  auto table = std::make_unique<ChunkTable>();
  table->Reserve(static_cast<size_t>(measurement.chunks_size()));
  for (const v1::ChunkRecord& record : measurement.chunks()) table->Append(record);
  return table;
}

// BM_BuildChunkColumns from the table.
void RunBuildChunkColumnsFromTable(benchmark::State& state, const v1::Measurement& measurement) {
  const std::unique_ptr<ChunkTable> table = TableOf(measurement);
  for (auto _ : state) {
    aggregation_internal::BranchCoverageAccumulator branches;
    aggregation_internal::SectionAccumulator sections(kChunks);
    auto columns = aggregation_internal::BuildChunkColumns(
        *table, &branches, &sections, state.range(0) != 0 ? 100'000 : SIZE_MAX);
    benchmark::DoNotOptimize(columns);
    state.PauseTiming();
    if (!columns.ok()) state.SkipWithError(std::string(columns.status().message()).c_str());
    columns = aggregation_internal::ChunkColumns();  // freed outside the timing
    state.ResumeTiming();
  }
}

void BM_BuildChunkColumnsFromTable(benchmark::State& state) {
  RunBuildChunkColumnsFromTable(state, Input());
}
BENCHMARK(BM_BuildChunkColumnsFromTable)
    ->ArgName("two_threads")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// BM_AggregateMillionChunksFromRecords from the table: the pass that makes the columns included.
void BM_AggregateMillionChunksFromTable(benchmark::State& state) {
  const std::unique_ptr<ChunkTable> table = TableOf(Input());
  RunAggregate(state, Input(), /*include_chunk_info=*/true, Parts::kAll, nullptr,
               /*evaluate_findings=*/true, table.get());
}
BENCHMARK(BM_AggregateMillionChunksFromTable)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// What Aggregate of a table cost before it read the columns (the interim): the records
// materialized from the table (ChunkTable::AppendRecordsTo) before the records' pass.
void BM_MaterializeTableRecords(benchmark::State& state) {
  const std::unique_ptr<ChunkTable> table = TableOf(Input());
  for (auto _ : state) {
    auto records = std::make_unique<google::protobuf::RepeatedPtrField<v1::ChunkRecord>>();
    table->AppendRecordsTo(records.get());
    benchmark::DoNotOptimize(records);
    state.PauseTiming();
    records.reset();  // freed outside the timing
    state.ResumeTiming();
  }
}
BENCHMARK(BM_MaterializeTableRecords)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// The headline (BM_AggregateMillionChunks) with the columns prepared from the table.
void RunAggregatePreparedFromTable(benchmark::State& state, const v1::Measurement& measurement) {
  const std::unique_ptr<ChunkTable> table = TableOf(measurement);
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(*table);
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  RunAggregate(state, measurement, /*include_chunk_info=*/true, Parts::kAll, prepared->get(),
               /*evaluate_findings=*/true, table.get());
}

void BM_AggregateMillionChunksPreparedFromTable(benchmark::State& state) {
  RunAggregatePreparedFromTable(state, Input());
}
BENCHMARK(BM_AggregateMillionChunksPreparedFromTable)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(5);

// The findings alone (issue #23): every rule over the million records, given the metrics and
// the chunk columns Aggregate computed once.
void RunFindings(benchmark::State& state, const v1::Measurement& measurement) {
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(measurement));
  if (!metrics.ok()) {
    state.SkipWithError(std::string(metrics.status().message()).c_str());
    return;
  }
  // The columns Aggregate hands the findings (issue #25), made once outside the timing.
  absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(measurement.chunks());
  if (!prepared.ok()) {
    state.SkipWithError(std::string(prepared.status().message()).c_str());
    return;
  }
  aggregation_internal::FindingsInputs in;
  in.metrics = &*metrics;
  in.chunks = &measurement.chunks();
  in.columns = &(*prepared)->columns;
  in.tracking = measurement.has_tracking() ? &measurement.tracking() : nullptr;
  in.warnings = &measurement.warnings();
  in.elapsed_seconds = measurement.metadata().elapsed_seconds();
  for (auto _ : state) {
    aggregation_internal::FindingsOutcome outcome = aggregation_internal::EvaluateFindings(in);
    benchmark::DoNotOptimize(outcome);
  }
}

void BM_FindingsMillionChunks(benchmark::State& state) { RunFindings(state, Input()); }
BENCHMARK(BM_FindingsMillionChunks)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// Shuffled last: the shuffle is in place (the benchmarks above read the records in order).
void BM_AggregateMillionChunksShuffled(benchmark::State& state) {
  RunAggregatePrepared(state, ShuffledInput(), /*evaluate_findings=*/true);
}
BENCHMARK(BM_AggregateMillionChunksShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_AggregateMillionChunksWithoutFindingsShuffled(benchmark::State& state) {
  RunAggregatePrepared(state, ShuffledInput(), /*evaluate_findings=*/false);
}
BENCHMARK(BM_AggregateMillionChunksWithoutFindingsShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_AggregateMillionChunksFromRecordsShuffled(benchmark::State& state) {
  RunAggregate(state, ShuffledInput(), /*include_chunk_info=*/true);
}
BENCHMARK(BM_AggregateMillionChunksFromRecordsShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_AggregateMillionChunksShuffledNoChunkInfo(benchmark::State& state) {
  RunAggregate(state, ShuffledInput(), /*include_chunk_info=*/false);
}
BENCHMARK(BM_AggregateMillionChunksShuffledNoChunkInfo)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_FindingsMillionChunksShuffled(benchmark::State& state) {
  RunFindings(state, ShuffledInput());
}
BENCHMARK(BM_FindingsMillionChunksShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_BuildChunkColumnsShuffled(benchmark::State& state) {
  RunBuildChunkColumns(state, ShuffledInput());
}
BENCHMARK(BM_BuildChunkColumnsShuffled)
    ->ArgName("two_threads")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_ChunkStatisticsFromColumnsShuffled(benchmark::State& state) {
  RunChunkStatisticsFromColumns(state, ShuffledInput());
}
BENCHMARK(BM_ChunkStatisticsFromColumnsShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_AggregateMillionChunksFromTableShuffled(benchmark::State& state) {
  const std::unique_ptr<ChunkTable> table = TableOf(ShuffledInput());
  RunAggregate(state, ShuffledInput(), /*include_chunk_info=*/true, Parts::kAll, nullptr,
               /*evaluate_findings=*/true, table.get());
}
BENCHMARK(BM_AggregateMillionChunksFromTableShuffled)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

void BM_BuildChunkColumnsFromTableShuffled(benchmark::State& state) {
  RunBuildChunkColumnsFromTable(state, ShuffledInput());
}
BENCHMARK(BM_BuildChunkColumnsFromTableShuffled)
    ->ArgName("two_threads")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(3);

// The capacity timeline of an engine run (the findings' capacity rules, issue #25): a TaskVine
// log of 10^6 one-core tasks on 100 workers in lockstep, as collect's log reader makes it: per
// worker a step series with a point per task start and end, all workers changing at the same
// instants, and the ready queue.
v1::TrackingData* MakeLockstepTracking() {
  constexpr int kEngineWorkers = 100;
  constexpr int kTasksPerWorker = 10'000;
  auto* tracking = new v1::TrackingData();
  tracking->set_worker_count_kind(v1::SERIES_KIND_STEP);
  for (int w = 0; w < kEngineWorkers; ++w) {
    v1::WorkerSeries* series = tracking->add_workers();
    series->set_worker(absl::StrCat("worker-", w));
    series->set_kind(v1::SERIES_KIND_STEP);
  }
  for (int t = 0; t < kTasksPerWorker; ++t) {
    const int64_t slot = kStart + t * kSecond / 2;
    tracking->add_worker_count_time_unix_ns(slot - kSecond / 100);
    tracking->add_worker_count(kEngineWorkers);
    tracking->add_queued_chunks(kEngineWorkers);
    for (v1::WorkerSeries& series : *tracking->mutable_workers()) {
      for (const auto& [ns, executing] :
           {std::pair<int64_t, double>{slot, 1}, {slot + kSecond * 47 / 100, 0}}) {
        series.add_time_unix_ns(ns);
        series.add_cores(1);
        series.add_executing_tasks(executing);
      }
    }
  }
  return tracking;
}

void BM_AnalyseCapacityMillionTasks(benchmark::State& state) {
  static const v1::TrackingData* tracking = MakeLockstepTracking();
  aggregation_internal::CoresPerTask cores_per_task;
  for (const v1::WorkerSeries& series : tracking->workers()) cores_per_task[series.worker()] = 1;
  for (auto _ : state) {
    auto timeline = aggregation_internal::AnalyseCapacity(*tracking, &cores_per_task);
    benchmark::DoNotOptimize(timeline);
  }
}
BENCHMARK(BM_AnalyseCapacityMillionTasks)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(5);

// The same 10^6 one-core tasks on 100 workers as a real log gives them (gen.py tasklog): each
// worker's tasks start and end at instants of its own (~2 x 10^6 distinct instants), each change
// written as two points (the previous state, then the new one, at its instant: ~4 x 10^6
// points), and the ready queue changing at every task start.
v1::TrackingData* MakeStaggeredTracking() {
  constexpr int kEngineWorkers = 100;
  constexpr int kTasksPerWorker = 10'000;
  auto* tracking = new v1::TrackingData();
  tracking->set_worker_count_kind(v1::SERIES_KIND_STEP);
  const int64_t task_ns = kSecond / 2;
  for (int w = 0; w < kEngineWorkers; ++w) {
    v1::WorkerSeries* series = tracking->add_workers();
    series->set_worker(absl::StrCat("worker-", w));
    series->set_kind(v1::SERIES_KIND_STEP);
    const int64_t offset = w * 4'999'999;  // each worker's own instants
    double executing = 0;
    const auto change = [&](int64_t ns, double next) {
      if (series->time_unix_ns_size() > 0) {
        series->add_time_unix_ns(ns);
        series->add_cores(1);
        series->add_executing_tasks(executing);
      }
      series->add_time_unix_ns(ns);
      series->add_cores(1);
      series->add_executing_tasks(next);
      executing = next;
    };
    for (int t = 0; t < kTasksPerWorker; ++t) {
      change(kStart + offset + t * task_ns, 1);
      change(kStart + offset + t * task_ns + task_ns * 47 / 100, 0);
    }
  }
  // The queue: one point per task start, in time order across the workers.
  std::vector<int64_t> starts;
  for (int t = 0; t < kTasksPerWorker; ++t) {
    for (int w = 0; w < kEngineWorkers; ++w) starts.push_back(kStart + w * 4'999'999 + t * task_ns);
  }
  std::sort(starts.begin(), starts.end());
  for (size_t k = 0; k < starts.size(); ++k) {
    tracking->add_worker_count_time_unix_ns(starts[k]);
    tracking->add_worker_count(kEngineWorkers);
    tracking->add_queued_chunks(static_cast<int>(starts.size() - k - 1) % 200);
  }
  return tracking;
}

void BM_AnalyseCapacityMillionTasksStaggered(benchmark::State& state) {
  static const v1::TrackingData* tracking = MakeStaggeredTracking();
  aggregation_internal::CoresPerTask cores_per_task;
  for (const v1::WorkerSeries& series : tracking->workers()) cores_per_task[series.worker()] = 1;
  for (auto _ : state) {
    auto timeline = aggregation_internal::AnalyseCapacity(*tracking, &cores_per_task);
    benchmark::DoNotOptimize(timeline);
  }
  state.counters["points"] = 4e6;
}
BENCHMARK(BM_AnalyseCapacityMillionTasksStaggered)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Iterations(5);

}  // namespace
}  // namespace roastcoffea
