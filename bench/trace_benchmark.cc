// Timeline export at scale (issue #6 item 5): 1,000,000 slices (50,000 chunks on 8 workers x 4
// threads, each with 19 timed sections of 6 names, nested two deep) written as a Perfetto
// protobuf trace and as Chrome trace JSON.
//
//   bazel run -c opt //bench:trace_benchmark
//
// Counters: bytes_per_slice (file size / slices); items_per_second counts slices. Both write a
// real file in the temporary directory, so the disk's write speed is part of the time.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "schema/measurement.pb.h"
#include "trace/chrome_trace.h"
#include "trace/perfetto_trace.h"

namespace roastcoffea {
namespace {

constexpr int kChunks = 50'000;
constexpr int kSectionsPerChunk = 19;
constexpr int64_t kSlices = int64_t{kChunks} * (1 + kSectionsPerChunk);

const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& Chunks() {
  static const auto* chunks = [] {
    auto* out = new google::protobuf::RepeatedPtrField<v1::ChunkRecord>();
    const char* names[] = {"read_columns", "decompress", "select_jets",
                           "pair_mass",    "fill_hist",  "process"};
    const int64_t origin = 1'795'000'000'000'000'000;
    for (int i = 0; i < kChunks; ++i) {
      v1::ChunkRecord& chunk = *out->Add();
      const int thread = i % 32;
      chunk.set_worker(absl::StrCat("tcp://10.0.0.", thread / 4, ":40123"));
      chunk.set_thread_index(thread % 4);
      chunk.set_dataset(i % 3 == 0 ? "ZPrime_M1500" : "QCD_PtHat-150");
      chunk.set_file(absl::StrCat("/data/sample/QCD_PtHat-150_", i % 40, ".rcol"));
      chunk.set_uuid(absl::StrCat("file-", i % 40, ":", i * 25000, "-", (i + 1) * 25000));
      chunk.set_entry_start(int64_t{i} * 25000);
      chunk.set_entry_stop(int64_t{i + 1} * 25000);
      chunk.set_events(25000);
      chunk.set_status(v1::CHUNK_STATUS_OK);
      const int64_t start = origin + int64_t{i / 32} * 100'000'000 + thread * 1'000;
      chunk.set_start_unix_ns(start);
      chunk.set_end_unix_ns(start + 95'000'000);
      // "process" spans sections 1..18; the others are 5 ms each, inside it.
      for (int s = 0; s < kSectionsPerChunk; ++s) {
        v1::SectionSlice& slice = *chunk.add_slices();
        if (s == 0) {
          slice.set_name(names[5]);
          slice.set_start_offset_ns(1'000'000);
          slice.set_duration_ns(92'000'000);
        } else {
          slice.set_name(names[s % 5]);
          slice.set_start_offset_ns(1'000'000 + (s - 1) * 5'000'000 + 17);
          slice.set_duration_ns(4'900'000 + s);
          slice.set_depth(1);
        }
      }
    }
    return out;
  }();
  return *chunks;
}

int64_t FileSize(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? info.st_size : -1;
}

template <typename Write>
void Run(benchmark::State& state, const std::string& name, Write write) {
  const auto& chunks = Chunks();
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  for (auto _ : state) {
    const absl::Status status = write(chunks, path);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
  }
  state.SetItemsProcessed(state.iterations() * kSlices);
  state.counters["bytes_per_slice"] = static_cast<double>(FileSize(path)) / kSlices;
  state.counters["file_MiB"] = static_cast<double>(FileSize(path)) / (1 << 20);
  std::remove(path.c_str());
}

void BM_PerfettoTrace(benchmark::State& state) {
  Run(state, "roastcoffea_bench.pftrace",
      [](const auto& chunks, const std::string& path) { return WritePerfettoTrace(chunks, path); });
}
BENCHMARK(BM_PerfettoTrace)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ChromeTraceJson(benchmark::State& state) {
  Run(state, "roastcoffea_bench.trace.json",
      [](const auto& chunks, const std::string& path) { return WriteChromeTrace(chunks, path); });
}
BENCHMARK(BM_ChromeTraceJson)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace roastcoffea
