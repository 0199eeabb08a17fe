// A toy chunked analysis instrumented with @roastcoffea//instrumentation and measured with
// @roastcoffea//collector: two worker threads process 12 chunks of synthetic jets; one chunk's
// input is "corrupt" and fails. Prints one line per chunk record and a summary, checks the
// records, writes a timeline, and saves a measurement of its own run that `collect show`,
// `report` and `compare` read.
//
//   bazel run //:jet_analysis -- /tmp/jets_trace.json /tmp/measurements
//     (open the trace in ui.perfetto.dev; `collect show /tmp/measurements/jet_analysis-...`)
//
// Exit status 0 when every record is as expected; 130 when interrupted (Ctrl-C: the chunks
// done so far are saved).
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/threadpool/executor.h"
#include "backends/threadpool/threadpool_backend.h"
#include "collector/measurement_session.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"
#include "trace/chrome_trace.h"

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

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "jet_analysis: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<ChunkMetadata> chunks;
  for (int i = 0; i < 12; ++i) {
    chunks.push_back(ChunkMetadata{"qcd", i == 5 ? "corrupt.root" : "jets.root",
                                   "chunk-" + std::to_string(i), i * 20000, (i + 1) * 20000,
                                   20000});
  }

  // The engine: a thread pool, sampled by roastcoffea's threadpool backend while the session runs.
  auto executor = roastcoffea::ThreadPoolExecutor::Create(roastcoffea::ThreadPoolOptions{2});
  if (!executor.ok()) return Fail(executor.status());
  roastcoffea::ThreadPoolBackendOptions backend_options;
  backend_options.task_prefix = "JetAnalysis";  // the processor's fine metrics
  roastcoffea::ThreadPoolMetricsBackend backend(executor->get(), backend_options);

  // One measurement session from start to saved directory: clocks, tracking, chunk records,
  // aggregation. A program opts in to SIGINT/SIGTERM handling: they then save what was done.
  roastcoffea::SessionOptions options;
  options.handle_signals = true;
  options.interval = absl::Milliseconds(20);
  options.processor_patterns = {"JetAnalysis"};
  options.in_process_worker_threads = (*executor)->threads();
  options.analysis_build = roastcoffea::ToolBuildInfo();  // built with roastcoffea, same -c mode
  options.metadata.set_name(absl::StrCat(
      "jet_analysis-", absl::FormatTime("%Y%m%dT%H%M%E3SZ", absl::Now(), absl::UTCTimeZone())));
  options.metadata.set_tool_version("jet_analysis 1.0");
  for (int i = 0; i < argc; ++i) options.metadata.add_command_line(argv[i]);
  (*options.metadata.mutable_configuration())["analysis"] = "toy jets";
  options.output_dir = argc > 2 ? argv[2] : "measurements";
  options.program_name = "jet_analysis";
  auto session = roastcoffea::MeasurementSession::Start(backend, options);
  if (!session.ok()) return Fail(session.status());

  // Records travel with the output (the original's list accumulator), and each goes to the
  // session as its chunk ends...
  const auto tracked = roastcoffea::TrackChunks(ProcessChunk);
  auto mapped =
      (*executor)->Map<roastcoffea::TrackedOutput<Histogram>>(chunks.size(), [&](size_t i) {
        if ((*session)->interrupted()) return roastcoffea::TrackedOutput<Histogram>{};
        roastcoffea::TrackedOutput<Histogram> chunk = tracked(chunks[i]);
        for (const roastcoffea::v1::ChunkRecord& record : chunk.chunk_records) {
          (*session)->RecordChunk(record);
        }
        return chunk;
      });
  if (!mapped.ok()) return Fail(mapped.status());
  roastcoffea::TrackedOutput<Histogram> total = *std::move(mapped);
  auto measurement = (*session)->Finish(roastcoffea::RunOutputs{});
  if (!measurement.ok()) return Fail(measurement.status());
  auto saved = (*session)->Save(*measurement);
  if (!saved.ok()) return Fail(saved.status());
  std::printf("measurement saved to %s\n", saved->c_str());
  if (measurement->metadata().interrupted()) return roastcoffea::kInterruptedExitCode;

  // ...or go to a ChunkRecordSink (a collector here; a MeasurementSession is one too), leaving
  // the output type alone.
  roastcoffea::ChunkRecordCollector collector;
  const auto into = roastcoffea::TrackChunksInto(ProcessChunk, &collector);
  Histogram again = into(chunks[0]);

  int failed = 0;
  long jets = 0;
  bool ok = true;
  for (const roastcoffea::v1::ChunkRecord& record : total.chunk_records) {
    const bool is_failed = record.status() == roastcoffea::v1::CHUNK_STATUS_FAILED;
    failed += is_failed;
    std::printf(
        "%-9s %-13s [%6lld, %6lld) thread %lld  %7.3f ms  allocated %8lld B  peak %8lld B"
        "  read %7lld B  sections %d  %s\n",
        record.uuid().c_str(), record.file().c_str(), static_cast<long long>(record.entry_start()),
        static_cast<long long>(record.entry_stop()), static_cast<long long>(record.thread_index()),
        record.duration_seconds() * 1e3, static_cast<long long>(record.allocated_bytes()),
        static_cast<long long>(record.peak_live_bytes()),
        static_cast<long long>(record.compressed_bytes_read()), record.sections_size(),
        is_failed ? record.error_text().c_str() : "OK");
    ok = ok && record.has_allocated_bytes() &&
         (is_failed || (record.allocated_bytes() >= record.events() * 4 * 8 &&
                        record.slices_size() == 2 && record.compressed_bytes_read() > 0));
  }
  for (const auto& [bin, count] : total.output.bins) jets += count;
  ok = ok && total.chunk_records.size() == chunks.size() && failed == 1 && collector.size() == 1 &&
       !again.bins.empty() && jets > 0 &&
       measurement->chunks_size() == static_cast<int>(chunks.size()) &&
       measurement->metrics().chunks().num_failed_chunks() == 1 && measurement->has_tracking();
  std::printf("chunks %zu, failed %d, jets above 30 GeV %ld, collector records %zu\n",
              total.chunk_records.size(), failed, jets, collector.size());

  if (argc > 1) {
    const absl::Status written = roastcoffea::WriteChromeTrace(total.chunk_records, argv[1]);
    if (!written.ok()) return Fail(written);
    std::printf("timeline written to %s\n", argv[1]);
  }
  std::printf(ok ? "example: OK\n" : "example: UNEXPECTED RECORDS\n");
  return ok ? 0 : 1;
}
