// Reading $ROASTCOFFEA_CHUNK_RECORDS: time and peak memory for many records (reliability
// study D10). Peak RSS is process-wide and only grows: run one size per process, e.g.
//   ./bazelw run -c opt //ingest:coffea_json_benchmark -- --benchmark_filter=/100000
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

double PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

void BM_ReadChunkRecords(benchmark::State& state) {
  const std::string path = WriteRecords(static_cast<int>(state.range(0)));
  const double before = PeakRssMiB();
  size_t records = 0;
  for (auto _ : state) {
    auto read = ReadChunkRecords(path);
    if (!read.ok()) state.SkipWithError(std::string(read.status().message()).c_str());
    records = read.ok() ? read->records.size() : 0;
    benchmark::DoNotOptimize(records);
  }
  state.counters["records"] = static_cast<double>(records);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
  state.counters["rss_growth_MiB"] = PeakRssMiB() - before;
  std::remove(path.c_str());
}
BENCHMARK(BM_ReadChunkRecords)
    ->Arg(1000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace roastcoffea
