// The cost of each stage of a measurement's life (issue #25), from the analysis' chunk-record
// JSON to the HTML report, the chunk records held as a table (ChunkTable) from ingest to the save,
// as MeasureRun holds them: ingest (ParseChunkRecordsAsTable), join (JoinChunkTables with the
// engine's records), chunk_report (BuildWorkflowReportOfRecords over the table: the workflow
// report of a run without one), repair (RepairForAggregation with the table), aggregate
// (Aggregate through AggregationInput::chunk_table, findings included), findings
// (EvaluateFindings alone, on records materialized outside its timing: not a stage of files ->
// saved, whose findings are in aggregate), save (SaveMeasurement with the table), show
// (LoadMeasurement without the chunk records, the worker series cut to their ends, and the
// summary and findings tables) and report (as `collect report` reads a measurement: LoadReport
// of tools/report_command.h, then RenderHtmlReport). Files ->
// saved is the sum of ingest, join, chunk_report, repair, aggregate and save.
//
//   ./bazelw run -c opt //bench:stage_benchmark -- --chunks=100000 --workers=1000
//
// Prints one tab-separated line per stage: stage, chunks, workers, cpu_seconds (process CPU
// time: load-independent enough for CI, unlike wall time), wall_seconds, cpu_ns_per_chunk,
// peak_bytes (VmHWM during the stage minus VmRSS before it, after malloc_trim: what the stage
// added at its peak, its result included) and peak_bytes_per_chunk. The inputs are synthetic and
// deterministic: `chunks` records in the original's JSON format (1 % failed, two timing sections
// each), the same number of engine task records sharing their task ids, and `workers` tracked
// workers with `samples` samples each (default 360: an hour at 10 s).
//
// --records=min: the plain-records case of issue #25 instead (what `collect --backend=taskvine
// --taskvine_logs=L -- sh -c 'cp R.json "$ROASTCOFFEA_CHUNK_RECORDS"'` reads): records with
// only the 7 keys of /work/shared/reliability/repro-2/gen.py's "min" shape (t_start, t_end,
// num_events, dataset, file, entry_start, entry_stop; ~186 B each), no engine task records (no
// join stage) and no tracked workers.
//
// --records=taskvine: issue #25's case as `collect --backend=taskvine --taskvine_logs=L -- sh -c
// 'cp R.json "$ROASTCOFFEA_CHUNK_RECORDS"'` reads it (gen.py's "rich" records with task ids and
// its "tasklog"): a first stage, engine_log, reads the engine's TaskVine transactions log
// (ReadFinishedTaskVineRun, as collect does; writing the log is not timed), whose task records
// the join takes and whose workers' step series the aggregation reads; --workers one-core
// workers (gen.py: 100). Files -> saved is then engine_log + ingest + join + chunk_report +
// repair + aggregate + save.
//
// --last_stage=ingest|join: stop after that stage (to profile it alone, e.g. under perf).
//
// Exit status: 0, or 1 with a message when a stage fails (the figures would be meaningless).
#include <malloc.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "aggregation/aggregate.h"
#include "aggregation/chunk_join.h"
#include "aggregation/findings.h"
#include "aggregation/report_from_chunks.h"
#include "bench/gen_taskvine_log.h"
#include "bench/peak_rss.h"
#include "export/html_report.h"
#include "export/tables.h"
#include "ingest/coffea_json.h"
#include "ingest/taskvine_run.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "tools/report_command.h"

namespace roastcoffea {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kStartSeconds = 1'765'000'000;
constexpr int kThreadsPerWorker = 4;

enum class Records {
  kFull,      // --records=full (default)
  kMin,       // --records=min
  kTaskVine,  // --records=taskvine
};

struct Sizes {
  int chunks = 100'000;
  int workers = 1'000;
  int samples = 360;
  Records records = Records::kFull;
  std::string out_dir;
  std::string last_stage;  // --last_stage=S: stop after stage S (e.g. "ingest" to profile it)
};

int64_t ProcessCpuNs() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return int64_t{t.tv_sec} * kSecond + t.tv_nsec;
}

