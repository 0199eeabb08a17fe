// A toy chunked analysis instrumented with @roastcoffea//instrumentation: two worker threads
// process 12 chunks of synthetic jets; one chunk's input is "corrupt" and fails. Prints one
// line per chunk record and a summary, checks the records, and writes a timeline.
//
//   bazel run //:jet_analysis -- /tmp/jets_trace.json     (open it in ui.perfetto.dev)
//
// Exit status 0 when every record is as expected.
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "instrumentation/chrome_trace.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"

namespace {

using roastcoffea::ChunkMetadata;

// The analysis output: a jet-pT histogram, mergeable with +=.
struct Histogram {
  std::map<int, long> bins;  // 10 GeV bins
  Histogram& operator+=(const Histogram& other) {
    for (const auto& [bin, count] : other.bins) bins[bin] += count;
    return *this;
  }
};

Histogram ProcessChunk(const ChunkMetadata& chunk) {
  std::vector<double> jet_pt;
  {
    ROASTCOFFEA_TIMED_SECTION("read_jets");
    ROASTCOFFEA_MEMORY_SECTION("read_jets");
    if (chunk.file == "corrupt.root") throw std::runtime_error("corrupt basket in corrupt.root");
    std::mt19937_64 random(static_cast<uint64_t>(chunk.entry_start));
    std::exponential_distribution<double> pt(1.0 / 40.0);
    jet_pt.resize(static_cast<size_t>(chunk.events) * 4);
    for (double& value : jet_pt) value = pt(random);
    roastcoffea::RecordBytesRead(static_cast<int64_t>(jet_pt.size() * sizeof(double)) / 3,
                                 static_cast<int64_t>(jet_pt.size() * sizeof(double)));
  }
  Histogram histogram;
  roastcoffea::ScopedTimer timer("fill_histogram");
  for (double value : jet_pt) {
    if (value > 30) ++histogram.bins[static_cast<int>(value / 10)];
  }
  return histogram;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<ChunkMetadata> chunks;
  for (int i = 0; i < 12; ++i) {
    chunks.push_back(ChunkMetadata{"qcd", i == 5 ? "corrupt.root" : "jets.root",
                                   "chunk-" + std::to_string(i), i * 20000, (i + 1) * 20000,
                                   20000});
  }

  // Records travel with the output (the original's list accumulator)...
  const auto tracked = roastcoffea::TrackChunks(ProcessChunk);
  std::vector<roastcoffea::TrackedOutput<Histogram>> per_thread(2);
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = t; i < chunks.size(); i += 2) per_thread[t] += tracked(chunks[i]);
    });
  }
  for (std::thread& worker : workers) worker.join();
  roastcoffea::TrackedOutput<Histogram> total;
  for (auto& partial : per_thread) total += std::move(partial);

  // ...or go to a collector, leaving the output type alone.
  roastcoffea::ChunkRecordCollector collector;
  const auto into = roastcoffea::TrackChunksInto(ProcessChunk, &collector);
  Histogram again = into(chunks[0]);

  int failed = 0;
  long jets = 0;
  bool ok = true;
  for (const roastcoffea::v1::ChunkRecord& record : total.chunk_records) {
    const bool is_failed = record.status() == roastcoffea::v1::CHUNK_STATUS_FAILED;
    failed += is_failed;
    std::printf("%-9s %-13s [%6lld, %6lld) thread %lld  %7.3f ms  allocated %8lld B  peak %8lld B"
                "  read %7lld B  sections %d  %s\n",
                record.uuid().c_str(), record.file().c_str(),
                static_cast<long long>(record.entry_start()),
                static_cast<long long>(record.entry_stop()),
                static_cast<long long>(record.thread_index()), record.duration_seconds() * 1e3,
                static_cast<long long>(record.allocated_bytes()),
                static_cast<long long>(record.peak_live_bytes()),
                static_cast<long long>(record.compressed_bytes_read()), record.sections_size(),
                is_failed ? record.error_text().c_str() : "OK");
    ok = ok && record.has_allocated_bytes() &&
         (is_failed || (record.allocated_bytes() >= record.events() * 4 * 8 &&
                        record.slices_size() == 2 && record.compressed_bytes_read() > 0));
  }
  for (const auto& [bin, count] : total.output.bins) jets += count;
  ok = ok && total.chunk_records.size() == chunks.size() && failed == 1 &&
       collector.size() == 1 && !again.bins.empty() && jets > 0;
  std::printf("chunks %zu, failed %d, jets above 30 GeV %ld, collector records %zu\n",
              total.chunk_records.size(), failed, jets, collector.size());

  if (argc > 1) {
    const absl::Status written = roastcoffea::WriteChromeTrace(total.chunk_records, argv[1]);
    if (!written.ok()) {
      std::fprintf(stderr, "%s\n", std::string(written.message()).c_str());
      return 1;
    }
    std::printf("timeline written to %s\n", argv[1]);
  }
  std::printf(ok ? "example: OK\n" : "example: UNEXPECTED RECORDS\n");
  return ok ? 0 : 1;
}
