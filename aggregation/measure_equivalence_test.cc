// MeasureRun keeps the chunk records as a table from the join on (issue #25); Measure is it plus
// the records materialized. Both must give, to the byte, the measurement the records path gave
// before: RecordsPathMeasure below is that path, kept here as the reference (the table joined,
// then every record materialized into measurement.chunks(), the report, the repair and Aggregate
// over those records).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "aggregation/chunk_join.h"
#include "aggregation/measure.h"
#include "aggregation/report_from_chunks.h"
#include "gtest/gtest.h"
#include "host/host_name.h"
#include "host/host_warnings.h"
#include "schema/chunk_table.h"
#include "schema/deterministic_bytes.h"
#include "schema/measurement.pb.h"
#include "schema/raw_run.h"

namespace roastcoffea {
namespace {

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* timestamp) {
  const int64_t nanos = absl::ToUnixNanos(time);
  timestamp->set_seconds(nanos / 1000000000);
  timestamp->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

// The records path as aggregation/measure.cc had it before MeasureRun kept the table.
absl::StatusOr<v1::Measurement> RecordsPathMeasure(RawRun run, const MeasureOptions& options) {
  v1::Measurement measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
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
    *measurement.add_warnings() = std::move(warning);
  }
  for (v1::Warning& warning : run.warnings) *measurement.add_warnings() = std::move(warning);

  ChunkTableJoinResult joined = JoinChunkTables(run.engine_chunks, std::move(run.chunks));
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
  joined.table.AppendRecordsTo(measurement.mutable_chunks());
  if (run.report.has_value()) {
    *measurement.mutable_report() = *std::move(run.report);
  } else if (measurement.chunks_size() > 0) {
    *measurement.mutable_report() = BuildWorkflowReportOfRecords(measurement.chunks());
  }
  if (run.tracking.has_value()) *measurement.mutable_tracking() = *std::move(run.tracking);
  for (v1::Span& span : run.spans) *measurement.add_spans() = std::move(span);
  for (v1::Profile& profile : run.profiles) *measurement.add_profiles() = std::move(profile);
  for (v1::Warning& warning : RepairForAggregation(&measurement)) {
    *measurement.add_warnings() = std::move(warning);
  }
  AggregationOptions aggregation;
  aggregation.processor_task_patterns = options.processor_task_patterns;
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(measurement, aggregation));
  if (!metrics.ok()) return metrics.status();
  *measurement.mutable_metrics() = *std::move(metrics);
  return measurement;
}

// What RandomRun makes: the same run twice (a RawRun is moved into Measure).
struct RunShape {
  uint64_t seed = 1;
  int chunks = 300;
  bool engine = true;   // engine task records to join with
  bool report = false;  // the run's own report (else the records are the report)
  bool invalid = true;  // records Aggregate would refuse, bad samples, a NaN fine metric
  bool tracking = true;
  bool profiles = true;
};