// The chunk records as the analysis writes them: chunk i runs on worker thread i % lanes, one
// after the other, with a duration from a fixed pseudo-random sequence.
std::string ChunkRecordsJson(const Sizes& sizes) {
  const char* datasets[] = {"TTbar", "WJets", "DYJets", "SingleMuon"};
  const int lanes = sizes.workers * kThreadsPerWorker;
  std::vector<double> lane_free(static_cast<size_t>(lanes), 0.0);
  uint64_t state = 88172645463325252ull;
  std::string json = "[";
  json.reserve(static_cast<size_t>(sizes.chunks) * 420);
  for (int i = 0; i < sizes.chunks; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    const double duration = 0.5 + static_cast<double>(state % 4000) / 1000.0;
    double& free_at = lane_free[static_cast<size_t>(i % lanes)];
    const double start = static_cast<double>(kStartSeconds) + free_at;
    free_at += duration + 0.01;
    const int file = i / 10;
    absl::StrAppend(
        &json, i > 0 ? "," : "", "{\"task_id\": ", i, ", \"t_start\": ", start,
        ", \"t_end\": ", start + duration, ", \"duration\": ", duration,
        ", \"mem_before_mb\": 2000, \"mem_after_mb\": ", 2000 + static_cast<int>(state % 200),
        ", \"bytes_read\": 50000000, \"num_events\": 100000, \"dataset\": \"", datasets[file % 4],
        "\", \"file\": \"root://eos.example.org//store/file_", file, ".root\", \"uuid\": \"u-",
        file, "\", \"entry_start\": ", (i % 10) * 100'000,
        ", \"entry_stop\": ", (i % 10 + 1) * 100'000,
        ", \"timing\": {\"load_columns\": ", duration * 0.3, ", \"jets\": ", duration * 0.5, "}",
        i % 100 == 99 ? ", \"error\": \"OSError: XRootD timeout\"" : "", "}");
  }
  json += "]";
  return json;
}

