// What the live view costs the run (issue #26: scraping at 1 s must add under 1 % CPU).
//
//   ./bazelw run -c opt //live:live_benchmark
//
// BM_Scrape: one /metrics answer (the session's counters copied, the exposition formatted) and
// one live page; at one scrape per second, time per scrape / 1 s is the CPU share it takes.
// Measured on the 2-CPU VM (load 15, so wall times are 6x the CPU times): BM_Scrape 5.3 us CPU
// (0.0005 % of a core at one scrape per second); BM_FindingsRefresh/49000 28 ms CPU (0.56 % of
// a core at one refresh per 5 s, the most there is; 10,000 chunks: 4.6 ms, 0.09 %).
// BM_FindingsRefresh/N: re-aggregating the chunks so far for the live findings, which happens
// at most every 5 s and only up to 50,000 chunks; its time / 5 s is that part's share.
// Recording a chunk costs the session a few additions more (the counters), inside the lock it
// already takes.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "backends/metrics_backend.h"
#include "benchmark/benchmark.h"
#include "collector/measurement_session.h"
#include "live/exposition.h"
#include "live/live_page.h"

namespace roastcoffea {
namespace {

class QuietBackend : public AbstractMetricsBackend {
 public:
  absl::string_view name() const override { return "threadpool"; }
  absl::Status StartTracking(absl::Duration) override { return absl::OkStatus(); }
  absl::StatusOr<v1::TrackingData> StopTracking() override { return v1::TrackingData(); }
  absl::StatusOr<SpanId> CreateSpan(absl::string_view) override {
    return absl::UnimplementedError("no spans");
  }
  absl::Status EndSpan(const SpanId&) override { return absl::OkStatus(); }
  absl::StatusOr<v1::Span> GetSpanMetrics(const SpanId&) override { return v1::Span(); }
};

v1::ChunkRecord Chunk(int64_t i) {
  v1::ChunkRecord chunk;
  chunk.set_dataset(i % 3 == 0 ? "QCD_PtHat-150" : "Zprime_1500");
  chunk.set_file(absl::StrCat("/data/file", i % 40, ".rcol"));
  chunk.set_entry_start((i / 40) * 25000);
  chunk.set_entry_stop((i / 40) * 25000 + 25000);
  chunk.set_events(25000);
  chunk.set_worker("vm:1");
  chunk.set_thread_index(i % 4);
  chunk.set_duration_seconds(0.1 + (i % 7) * 0.01);
  chunk.set_cpu_seconds(0.09);
  chunk.set_run_queue_wait_seconds(0.001);
  chunk.set_compressed_bytes_read(400000);
  chunk.set_start_unix_ns(1700000000000000000 + i * 25000000);
  chunk.set_end_unix_ns(1700000000000000000 + i * 25000000 + 100000000);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

std::unique_ptr<MeasurementSession> Session(QuietBackend& backend, int64_t chunks) {
  SessionOptions options;
  options.interval = absl::Seconds(1);
  options.checkpoint_interval = absl::ZeroDuration();
  options.in_process_worker_threads = 4;
  options.metadata.set_name("bench");
  std::unique_ptr<MeasurementSession> session = *MeasurementSession::Start(backend, options);
  for (int64_t i = 0; i < chunks; ++i) session->RecordChunk(Chunk(i));
  return session;
}

void BM_Scrape(benchmark::State& state) {
  QuietBackend backend;
  std::unique_ptr<MeasurementSession> session = Session(backend, 20000);
  (void)session->live_status(absl::ZeroDuration());  // the findings, aggregated once
  live::ExpositionExtras extras;
  extras.version = "bench";
  for (auto _ : state) {
    const LiveStatus status = session->live_status(absl::Hours(1));  // no re-aggregation
    benchmark::DoNotOptimize(
        live::FormatExposition(status, extras, live::ExpositionFormat::kOpenMetrics));
    benchmark::DoNotOptimize(live::RenderLivePage(status));
  }
}
BENCHMARK(BM_Scrape)->Unit(benchmark::kMicrosecond);

void BM_FindingsRefresh(benchmark::State& state) {
  QuietBackend backend;
  std::unique_ptr<MeasurementSession> session = Session(backend, state.range(0));
  int64_t next = state.range(0);
  for (auto _ : state) {
    session->RecordChunk(Chunk(next++));  // something new: the refresh aggregates again
    benchmark::DoNotOptimize(session->live_status(absl::ZeroDuration()));
  }
}
BENCHMARK(BM_FindingsRefresh)->Arg(1000)->Arg(10000)->Arg(49000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roastcoffea
