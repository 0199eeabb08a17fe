#include "export/test_measurement.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "aggregation/aggregate.h"

namespace roastcoffea {
namespace testing_export {

v1::Measurement RichMeasurement(int workers) {
  constexpr int64_t kStart = 1795335303LL * 1000000000LL;  // 2026-11-22 08:15:03 UTC
  constexpr int64_t kSecond = 1000000000LL;
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_schema_version(1);
  metadata.set_name(kHostileName);
  metadata.set_backend("threadpool");
  metadata.set_host("node<1>");
  metadata.mutable_start_time()->set_seconds(kStart / kSecond);
  metadata.mutable_end_time()->set_seconds(kStart / kSecond + 20);
  metadata.set_elapsed_seconds(20.0);
  (*metadata.mutable_configuration())["threads"] = "4";
  (*metadata.mutable_configuration())["note"] = "</td><script>bad()</script>";

  v1::WorkflowReport& report = *m.mutable_report();
  report.set_events(0);
  report.set_compressed_bytes_read(0);
  report.set_process_time_seconds(0);

  v1::TrackingData& tracking = *m.mutable_tracking();
  tracking.set_backend("threadpool");
  tracking.set_interval_seconds(1.0);
  for (int s = 0; s <= 20; ++s) {
    tracking.add_worker_count_time_unix_ns(kStart + s * kSecond);
    tracking.add_worker_count(s < 2 ? 1 : workers);
  }
  for (int w = 0; w < workers; ++w) {
    v1::WorkerSeries& series = *tracking.add_workers();
    series.set_worker(w == 0 ? std::string(kHostileWorker)
                             : absl::StrCat("tcp://10.0.0.", w, ":4000"));
    for (int s = 0; s <= 20; ++s) {
      series.add_time_unix_ns(kStart + s * kSecond);
      series.add_memory_bytes((200 + 10 * s + w) * 1048576.0);
      series.add_memory_limit_bytes(2048 * 1048576.0);
      series.add_cores(2);
      series.add_cpu_percent(s % 5 == 0 ? 150.0 : 40.0 + w + s);
      series.add_active_tasks((s + w) % 4);
      series.add_executing_tasks((s + w) % 3);
      series.add_occupancy_seconds(0.5 * ((s + w) % 4));
    }
  }

  int64_t events_total = 0;
  int64_t bytes_total = 0;
  for (int c = 0; c < 30; ++c) {
    v1::ChunkRecord& chunk = *m.add_chunks();
    chunk.set_dataset(c % 2 == 0 ? kHostileDataset : "qcd");
    chunk.set_file(absl::StrCat("file", c % 4, ".root"));
    chunk.set_entry_start(1000 * c);
    chunk.set_entry_stop(1000 * (c + 1));
    chunk.set_events(1000 + 37 * c);
    const int64_t start = kStart + (c / 4) * 2 * kSecond + (c % 4) * 100000000LL;
    const double duration = 0.8 + 0.05 * c;
    chunk.set_start_unix_ns(start);
    chunk.set_end_unix_ns(start + static_cast<int64_t>(duration * 1e9));
    chunk.set_duration_seconds(duration);
    chunk.set_cpu_seconds(duration * 0.9);
    chunk.set_memory_before_bytes(100 << 20);
    chunk.set_memory_after_bytes((100 << 20) + c * 4096);
    chunk.set_compressed_bytes_read(4000000 + 1000 * c);
    chunk.set_uncompressed_bytes_read(12000000);
    chunk.set_worker(c % 2 == 0 ? kHostileWorker : "tcp://10.0.0.1:4000");
    chunk.set_thread_index(c % 4 < 2 ? 0 : 1);
    chunk.set_status(v1::CHUNK_STATUS_OK);
    chunk.add_accessed_branches("Jet_pt");
    if (c % 3 == 0) chunk.add_accessed_branches("Jet_eta");
    chunk.set_accessed_bytes(3000000);
    chunk.set_accessed_uncompressed_bytes(9000000);
    chunk.set_branches_read_percent(10.0);
    chunk.set_bytes_read_percent(12.5 + c % 4);
    v1::FileMetadata& file = *chunk.mutable_file_metadata();
    file.set_file(chunk.file());
    file.set_compression_ratio(0.3 + 0.05 * (c % 4));
    file.set_total_branches(20);
    file.set_total_tree_bytes(24000000);
    v1::SectionRecord& section = *chunk.add_sections();
    section.set_name("select<jets>");
    section.set_kind(v1::SectionRecord::KIND_TIME);
    section.set_entries(1);
    section.set_duration_seconds(duration * 0.4);
    if (c == 7) {
      chunk.set_status(v1::CHUNK_STATUS_FAILED);
      chunk.set_error_text("ValueError: <bad> & worse");
    } else {
      events_total += chunk.events();
      bytes_total += chunk.compressed_bytes_read();
    }
  }
  report.set_events(events_total);
  report.set_compressed_bytes_read(bytes_total);
  report.set_process_time_seconds(30.0);
  report.set_chunks(30);

  v1::Span& span = *m.add_spans();
  span.set_name("run");
  const auto fine = [&](const char* prefix, const char* activity, const char* unit, double value) {
    v1::FineMetric& metric = *span.add_metrics();
    metric.set_context("execute");
    metric.set_task_prefix(prefix);
    metric.set_activity(activity);
    metric.set_unit(unit);
    metric.set_value(value);
  };
  fine("Dijet<Processor>", "thread-cpu", "seconds", 25.0);
  fine("Dijet<Processor>", "thread-noncpu", "seconds", 5.0);
  fine("Dijet<Processor>", "disk-read", "bytes", 2.5e9);
  fine("Dijet<Processor>", "decompress", "seconds", 1.5);
  fine("lambda", "thread-cpu", "seconds", 0.5);
  fine("lambda", "serialize", "seconds", 0.25);

  AggregationOptions options;
  options.processor_task_patterns = {"Dijet*"};
  absl::StatusOr<v1::AggregatedMetrics> metrics =
      Aggregate(AggregationInputFromMeasurement(m, options));
  if (!metrics.ok()) {
    std::cerr << "RichMeasurement: " << metrics.status() << "\n";
    std::abort();
  }
  *m.mutable_metrics() = *std::move(metrics);
  return m;
}

}  // namespace testing_export
}  // namespace roastcoffea
