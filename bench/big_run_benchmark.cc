// The pipeline after ingestion on a big run (issue #16): 10^5 and 10^6 chunk records as an
// external run writes them (varied datasets, files, worker threads and durations; some failed,
// some retried, some with sections) through the workflow report built from them, Aggregate (the
// statistics, chunk_info and the findings) and the report's timelines (origin, read rate,
// running chunks, the binned Gantt lanes). The goal is linear time and a small memory growth:
// well under 1 KB per record beyond the records themselves.
//
//   bazel run -c opt //bench:big_run_benchmark
//
// Counters: records, rss_growth_bytes (VmHWM during the step minus VmRSS before it, after
// malloc_trim: what the step itself added at its peak, its result included) and
// rss_growth_per_record.
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "aggregation/aggregate.h"
#include "aggregation/measure.h"
#include "aggregation/report_from_chunks.h"
#include "aggregation/timeline.h"
#include "bench/peak_rss.h"
#include "benchmark/benchmark.h"
#include "collector/measurement_session.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStart = 1'765'000'000 * kSecond;
constexpr int kWorkers = 50;
constexpr int kThreadsPerWorker = 8;

// `n` records in the order an external run finishes them: 400 worker threads, each running
// its chunks one after the other with small gaps; 1 % failed (and retried), 10 % with sections.
std::vector<v1::ChunkRecord> MakeRecords(int n) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> duration(0.0, 0.8);
  std::uniform_int_distribution<int64_t> gap_ns(0, 20'000'000);
  const char* datasets[] = {"TTbar", "WJets", "DYJets", "SingleMuon", "ZZ", "WW", "QCD", "Data"};
  const char* sections[] = {"load_columns", "jets", "muons"};
  const int lanes = kWorkers * kThreadsPerWorker;
  std::vector<int64_t> lane_free(static_cast<size_t>(lanes), kStart);
  std::vector<v1::ChunkRecord> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // The lane that is free first takes the next chunk (a linear scan keeps this simple).
    const auto lane_it = std::min_element(lane_free.begin(), lane_free.end());
    const int lane = static_cast<int>(lane_it - lane_free.begin());
    v1::ChunkRecord& c = out.emplace_back();
    const int file = i / 8;
    c.set_dataset(datasets[file % 8]);
    c.set_file(absl::StrCat("root://xrootd.example.org//store/mc/", datasets[file % 8], "/file_",
                            file, ".root"));
    c.set_uuid(absl::StrCat("6a1f0c2e-5b7d-4c1e-9a3b-", 100000000000 + file));
    c.set_entry_start(int64_t{i % 8} * 50'000);
    c.set_entry_stop(int64_t{i % 8 + 1} * 50'000);
    c.set_events(50'000);
    const double d = 0.5 * duration(rng);
    c.set_start_unix_ns(*lane_it + gap_ns(rng));
    c.set_end_unix_ns(c.start_unix_ns() + static_cast<int64_t>(d * 1e9));
    *lane_it = c.end_unix_ns();
    c.set_duration_seconds(d);
    c.set_cpu_seconds(d * 0.85);
    c.set_memory_before_bytes(1'000'000'000);
    c.set_memory_after_bytes(1'000'000'000 + static_cast<int64_t>(rng() % 100'000'000));
    c.set_compressed_bytes_read(20'000'000 + static_cast<int64_t>(rng() % 1'000'000));
    c.set_worker(absl::StrCat("tcp://10.1.0.", lane / kThreadsPerWorker, ":9123"));
    c.set_thread_index(1 + lane % kThreadsPerWorker);
    if (i % 100 == 37) {
      c.set_status(v1::CHUNK_STATUS_FAILED);
      c.set_error_text(absl::StrCat("OSError: XRootD error reading file_", file, ".root"));
    } else {
      c.set_status(v1::CHUNK_STATUS_OK);
      if (i % 100 == 38) c.set_attempt(1);
    }
    if (i % 10 == 3) {
      for (int s = 0; s < 3; ++s) {
        v1::SectionRecord* section = c.add_sections();
        section->set_name(sections[s]);
        section->set_kind(v1::SectionRecord::KIND_TIME);
        section->set_entries(1);
        section->set_duration_seconds(d * 0.2 * (s + 1));
        section->set_cpu_seconds(d * 0.15 * (s + 1));
      }
    }
  }
  return out;
}

// What an external run's command that writes only times and entry ranges gives: every record
// on one unnamed worker thread, 100 distinct start seconds, each chunk 0.5 s long, so that
// thousands of chunks overlap in one lane of the Gantt chart.
std::vector<v1::ChunkRecord> MakeOverlappingRecords(int n) {
  std::vector<v1::ChunkRecord> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    v1::ChunkRecord& c = out.emplace_back();
    c.set_dataset("d");
    c.set_file("f");
    c.set_entry_start(int64_t{i} * 10);
    c.set_entry_stop(int64_t{i} * 10 + 10);
    c.set_events(10);
    c.set_start_unix_ns(kStart + int64_t{i % 100} * kSecond);
    c.set_end_unix_ns(c.start_unix_ns() + kSecond / 2);
    c.set_duration_seconds(0.5);
    c.set_status(v1::CHUNK_STATUS_OK);
  }
  return out;
}

// One input at a time, so that the 10^5 and 10^6 runs do not add up in the RSS.
struct Inputs {
  int n = 0;
  bool overlapping = false;
  std::unique_ptr<std::vector<v1::ChunkRecord>> records;  // as the collector holds them
  std::unique_ptr<v1::Measurement> measurement;           // as collect show/report load it
};

Inputs& Cache() {
  static Inputs* const inputs = new Inputs();
  return *inputs;
}

const std::vector<v1::ChunkRecord>& Records(int n) {
  Inputs& in = Cache();
  if (in.n != n || in.records == nullptr) {
    in = Inputs();
    in.n = n;
    in.records = std::make_unique<std::vector<v1::ChunkRecord>>(MakeRecords(n));
  }
  return *in.records;
}

const v1::Measurement& MeasurementOf(int n, bool overlapping = false) {
  Inputs& in = Cache();
  if (in.n != n || in.overlapping != overlapping || in.measurement == nullptr) {
    std::vector<v1::ChunkRecord> records = overlapping ? MakeOverlappingRecords(n) : MakeRecords(n);
    in = Inputs();
    in.n = n;
    in.overlapping = overlapping;
    in.measurement = std::make_unique<v1::Measurement>();
    v1::Measurement& m = *in.measurement;
    *m.mutable_report() = BuildWorkflowReport(records);
    m.mutable_chunks()->Reserve(n);
    for (v1::ChunkRecord& record : records) *m.add_chunks() = std::move(record);
    records = {};
    int64_t end = kStart;
    for (const v1::ChunkRecord& c : m.chunks()) end = std::max(end, c.end_unix_ns());
    m.mutable_metadata()->mutable_start_time()->set_seconds(kStart / kSecond);
    m.mutable_metadata()->mutable_end_time()->set_seconds(end / kSecond + 1);
    m.mutable_metadata()->set_elapsed_seconds(static_cast<double>(end - kStart) / 1e9 + 1);
  }
  return *in.measurement;
}

// Runs `step` once per iteration; its result is destroyed outside the timing but inside the
// RSS window, so the growth includes the result.
template <typename Step>
void Measure(benchmark::State& state, int n, Step step) {
  int64_t growth = 0;
  for (auto _ : state) {
    state.PauseTiming();
    malloc_trim(0);  // freed pages of earlier steps would hide this step's growth
    ResetPeakRss();
    const int64_t before = ProcStatusBytes("VmRSS");
    state.ResumeTiming();
    auto result = step();
    benchmark::DoNotOptimize(result);
    state.PauseTiming();
    growth = std::max(growth, ProcStatusBytes("VmHWM") - before);
    result = {};
    state.ResumeTiming();
  }
  state.counters["records"] = n;
  state.counters["rss_growth_bytes"] = static_cast<double>(growth);
  state.counters["rss_growth_per_record"] = static_cast<double>(growth) / n;
}

void BM_WorkflowReportFromRecords(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<v1::ChunkRecord>& records = Records(n);
  Measure(state, n, [&] { return BuildWorkflowReport(records); });
}
BENCHMARK(BM_WorkflowReportFromRecords)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

// The same report over the records as a table, as MeasureRun builds it (each record validated
// as one reused message).
void BM_WorkflowReportFromTable(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const ChunkTable table = ChunkTableOf(Records(n));
  Measure(state, n, [&] { return BuildWorkflowReportOfRecords(table); });
}
BENCHMARK(BM_WorkflowReportFromTable)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

void BM_AggregateBigRun(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const v1::Measurement& m = MeasurementOf(n, /*overlapping=*/state.range(1) != 0);
  const AggregationInput input = AggregationInputFromMeasurement(m);
  Measure(state, n, [&] {
    absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
    if (!metrics.ok()) state.SkipWithError(std::string(metrics.status().message()).c_str());
    return metrics.ok() ? *std::move(metrics) : v1::AggregatedMetrics();
  });
}
// Second argument 1: MakeOverlappingRecords (start instants shared by 10^4 records each).
BENCHMARK(BM_AggregateBigRun)
    ->Args({100'000, 0})
    ->Args({1'000'000, 0})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

// The whole pipeline after ingestion, as the collector runs it on an external run's records:
// MeasureRun (the chunk join over the raw run's ChunkTable, then the workflow report, the repair
// and Aggregate over the joined table; no record materialized but by Aggregate's interim). The
// raw table is made outside the timing and RSS window, so the growth is what MeasureRun adds.
void BM_Measure(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cache() = Inputs();
  int64_t growth = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RawRun run;
    run.backend = "taskvine";
    run.chunks = ChunkTableOf(MakeRecords(n));
    run.window.elapsed_seconds = 3600;
    malloc_trim(0);
    ResetPeakRss();
    const int64_t before = ProcStatusBytes("VmRSS");
    state.ResumeTiming();
    absl::StatusOr<MeasuredRun> measured = MeasureRun(std::move(run), MeasureOptions());
    if (!measured.ok()) state.SkipWithError(std::string(measured.status().message()).c_str());
    state.PauseTiming();
    growth = std::max(growth, ProcStatusBytes("VmHWM") - before);
    measured = MeasuredRun();
    state.ResumeTiming();
  }
  state.counters["records"] = n;
  state.counters["rss_growth_bytes"] = static_cast<double>(growth);
  state.counters["rss_growth_per_record"] = static_cast<double>(growth) / n;
}
BENCHMARK(BM_Measure)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

// A live run as the collector holds it: a session (no backend: StartRecording) that is given
// n chunk records one at a time, as a threadpool or Dask run's chunks end, then Finish.
// Counters: recording_bytes_per_chunk (VmHWM while recording minus VmRSS before: what the
// session holds per chunk during the run) and finish_bytes_per_chunk (VmHWM until Finish
// returned, its measurement included, minus the same VmRSS).
void BM_LiveSession(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<v1::ChunkRecord>& records = Records(n);
  int64_t recording = 0;
  int64_t finishing = 0;
  for (auto _ : state) {
    state.PauseTiming();
    SessionOptions options;
    options.checkpoint_interval = absl::ZeroDuration();
    options.output_dir = "/tmp/roastcoffea-big-run-benchmark";
    options.metadata.set_name("live");
    absl::StatusOr<std::unique_ptr<MeasurementSession>> session =
        MeasurementSession::StartRecording("threadpool", options);
    if (!session.ok()) {
      state.SkipWithError(std::string(session.status().message()).c_str());
      break;
    }
    malloc_trim(0);
    ResetPeakRss();
    const int64_t before = ProcStatusBytes("VmRSS");
    state.ResumeTiming();
    for (const v1::ChunkRecord& record : records) (*session)->RecordChunk(record);
    state.PauseTiming();
    recording = std::max(recording, ProcStatusBytes("VmHWM") - before);
    state.ResumeTiming();
    absl::StatusOr<v1::Measurement> measurement = (*session)->Finish(RunOutputs{});
    if (!measurement.ok()) state.SkipWithError(std::string(measurement.status().message()).c_str());
    state.PauseTiming();
    finishing = std::max(finishing, ProcStatusBytes("VmHWM") - before);
    measurement = v1::Measurement();
    session->reset();
    state.ResumeTiming();
  }
  state.counters["records"] = n;
  state.counters["recording_bytes_per_chunk"] = static_cast<double>(recording) / n;
  state.counters["finish_bytes_per_chunk"] = static_cast<double>(finishing) / n;
}
BENCHMARK(BM_LiveSession)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// What the HTML report derives from the records for its plots.
struct Timelines {
  StepTimeline rate, running;
  std::vector<LaneBins> lanes;
};

void BM_ReportTimelines(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const v1::Measurement& m = MeasurementOf(n, /*overlapping=*/state.range(1) != 0);
  Measure(state, n, [&] {
    Timelines out;
    const int64_t origin = TimelineOriginUnixNs(m);
    out.rate = ReadRateTimeline(m, origin);
    out.running = BinnedMean(RunningChunksTimeline(m, origin), 400);
    const ChunkLanes lanes = BuildChunkLanes(m, origin);
    // As the report bins them: about 30,000 bins in all.
    out.lanes = BinChunkLanes(
        lanes, static_cast<int>(std::clamp<size_t>(30000 / lanes.lanes.size(), 40, 300)));
    return out;
  });
}
// Second argument 1: MakeOverlappingRecords.
BENCHMARK(BM_ReportTimelines)
    ->Args({100'000, 0})
    ->Args({1'000'000, 0})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace roastcoffea
