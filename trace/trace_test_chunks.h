// Test helper for the timeline writers (Chrome JSON, Perfetto): chunk records with slices.
#ifndef ROASTCOFFEA_TRACE_TRACE_TEST_CHUNKS_H_
#define ROASTCOFFEA_TRACE_TRACE_TEST_CHUNKS_H_

#include <cstdint>
#include <string>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_instrumentation {

// An OK chunk of dataset "ttbar" (file root://eos/f.root, entries [0, 1000), uuid
// "u-<start_ns>") that ran on `worker`'s thread `thread` from start_ns to end_ns.
inline v1::ChunkRecord TraceChunk(const std::string& worker, int64_t thread, int64_t start_ns,
                                  int64_t end_ns) {
  v1::ChunkRecord chunk;
  chunk.set_dataset("ttbar");
  chunk.set_file("root://eos/f.root");
  chunk.set_uuid("u-" + std::to_string(start_ns));
  chunk.set_entry_start(0);
  chunk.set_entry_stop(1000);
  chunk.set_events(1000);
  chunk.set_worker(worker);
  chunk.set_thread_index(thread);
  chunk.set_start_unix_ns(start_ns);
  chunk.set_end_unix_ns(end_ns);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

// A threadpool-like measurement: run "r1" (metadata, one configuration entry), two chunks of
// process "host:1" (threads 0 and 1) with measured values, the threads' CPU series (two
// samples each: 50 % and 100 % for thread 0, 25 % and 75 % for thread 1), their shared RSS
// (1000 and 2000 bytes), and queued chunks (3 then 1).
inline v1::Measurement TraceMeasurement() {
  v1::Measurement measurement;
  v1::MeasurementMetadata& metadata = *measurement.mutable_metadata();
  metadata.set_name("r1");
  metadata.set_backend("threadpool");
  metadata.set_host("host");
  metadata.set_tool_version("0.1.0");
  metadata.add_command_line("collect");
  metadata.add_command_line("--threads=2");
  metadata.set_elapsed_seconds(2.5);
  (*metadata.mutable_configuration())["threads"] = "2";
  metadata.mutable_start_time()->set_seconds(1);
  metadata.mutable_end_time()->set_seconds(3);
  v1::ChunkRecord first = TraceChunk("host:1", 0, 1'100'000'000, 1'600'000'000);
  first.set_cpu_seconds(0.25);
  first.set_memory_before_bytes(1000);
  first.set_memory_after_bytes(1500);
  first.set_memory_peak_bytes(2000);
  first.set_compressed_bytes_read(4096);
  first.set_uncompressed_bytes_read(8192);
  first.set_run_queue_wait_seconds(0.125);
  *measurement.add_chunks() = first;
  *measurement.add_chunks() = TraceChunk("host:1", 1, 1'200'000'000, 1'700'000'000);
  v1::TrackingData& tracking = *measurement.mutable_tracking();
  tracking.set_backend("threadpool");
  tracking.set_workers_share_process(true);
  for (int k = 0; k < 2; ++k) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker("host:1/thread-" + std::to_string(k));
    series.add_time_unix_ns(1'000'000'000);
    series.add_time_unix_ns(2'000'000'000);
    series.add_cpu_percent(k == 0 ? 50 : 25);
    series.add_cpu_percent(k == 0 ? 100 : 75);
    series.add_memory_bytes(1000);
    series.add_memory_bytes(2000);
  }
  tracking.add_worker_count_time_unix_ns(1'000'000'000);
  tracking.add_worker_count_time_unix_ns(2'000'000'000);
  tracking.add_worker_count(2);
  tracking.add_worker_count(2);
  tracking.add_queued_chunks(3);
  tracking.add_queued_chunks(1);
  return measurement;
}

}  // namespace testing_instrumentation
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TRACE_TRACE_TEST_CHUNKS_H_
