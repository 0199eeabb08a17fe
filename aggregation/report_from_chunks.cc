#include "aggregation/report_from_chunks.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "aggregation/chunk_validation.h"

namespace roastcoffea {

namespace {

template <typename Records>
v1::WorkflowReport BuildReport(const Records& chunks) {
  v1::WorkflowReport report;
  int64_t compressed = 0;
  int64_t uncompressed = 0;
  double process_time = 0;
  absl::flat_hash_map<std::string, int> dataset_index;
  // A record RepairForAggregation will move to rejected_chunks (end before start, negative
  // events, ...) is out of every figure, the report's too.
  std::vector<const v1::ChunkRecord*> counted;
  counted.reserve(chunks.size());
  for (size_t i = 0; i < static_cast<size_t>(chunks.size()); ++i) {
    if (aggregation_internal::ValidateChunkRecord(chunks[i], i).ok()) counted.push_back(&chunks[i]);
  }
  for (const v1::ChunkRecord* record : counted) {
    const v1::ChunkRecord& chunk = *record;
    auto [it, inserted] = dataset_index.try_emplace(chunk.dataset(), report.datasets_size());
    if (inserted) report.add_datasets()->set_dataset(chunk.dataset());
    v1::DatasetCounters& counters = *report.mutable_datasets(it->second);
    const bool ok = chunk.status() != v1::CHUNK_STATUS_FAILED;
    const int64_t events = ok ? chunk.events() : 0;
    counters.set_events(counters.events() + events);
    counters.set_compressed_bytes_read(counters.compressed_bytes_read() +
                                       chunk.compressed_bytes_read());
    counters.set_uncompressed_bytes_read(counters.uncompressed_bytes_read() +
                                         chunk.uncompressed_bytes_read());
    counters.set_process_time_seconds(counters.process_time_seconds() + chunk.duration_seconds());
    counters.set_chunks(counters.chunks() + 1);
    report.set_events(report.events() + events);
    compressed += chunk.compressed_bytes_read();
    uncompressed += chunk.uncompressed_bytes_read();
    process_time += chunk.duration_seconds();
  }
  report.set_process_time_seconds(process_time);
  report.set_chunks(static_cast<int64_t>(counted.size()));
  // Records that count no events or bytes (TaskVine tasks, records the command wrote without
  // them) say nothing about them: unknown, not 0. Per-dataset counters cannot say "unknown",
  // so they are kept only when the events are known.
  bool any_events = false;
  for (const v1::ChunkRecord* chunk : counted) any_events = any_events || chunk->events() > 0;
  if (!any_events) {
    report.clear_events();
    report.clear_datasets();
  }
  if (compressed > 0) report.set_compressed_bytes_read(compressed);
  if (uncompressed > 0) report.set_uncompressed_bytes_read(uncompressed);
  return report;
}

}  // namespace

v1::WorkflowReport BuildWorkflowReport(const std::vector<v1::ChunkRecord>& chunks) {
  return BuildReport(chunks);
}

v1::WorkflowReport BuildWorkflowReportOfRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  return BuildReport(chunks);
}

}  // namespace roastcoffea
