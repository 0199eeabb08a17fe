// Cost of the HTML report (tables + SVG plots) and of reading the original's metrics.json.
//   bazel run -c opt //export:report_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "export/html_report.h"
#include "export/report_chunks.h"
#include "export/test_measurement.h"
#include "ingest/legacy_measurement.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

// Workers: 3 ... 500 (21 samples each, 30 chunk records).
void BM_RenderHtmlReport(benchmark::State& state) {
  const v1::Measurement measurement =
      testing_export::RichMeasurement(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string html = RenderHtmlReport(measurement);
    bytes = html.size();
    benchmark::DoNotOptimize(html.data());
  }
  state.counters["html_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderHtmlReport)->Arg(3)->Arg(50)->Arg(500)->Unit(benchmark::kMillisecond);

// Chunks: 1,000 ... 100,000 chunk records over 8 worker threads and 3 datasets, each with a
// section slice (the Gantt chart draws time bins above report_plots.h's kMaxGanttChunks).
void BM_RenderHtmlReportManyChunks(benchmark::State& state) {
  v1::Measurement measurement = testing_export::RichMeasurement();
  measurement.clear_chunks();
  constexpr int64_t kStart = 1767268800LL * 1000000000LL;
  for (int64_t i = 0; i < state.range(0); ++i) {
    v1::ChunkRecord& chunk = *measurement.add_chunks();
    chunk.set_worker("node1:4242");
    chunk.set_thread_index(i % 8);
    chunk.set_dataset(i % 3 == 0 ? "ttbar" : i % 3 == 1 ? "wjets" : "data");
    chunk.set_events(1000 + i % 17);
    const int64_t start = kStart + (i / 8) * 11'000'000LL;
    chunk.set_start_unix_ns(start);
    chunk.set_end_unix_ns(start + 10'000'000LL);
    chunk.set_duration_seconds(0.010 + (i % 5) * 1e-4);
    chunk.set_compressed_bytes_read(400000);
    v1::SectionSlice& slice = *chunk.add_slices();
    slice.set_name("select");
    slice.set_duration_ns(4'000'000);
  }
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string html = RenderHtmlReport(measurement);
    bytes = html.size();
    benchmark::DoNotOptimize(html.data());
  }
  state.counters["html_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderHtmlReportManyChunks)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// 10^5 serialized chunk records like gen.py's "rich" ones (sections, file metadata, branches,
// 100 workers and 3 datasets interleaved), as `collect report` streams them from a saved run.
std::vector<std::string> SerializedRichRecords() {
  std::vector<std::string> out;
  constexpr int64_t kStart = 1742250331LL * 1000000000LL;
  for (int i = 0; i < 100000; ++i) {
    v1::ChunkRecord r;
    r.set_dataset(absl::StrCat("dataset_", i % 3));
    r.set_file(absl::StrCat("root://eos.cms/store/dataset_", i % 3, "/file_", i / 3, ".root"));
    r.set_uuid("u-00000000");
    r.set_entry_start(25000LL * i);
    r.set_entry_stop(25000LL * (i + 1));
    r.set_events(25000);
    r.set_start_unix_ns(kStart + i * 4'500'000LL);
    r.set_end_unix_ns(kStart + i * 4'500'000LL + 450'000'000LL);
    r.set_duration_seconds(0.45);
    r.set_memory_before_bytes(512LL << 20);
    r.set_memory_after_bytes(530LL << 20);
    r.set_compressed_bytes_read(12345678 + i);
    for (const char* name : {"jets", "muons"}) {
      v1::SectionRecord& section = *r.add_sections();
      section.set_name(name);
      section.set_duration_seconds(0.21);
    }
    r.set_worker(absl::StrCat("10.0.0.", i % 100, ":9123"));
    for (const char* branch : {"Jet_pt", "Jet_eta", "nJet"}) r.add_accessed_branches(branch);
    r.mutable_file_metadata()->set_total_branches(1200);
    r.set_task_id(absl::StrCat(i + 1));
    out.push_back(r.SerializeAsString());
  }
  return out;
}

// The report's columns from whole parsed records (before) or from their bytes (after).
void BM_ReportChunksFromRecords(benchmark::State& state) {
  const std::vector<std::string> records = SerializedRichRecords();
  const bool serialized = state.range(0) == 1;
  for (auto _ : state) {
    ReportChunks chunks;
    v1::ChunkRecord record;
    for (const std::string& bytes : records) {
      if (serialized) {
        if (!chunks.AddSerialized(bytes)) state.SkipWithError("not a record");
        continue;
      }
      record.Clear();
      if (!record.ParseFromString(bytes)) state.SkipWithError("not a record");
      chunks.Add(record);
    }
    benchmark::DoNotOptimize(chunks.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(records.size()));
}
BENCHMARK(BM_ReportChunksFromRecords)
    ->ArgName("serialized")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// metrics.json with `state.range(0)` chunk records and chunk_info entries.
void BM_ParseLegacyMeasurement(benchmark::State& state) {
  std::string records;
  std::string info;
  for (int64_t i = 0; i < state.range(0); ++i) {
    absl::StrAppend(&records, i ? "," : "",
                    "{\"t_start\": 1767268800.25, \"t_end\": 1767268801.25, ",
                    "\"duration\": 1.0, \"num_events\": 1000, \"file\": \"f", i,
                    ".root\", \"entry_start\": 0, \"entry_stop\": 1000, \"timing\": {\"a\": 0.5}}");
    absl::StrAppend(&info, i ? "," : "", "\"('f", i,
                    ".root', 0, 1000)\": [1767268800.25, 1767268801.25, 1000]");
  }
  LegacyMeasurementFiles files;
  files.metrics_json = absl::StrCat("{\"total_events\": 1000, \"raw_chunk_metrics\": [", records,
                                    "], \"chunk_info\": {", info, "}}");
  files.start_end_time = "1.0,2.0\n";
  LegacyLoadOptions options;
  options.naive_time_zone = absl::UTCTimeZone();
  for (auto _ : state) {
    auto measurement = ParseLegacyMeasurement(files, "bench", options);
    if (!measurement.ok()) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(measurement);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(files.metrics_json.size()));
}
BENCHMARK(BM_ParseLegacyMeasurement)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