// The plain records of --records=min, as gen.py writes them: 100 worker lanes of 0.5 s slots,
// 40 chunks of 25,000 events per file, three datasets.
std::string MinRecordsJson(const Sizes& sizes) {
  constexpr double kT0 = 1742250330.0;
  std::string json = "[";
  json.reserve(static_cast<size_t>(sizes.chunks) * 190);
  char record[256];
  for (int i = 0; i < sizes.chunks; ++i) {
    // Times to the hundredth, as Python's repr writes these (AlphaNum would keep six digits).
    const double start = kT0 + 1.0 + (i / 100) * 0.5 + 0.01;
    const int entry_start = (i % 40) * 25'000;
    std::snprintf(record, sizeof(record),
                  "%s{\"t_start\":%.2f,\"t_end\":%.2f,\"num_events\":25000,\"dataset\":"
                  "\"dataset_%d\",\"file\":\"root://eos.cms/store/dataset_%d/file_%d.root\","
                  "\"entry_start\":%d,\"entry_stop\":%d}",
                  i > 0 ? ",\n" : "", start, start + 0.45, i % 3, i % 3, i / 40, entry_start,
                  entry_start + 25'000);
    json += record;
  }
  json += "]\n";
  return json;
}

// --records=taskvine: gen.py's "rich" records with task ids 1..chunks (task i+1 on worker lane
// i % workers in slot i / workers, 0.45 s of a 0.5 s slot).
constexpr double kGenT0 = 1742250330.0;

std::string RichRecordsJson(const Sizes& sizes) {
  std::string json = "[";
  json.reserve(static_cast<size_t>(sizes.chunks) * 580);
  char record[1024];
  for (int i = 0; i < sizes.chunks; ++i) {
    const double start = kGenT0 + 1.0 + (i / sizes.workers) * 0.5 + 0.01;
    const int entry_start = (i % 40) * 25'000;
    char file[96];
    std::snprintf(file, sizeof(file), "root://eos.cms/store/dataset_%d/file_%d.root", i % 3,
                  i / 40);
    std::snprintf(
        record, sizeof(record),
        "%s{\"t_start\":%.2f,\"t_end\":%.2f,\"duration\":%.17g,\"num_events\":25000,"
        "\"dataset\":\"dataset_%d\",\"file\":\"%s\",\"uuid\":\"u-%08x\",\"entry_start\":%d,"
        "\"entry_stop\":%d,\"mem_before_mb\":%.1f,\"mem_after_mb\":%.2f,\"bytes_read\":%d,"
        "\"accessed_branches\":[\"Jet_pt\",\"Jet_eta\",\"nJet\"],"
        "\"timing\":{\"jets\":0.21,\"muons\":0.11},\"memory\":{\"jets\":2.0},"
        "\"bytes\":{\"jets\":100000},\"file_metadata\":{\"filename\":\"%s\","
        "\"compression_ratio\":0.4,\"total_branches\":1200},\"task_id\":%d}",
        i > 0 ? ",\n" : "", start, start + 0.45, 0.45, i % 3, file, i / 40, entry_start,
        entry_start + 25'000, 512.0 + i % 7, 530.25 + i % 11, 12345678 + i % 1000, file, i + 1);
    json += record;
  }
  json += "]\n";
  return json;
}

// What an engine backend derives from its task log: one record per task, by task id.
std::vector<v1::ChunkRecord> EngineRecords(const Sizes& sizes) {
  std::vector<v1::ChunkRecord> records(static_cast<size_t>(sizes.chunks));
  for (int i = 0; i < sizes.chunks; ++i) {
    v1::ChunkRecord& r = records[static_cast<size_t>(i)];
    r.set_task_id(absl::StrCat(i));
    r.set_worker(
        absl::StrCat("worker-", (i % (sizes.workers * kThreadsPerWorker)) / kThreadsPerWorker));
    r.set_status(v1::CHUNK_STATUS_OK);
  }
  return records;
}

v1::TrackingData Tracking(const Sizes& sizes) {
  v1::TrackingData tracking;
  tracking.set_backend("dask");
  tracking.set_interval_seconds(10);
  for (int t = 0; t < sizes.samples; ++t) {
    tracking.add_worker_count_time_unix_ns((kStartSeconds + t * 10) * kSecond);
    tracking.add_worker_count(sizes.workers);
  }
  for (int w = 0; w < sizes.workers; ++w) {
    v1::WorkerSeries* series = tracking.add_workers();
    series->set_worker(absl::StrCat("worker-", w));
    series->set_host(absl::StrCat("node", w));
    for (int t = 0; t < sizes.samples; ++t) {
      const double x = static_cast<double>((t * 7919 + w) % 1000);
      series->add_time_unix_ns((kStartSeconds + t * 10) * kSecond + w * 1000);
      series->add_memory_bytes(2e9 + 1e6 * x);
      series->add_memory_limit_bytes(8e9);
      series->add_cores(kThreadsPerWorker);
      series->add_active_tasks(x / 250);
      series->add_cpu_percent(x / 3);
    }
  }
  return tracking;
}

// Keeps the findings stage's result alive (it has no other use here).
volatile size_t findings_sink = 0;

struct StageCost {
  double cpu_seconds = 0, wall_seconds = 0;
  int64_t peak_bytes = 0;
};

StageCost Measure(const std::function<void()>& stage) {
  // Freed memory goes back to the system first: else a stage that reuses the heap an earlier
  // stage freed would show no growth.
  ::malloc_trim(0);
  ResetPeakRss();
  const int64_t rss_before = ProcStatusBytes("VmRSS");
  const int64_t cpu_before = ProcessCpuNs();
  const auto wall_before = std::chrono::steady_clock::now();
  stage();
  StageCost cost;
  cost.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  cost.cpu_seconds = static_cast<double>(ProcessCpuNs() - cpu_before) * 1e-9;
  cost.peak_bytes = ProcStatusBytes("VmHWM") - rss_before;
  return cost;
}

void Print(absl::string_view stage, const Sizes& sizes, const StageCost& cost) {
  std::printf("%s\t%d\t%d\t%.4f\t%.4f\t%.0f\t%lld\t%.0f\n", std::string(stage).c_str(),
              sizes.chunks, sizes.workers, cost.cpu_seconds, cost.wall_seconds,
              cost.cpu_seconds * 1e9 / sizes.chunks, static_cast<long long>(cost.peak_bytes),
              static_cast<double>(cost.peak_bytes) / sizes.chunks);
  std::fflush(stdout);
}

[[noreturn]] void Fail(absl::string_view stage, absl::string_view message) {
  std::fprintf(stderr, "stage_benchmark: %s failed: %s\n", std::string(stage).c_str(),
               std::string(message).c_str());
  std::exit(1);
}

int Run(const Sizes& sizes) {
  std::printf(
      "stage\tchunks\tworkers\tcpu_seconds\twall_seconds\tcpu_ns_per_chunk\tpeak_bytes\t"
      "peak_bytes_per_chunk\n");
  // --records=taskvine: the engine's log read as collect reads it, the tasks' records and the
  // workers' series from it (its writing is not timed).
  RawRun engine_run;
  if (sizes.records == Records::kTaskVine) {
    const std::string log_path = sizes.out_dir + "/transactions";
    {
      std::ofstream log(log_path, std::ios::binary);
      WriteGenTaskLog(sizes.chunks, sizes.workers, log);
      if (!log.flush()) Fail("engine_log", "cannot write " + log_path);
    }
    Print("engine_log", sizes, Measure([&] {
            TaskVineRunOptions options;
            options.logs = log_path;
            absl::StatusOr<RawRun> run = ReadFinishedTaskVineRun(options);
            if (!run.ok()) Fail("engine_log", run.status().message());
            engine_run = *std::move(run);
          }));
    std::filesystem::remove(log_path);  // ~680 MB at 10^6 tasks
    if (engine_run.engine_chunks.size() != static_cast<size_t>(sizes.chunks)) {
      Fail("engine_log",
           absl::StrCat(engine_run.engine_chunks.size(), " tasks for ", sizes.chunks, " chunks"));
    }
  }
  ChunkTable instrumented;
  {
    const std::string json = sizes.records == Records::kMin        ? MinRecordsJson(sizes)
                             : sizes.records == Records::kTaskVine ? RichRecordsJson(sizes)
                                                                   : ChunkRecordsJson(sizes);
    Print("ingest", sizes, Measure([&] {
            absl::StatusOr<ChunkTableRead> read = ParseChunkRecordsAsTable(json, "records.json");
            if (!read.ok()) Fail("ingest", read.status().message());
            instrumented = std::move(read->table);
          }));
  }
  if (sizes.last_stage == "ingest") return 0;
  ChunkTable joined_table;
  if (sizes.records == Records::kMin) {
    joined_table = std::move(instrumented);  // no engine log: nothing to join
  } else {
    ChunkTable engine;
    if (sizes.records == Records::kTaskVine) {
      engine = std::move(engine_run.engine_chunks);
    } else {
      for (const v1::ChunkRecord& r : EngineRecords(sizes)) engine.Append(r);
    }
    Print("join", sizes, Measure([&] {
            ChunkTableJoinResult result = JoinChunkTables(engine, std::move(instrumented));
            joined_table = std::move(result.table);
          }));
  }
  if (sizes.last_stage == "join") return 0;
  if (joined_table.size() != static_cast<size_t>(sizes.chunks)) {
    Fail("join", absl::StrCat(joined_table.size(), " records for ", sizes.chunks, " chunks"));
  }

  v1::Measurement measurement;
  measurement.mutable_metadata()->set_name("stage-benchmark");
  // As collector/assemble_measurement sets it: without it the save edits (copies) the message.
  measurement.mutable_metadata()->set_schema_version(kSchemaVersion);
  // The run starts with the tracking (full) or with the first record (min, taskvine: gen.py's
  // times).
  int64_t start_seconds = kStartSeconds;
  if (sizes.records != Records::kFull && !joined_table.empty()) {
    start_seconds = joined_table.start_unix_ns(0) / kSecond;
  }
  measurement.mutable_metadata()->mutable_start_time()->set_seconds(start_seconds);
  int64_t end_ns = 0;
  for (size_t i = 0; i < joined_table.size(); ++i) {
    end_ns = std::max(end_ns, joined_table.end_unix_ns(i));
  }
  measurement.mutable_metadata()->mutable_end_time()->set_seconds(end_ns / kSecond + 1);
  measurement.mutable_metadata()->set_elapsed_seconds(
      static_cast<double>(end_ns / kSecond + 1 - start_seconds));
  Print("chunk_report", sizes, Measure([&] {
          *measurement.mutable_report() = BuildWorkflowReportOfRecords(joined_table);
        }));
  if (sizes.records == Records::kFull) *measurement.mutable_tracking() = Tracking(sizes);
  if (engine_run.tracking.has_value()) {
    *measurement.mutable_tracking() = *std::move(engine_run.tracking);
    engine_run.tracking.reset();
  }

  Print("repair", sizes, Measure([&] { RepairForAggregation(&measurement, &joined_table); }));
  Print("aggregate", sizes, Measure([&] {
          AggregationInput input = AggregationInputFromMeasurement(measurement);
          input.chunks = nullptr;
          input.chunk_table = &joined_table;
          absl::StatusOr<v1::AggregatedMetrics> metrics = Aggregate(input);
          if (!metrics.ok()) Fail("aggregate", metrics.status().message());
          *measurement.mutable_metrics() = *std::move(metrics);
        }));
  {
    // The findings read records and the chunk columns Aggregate made: both made here outside the
    // timing, and freed after it.
    google::protobuf::RepeatedPtrField<v1::ChunkRecord> records;
    joined_table.AppendRecordsTo(&records);
    absl::StatusOr<std::unique_ptr<PreparedChunks>> prepared = PrepareChunks(records);
    if (!prepared.ok()) Fail("prepare", prepared.status().message());
    Print("findings", sizes, Measure([&] {
            aggregation_internal::FindingsInputs in;
            in.metrics = &measurement.metrics();
            in.chunks = &records;
            in.columns = &(*prepared)->columns;
            in.tracking = &measurement.tracking();
            in.warnings = &measurement.warnings();
            in.elapsed_seconds = measurement.metadata().elapsed_seconds();
            const aggregation_internal::FindingsOutcome outcome =
                aggregation_internal::EvaluateFindings(in);
            findings_sink = outcome.findings.size() + outcome.evaluations.size();
          }));
  }
  std::string saved;
  Print("save", sizes, Measure([&] {
          absl::StatusOr<std::string> path = SaveMeasurementUnderFreeName(
              measurement, joined_table, sizes.out_dir, "stage-benchmark");
          if (!path.ok()) Fail("save", path.status().message());
          saved = *path;
        }));
  measurement = v1::Measurement();  // show and report start from the saved directory
  joined_table = ChunkTable();
  Print("show", sizes, Measure([&] {
          LoadOptions tables_only;  // as `collect show` loads it for its tables
          tables_only.chunk_records = false;
          tables_only.chunk_info = false;
          tables_only.whole_worker_series = false;
          absl::StatusOr<v1::Measurement> read = LoadMeasurement(saved, tables_only);
          if (!read.ok()) Fail("show", read.status().message());
          TableOptions options;
          options.width = 100;
          const std::string text =
              FormatSummaryTables(*read, options) + FormatFindings(*read, options);
          if (text.empty()) Fail("show", "no tables");
        }));
  Print("report", sizes, Measure([&] {
          // As `collect report` reads it: records' plotted fields and series streamed.
          absl::StatusOr<std::unique_ptr<LoadedReport>> report = LoadReport(saved);
          if (!report.ok()) Fail("report", report.status().message());
          if (RenderHtmlReport((*report)->measurement, (*report)->chunks, (*report)->options)
                  .empty()) {
            Fail("report", "empty page");
          }
        }));
  return 0;
}

bool ParseFlag(absl::string_view arg, absl::string_view name, int* value) {
  if (!absl::ConsumePrefix(&arg, name)) return false;
  if (!absl::SimpleAtoi(arg, value) || *value <= 0) {
    std::fprintf(stderr, "stage_benchmark: %s needs a positive integer\n",
                 std::string(name).c_str());
    std::exit(2);
  }
  return true;
}

}  // namespace
}  // namespace roastcoffea