RawRun RandomRun(const RunShape& shape) {
  std::mt19937_64 rng(shape.seed);
  RawRun run;
  run.window.start = absl::FromUnixSeconds(1'700'000'000);
  run.window.end = run.window.start + absl::Seconds(600);
  run.window.elapsed_seconds = shape.invalid && rng() % 3 == 0 ? -1 : 600;
  run.window.process_cpu_seconds = 12.5;
  run.window.host_facts.emplace().set_online_cpus(8);
  run.window.host_facts->set_usable_cpus(8);
  run.backend = shape.engine ? "taskvine" : "threadpool";
  run.engine_version = "7.11.1";
  run.tool_build.set_build_mode("opt");
  run.tool_build.set_optimized(true);
  if (!shape.engine) run.in_process_worker_threads = 4;
  v1::Warning& source_warning = run.warnings.emplace_back();
  source_warning.set_code("source");
  source_warning.set_message("from the source");

  const char* datasets[] = {"ttbar", "wjets", "", "data"};
  const int64_t t0 = 1'700'000'000'000'000'000;
  std::vector<v1::ChunkRecord> instrumented;
  std::vector<v1::ChunkRecord> engine;
  for (int i = 0; i < shape.chunks; ++i) {
    v1::ChunkRecord r;
    const int file = i / 4;
    r.set_dataset(datasets[file % 4]);
    r.set_file(absl::StrCat("root://eos/f", file, ".root"));
    r.set_uuid(absl::StrCat("uuid-", file));
    r.set_entry_start((i % 4) * 1000);
    r.set_entry_stop((i % 4 + 1) * 1000);
    r.set_events(rng() % 5 == 0 ? 0 : 1000);
    r.set_start_unix_ns(t0 + int64_t{i} * 500'000'000);
    const double duration = 0.1 + static_cast<double>(rng() % 1000) / 500;
    r.set_duration_seconds(duration);
    r.set_end_unix_ns(r.start_unix_ns() + static_cast<int64_t>(duration * 1e9));
    r.set_cpu_seconds(duration * 0.8);
    r.set_memory_before_bytes(1'000'000'000);
    r.set_memory_after_bytes(1'000'000'000 + static_cast<int64_t>(rng() % 50'000'000));
    r.set_compressed_bytes_read(static_cast<int64_t>(rng() % 10'000'000));
    r.set_uncompressed_bytes_read(3 * r.compressed_bytes_read());
    r.set_thread_index(i % 4);
    r.set_task_id(absl::StrCat(i));
    v1::SectionRecord* section = r.add_sections();
    section->set_name("load");
    section->set_kind(v1::SectionRecord::KIND_TIME);
    section->set_duration_seconds(duration * 0.3);
    if (rng() % 10 == 0) r.add_accessed_branches("Jet_pt");  // a field outside the columns
    if (rng() % 20 == 0) {
      r.set_status(v1::CHUNK_STATUS_FAILED);
      r.set_error_text("OSError: XRootD timeout");
    } else {
      r.set_status(v1::CHUNK_STATUS_OK);
    }
    if (shape.invalid) {
      switch (rng() % 40) {
        case 0:
          r.set_duration_seconds(std::numeric_limits<double>::quiet_NaN());
          break;
        case 1:
          r.set_end_unix_ns(r.start_unix_ns() - 1);
          break;
        case 2:
          r.set_events(-5);
          break;
        case 3:
          r.mutable_sections(0)->set_kind(static_cast<v1::SectionRecord::Kind>(42));
          break;
        case 4:
          r.mutable_sections(0)->set_cpu_seconds(std::numeric_limits<double>::infinity());
          break;
        default:
          break;
      }
    }
    // An application retry: the same chunk again under a new task id, after a failure.
    if (i % 37 == 5) {
      v1::ChunkRecord retry = r;
      r.set_status(v1::CHUNK_STATUS_FAILED);
      r.set_error_text("killed");
      retry.set_task_id(absl::StrCat(i, "-retry"));
      retry.set_start_unix_ns(r.end_unix_ns() + 1000);
      retry.set_end_unix_ns(retry.start_unix_ns() + static_cast<int64_t>(duration * 1e9));
      instrumented.push_back(r);
      r = retry;
    }
    if (shape.engine && rng() % 10 != 0) {  // some tasks the engine's log lost
      v1::ChunkRecord task;
      task.set_task_id(r.task_id());
      task.set_uuid(absl::StrCat("taskvine-", r.task_id()));
      task.set_worker(absl::StrCat("worker-", i % 5));
      task.set_attempt(static_cast<uint32_t>(rng() % 3));
      task.set_status(v1::CHUNK_STATUS_OK);
      engine.push_back(task);
    }
    instrumented.push_back(r);
  }
  if (shape.engine) {
    v1::ChunkRecord unknown;  // a task the instrumentation never saw
    unknown.set_task_id("engine-only");
    unknown.set_worker("worker-9");
    unknown.set_duration_seconds(1);
    engine.push_back(unknown);
  }
  run.chunks = ChunkTableOf(instrumented);
  run.engine_chunks = ChunkTableOf(engine);

  if (shape.report) {
    run.report.emplace().set_events(123'000);
    run.report->set_chunks(shape.chunks);
  }
  if (shape.tracking) {
    v1::TrackingData& tracking = run.tracking.emplace();
    tracking.set_backend("dask");
    for (int w = 0; w < 5; ++w) {
      v1::WorkerSeries& series = *tracking.add_workers();
      series.set_worker(absl::StrCat("worker-", w));
      for (int t = 0; t < 60; ++t) {
        series.add_time_unix_ns(t0 + int64_t{t} * 10'000'000'000);
        series.add_cores(4);
        series.add_memory_bytes(shape.invalid && t == 7 && w == 2 ? -1.0 : 2e9 + 1e6 * t);
        series.add_active_tasks(static_cast<double>((t + w) % 5));
      }
    }
    tracking.add_worker_count(5);
    tracking.add_worker_count_time_unix_ns(t0);
  }
  v1::Span& span = run.spans.emplace_back();
  span.set_name("compute");
  v1::FineMetric& cpu = *span.add_metrics();
  cpu.set_task_prefix("process");
  cpu.set_activity("thread-cpu");
  cpu.set_unit("seconds");
  cpu.set_value(120);
  if (shape.invalid) {
    v1::FineMetric& nan = *span.add_metrics();
    nan.set_task_prefix("process");
    nan.set_activity("thread-noncpu");
    nan.set_unit("seconds");
    nan.set_value(std::numeric_limits<double>::quiet_NaN());
  }
  return run;
}

MeasureOptions Options(const RunShape& shape) {
  MeasureOptions options;
  options.processor_task_patterns = {"process*"};
  if (shape.profiles) {
    options.profiles_of_chunks = [](const ChunkTable& chunks) {
      v1::Profile profile;
      profile.set_source("threadpool");
      profile.set_worker(chunks.empty()
                             ? "none"
                             : std::string(chunks.String(chunk_field::kWorker, chunks.size() - 1)));
      profile.set_section(absl::StrCat(chunks.size(), " chunks"));
      return std::vector<v1::Profile>{profile};
    };
  }
  return options;
}

void ExpectSameAsTheRecordsPath(const RunShape& shape) {
  SCOPED_TRACE(absl::StrCat("seed ", shape.seed, ", ", shape.chunks, " chunks"));
  absl::StatusOr<v1::Measurement> expected = RecordsPathMeasure(RandomRun(shape), Options(shape));
  absl::StatusOr<v1::Measurement> measured = Measure(RandomRun(shape), Options(shape));
  ASSERT_EQ(measured.ok(), expected.ok()) << measured.status() << " / " << expected.status();
  if (!expected.ok()) {
    EXPECT_EQ(measured.status(), expected.status());
    return;
  }
  EXPECT_EQ(DeterministicBytes(*measured), DeterministicBytes(*expected));
  // The warnings alone, for a readable failure.
  ASSERT_EQ(measured->warnings_size(), expected->warnings_size());
  for (int i = 0; i < expected->warnings_size(); ++i) {
    EXPECT_EQ(measured->warnings(i).code(), expected->warnings(i).code());
    EXPECT_EQ(measured->warnings(i).message(), expected->warnings(i).message());
  }
  EXPECT_EQ(measured->rejected_chunks_size(), expected->rejected_chunks_size());

  // MeasureRun: the same measurement with the records held apart.
  absl::StatusOr<MeasuredRun> run = MeasureRun(RandomRun(shape), Options(shape));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->measurement.chunks_size(), 0);
  ASSERT_EQ(run->chunks.size(), static_cast<size_t>(expected->chunks_size()));
  v1::Measurement joined = run->measurement;
  run->chunks.AppendRecordsTo(joined.mutable_chunks());
  EXPECT_EQ(DeterministicBytes(joined), DeterministicBytes(*expected));
}

TEST(MeasureEquivalenceTest, RandomRunsWithEveryKindOfRecord) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    RunShape shape;
    shape.seed = seed;
    shape.chunks = 50 + static_cast<int>(seed * 37 % 400);
    shape.engine = seed % 3 != 0;
    shape.report = seed % 4 == 0;
    shape.tracking = seed % 5 != 0;
    shape.profiles = seed % 2 == 0;
    ExpectSameAsTheRecordsPath(shape);
  }
}

TEST(MeasureEquivalenceTest, InvalidRecordsAreRejectedTheSameWay) {
  RunShape shape;
  shape.seed = 99;
  shape.chunks = 400;
  absl::StatusOr<v1::Measurement> measured = Measure(RandomRun(shape), Options(shape));
  ASSERT_TRUE(measured.ok()) << measured.status();
  // The random run does hold rejected records (else this would test nothing of the repair).
  EXPECT_GT(measured->rejected_chunks_size(), 5);
  ExpectSameAsTheRecordsPath(shape);
}

TEST(MeasureEquivalenceTest, CleanRunsAndEdgeCases) {
  RunShape clean;
  clean.invalid = false;
  ExpectSameAsTheRecordsPath(clean);
  RunShape none;
  none.chunks = 0;
  ExpectSameAsTheRecordsPath(none);
  none.engine = false;
  ExpectSameAsTheRecordsPath(none);
  RunShape one;
  one.chunks = 1;
  one.engine = false;
  one.tracking = false;
  ExpectSameAsTheRecordsPath(one);
}

// The existing Measure tests' inputs (measure_test.cc): an engine task joined with an
// instrumented record, an instrumented record the engine does not know, no records at all.
TEST(MeasureEquivalenceTest, TheMeasureTestInputs) {
  const auto base = [] {
    RawRun run;
    run.window.start = absl::FromUnixSeconds(1'700'000'000);
    run.window.end = run.window.start + absl::Seconds(2);
    run.window.elapsed_seconds = 2;
    run.window.host_facts.emplace().set_online_cpus(4);
    run.window.host_facts->set_usable_cpus(4);
    run.backend = "test";
    run.tool_build.set_build_mode("opt");
    return run;
  };
  const auto instrumented = [](const std::string& task_id, int64_t entry_start) {
    v1::ChunkRecord r;
    r.set_dataset("ttbar");
    r.set_file("f.root");
    r.set_entry_start(entry_start);
    r.set_entry_stop(entry_start + 100);
    r.set_events(100);
    r.set_task_id(task_id);
    r.set_start_unix_ns(1'700'000'000'000'000'000 + entry_start);
    r.set_end_unix_ns(r.start_unix_ns() + 500'000'000);
    r.set_duration_seconds(0.5);
    r.set_cpu_seconds(0.4);
    r.set_status(v1::CHUNK_STATUS_OK);
    return r;
  };
  v1::ChunkRecord task;
  task.set_uuid("taskvine-task-7");
  task.set_task_id("7");
  task.set_attempt(2);
  task.set_worker("worker-7");
  const std::vector<std::vector<v1::ChunkRecord>> cases = {
      {}, {instrumented("7", 0), instrumented("77", 100)}, {instrumented("", 0)}};
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(absl::StrCat("case ", c));
    RawRun a = base();
    RawRun b = base();
    a.chunks = ChunkTableOf(cases[c]);
    b.chunks = ChunkTableOf(cases[c]);
    if (c == 1) {
      a.engine_chunks = ChunkTableOf({task});
      b.engine_chunks = ChunkTableOf({task});
    }
    absl::StatusOr<v1::Measurement> expected = RecordsPathMeasure(std::move(a), MeasureOptions());
    absl::StatusOr<v1::Measurement> measured = Measure(std::move(b), MeasureOptions());
    ASSERT_TRUE(expected.ok() && measured.ok());
    EXPECT_EQ(DeterministicBytes(*measured), DeterministicBytes(*expected));
  }
}

}  // namespace
}  // namespace roastcoffea
