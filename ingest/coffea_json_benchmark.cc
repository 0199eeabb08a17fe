// Reading $ROASTCOFFEA_CHUNK_RECORDS: time and peak memory for many records (reliability
// study D10). Peak RSS is process-wide and only grows: run one size per process, e.g.
//   ./bazelw run -c opt //ingest:coffea_json_benchmark -- --benchmark_filter=/100000/
//   ./bazelw run -c opt //ingest:coffea_json_benchmark -- --benchmark_filter=/1000000
// records_heap_MiB is the heap the result holds once read (malloc's count of bytes in use, after
// minus before: the ChunkRecord messages and their vector); transient_B_per_record is the rest
// of the peak RSS growth, per record: what reading needed beyond its result (below 0 when the
// result's vector has capacity reserved and not yet touched, which malloc counts and RSS not).
#include <malloc.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "ingest/coffea_json.h"

namespace roastcoffea {
namespace {

// What the original tool writes per chunk (the shape of the study's many_records input).
std::string WriteRecords(int count) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp",
                   "/coffea_json_benchmark_", count, ".json");
  std::ofstream out(path, std::ios::binary);
  out << '[';
  for (int i = 0; i < count; ++i) {
    if (i > 0) out << ',';
    const int second = 1742250330 + i % 100;
    out << "{\"t_start\":" << second << ".0,\"t_end\":" << second
        << ".5,\"num_events\":10,\"dataset\":\"d\",\"file\":\"f\",\"entry_start\":" << i * 10
        << ",\"entry_stop\":" << i * 10 + 10 << '}';
  }
  out << ']';
  return path;
}

// The rich records of /work/shared/reliability/repro-2/gen.py ("records N OUT rich
// with_task_id"): every key the reader reads, as in issue #25's end-to-end case.
std::string WriteRichRecords(int count) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp",
                   "/coffea_json_benchmark_rich_", count, ".json");
  std::ofstream out(path, std::ios::binary);
  out << '[';
  for (int i = 0; i < count; ++i) {
    if (i > 0) out << ",\n";
    const std::string dataset = absl::StrCat("dataset_", i % 3);
    const std::string file =
        absl::StrCat("root://eos.cms/store/", dataset, "/file_", i / 40, ".root");
    const int64_t entry_start = int64_t{i % 40} * 25000;
    out << "{\"t_start\":" << 1742250331 + i / 100 / 2 << (i / 100 % 2 ? ".51" : ".01")
        << ",\"t_end\":" << 1742250331 + i / 100 / 2 << (i / 100 % 2 ? ".96" : ".46")
        << ",\"duration\":0.4500000476837158,\"num_events\":25000,\"dataset\":\"" << dataset
        << "\",\"file\":\"" << file << "\",\"uuid\":\"u-"
        << absl::StrCat(absl::Hex(i / 40, absl::kZeroPad8)) << "\",\"entry_start\":" << entry_start
        << ",\"entry_stop\":" << entry_start + 25000 << ",\"mem_before_mb\":" << 512 + i % 7
        << ".0,\"mem_after_mb\":" << 530 + i % 11 << ".25,\"bytes_read\":" << 12345678 + i % 1000
        << ",\"accessed_branches\":[\"Jet_pt\",\"Jet_eta\",\"nJet\"],\"timing\":{\"jets\":0.21,"
           "\"muons\":0.11},\"memory\":{\"jets\":2.0},\"bytes\":{\"jets\":100000},"
           "\"file_metadata\":{\"filename\":\""
        << file << "\",\"compression_ratio\":0.4,\"total_branches\":1200},\"task_id\":" << i + 1
        << '}';
  }
  out << "]\n";
  return path;
}

// Bytes malloc has handed out and not taken back (small blocks and mmapped ones).
double HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd);
}

double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

void BM_ReadChunkRecords(benchmark::State& state) {
  const std::string path = WriteRecords(static_cast<int>(state.range(0)));
  const double before = PeakRssMiB();
  size_t records = 0;
  double records_bytes = 0;
  for (auto _ : state) {
    const double heap_before = HeapInUse();
    auto read = ReadChunkRecords(path);
    if (!read.ok()) state.SkipWithError(std::string(read.status().message()).c_str());
    records = read.ok() ? read->records.size() : 0;
    benchmark::DoNotOptimize(records);
    records_bytes = HeapInUse() - heap_before;
  }
  const double growth_mib = PeakRssMiB() - before;
  state.counters["records"] = static_cast<double>(records);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["rss_growth_MiB"] = growth_mib;
  state.counters["records_heap_MiB"] = records_bytes / (1024 * 1024);
  state.counters["transient_B_per_record"] =
      records > 0 ? (growth_mib * 1024 * 1024 - records_bytes) / static_cast<double>(records) : 0;
  std::remove(path.c_str());
}
BENCHMARK(BM_ReadChunkRecords)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The rich records into a ChunkTable, as `collect` reads them (ReadChunkRecordsAsTable). With
// $COFFEA_JSON_BENCHMARK_RECORDS set, that file is read instead (e.g. gen.py's, to profile).
void BM_ReadRichRecordsAsTable(benchmark::State& state) {
  const char* given = std::getenv("COFFEA_JSON_BENCHMARK_RECORDS");
  const std::string path =
      given != nullptr ? given : WriteRichRecords(static_cast<int>(state.range(0)));
  const double before = PeakRssMiB();
  size_t records = 0;
  for (auto _ : state) {
    auto read = ReadChunkRecordsAsTable(path);
    if (!read.ok()) state.SkipWithError(std::string(read.status().message()).c_str());
    records = read.ok() ? read->table.size() : 0;
    benchmark::DoNotOptimize(records);
  }
  state.counters["records"] = static_cast<double>(records);
  state.counters["rss_growth_MiB"] = PeakRssMiB() - before;
  if (given == nullptr) std::remove(path.c_str());
}
BENCHMARK(BM_ReadRichRecordsAsTable)
    ->Arg(1000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace roastcoffea