int main(int argc, char** argv) {
  roastcoffea::Sizes sizes;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (roastcoffea::ParseFlag(arg, "--chunks=", &sizes.chunks) ||
        roastcoffea::ParseFlag(arg, "--workers=", &sizes.workers) ||
        roastcoffea::ParseFlag(arg, "--samples=", &sizes.samples)) {
      continue;
    }
    if (arg == "--records=min" || arg == "--records=full" || arg == "--records=taskvine") {
      sizes.records = arg == "--records=min"        ? roastcoffea::Records::kMin
                      : arg == "--records=taskvine" ? roastcoffea::Records::kTaskVine
                                                    : roastcoffea::Records::kFull;
      continue;
    }
    if (absl::StartsWith(arg, "--last_stage=")) {
      sizes.last_stage = std::string(arg.substr(13));
      continue;
    }
    if (absl::StartsWith(arg, "--out_dir=")) {
      sizes.out_dir = std::string(arg.substr(10));
      continue;
    }
    std::fprintf(stderr,
                 "usage: stage_benchmark [--chunks=N] [--workers=N] [--samples=N] "
                 "[--records=full|min|taskvine] [--out_dir=DIR] "
                 "[--last_stage=ingest|join]\n");
    return 2;
  }
  if (sizes.records == roastcoffea::Records::kMin) sizes.workers = 0;  // none tracked, no log
  if (sizes.out_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/roastcoffea-stage-benchmark-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("stage_benchmark: mkdtemp");
      return 1;
    }
    sizes.out_dir = pattern;
    const int status = roastcoffea::Run(sizes);
    std::error_code ignored;
    std::filesystem::remove_all(sizes.out_dir, ignored);  // a 10^6-chunk save is ~1 GB
    return status;
  }
  return roastcoffea::Run(sizes);
}
