#include "aggregation/report_from_chunks.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "aggregation/chunk_validation.h"

namespace roastcoffea {

namespace {

// What the report reads of one record, however the records are held.
struct ReportedChunk {
  absl::string_view dataset;  // valid while the records are
  bool failed = false;
  int64_t events = 0;
  int64_t compressed_bytes_read = 0;
  int64_t uncompressed_bytes_read = 0;
  double duration_seconds = 0;
};

// The one formula, over `count` records: read(i, &chunk) fills record i and says whether it is
// counted (false: an impossible value, ValidateChunkRecord; it ends in rejected_chunks).
v1::WorkflowReport BuildReport(size_t count, absl::FunctionRef<bool(size_t, ReportedChunk*)> read) {
  v1::WorkflowReport report;
  int64_t compressed = 0;
  int64_t uncompressed = 0;
  double process_time = 0;
  int64_t counted = 0;
  bool any_events = false;
  absl::flat_hash_map<absl::string_view, int> dataset_index;
  // The last record's dataset: a table's records of one dataset view the same pool entry, so
  // consecutive ones are matched by address, not hashed.
  absl::string_view last_dataset;
  int last_index = -1;
  ReportedChunk chunk;
  for (size_t i = 0; i < count; ++i) {
    if (!read(i, &chunk)) continue;
    ++counted;
    if (last_index < 0 || chunk.dataset.data() != last_dataset.data() ||
        chunk.dataset.size() != last_dataset.size()) {
      auto [it, inserted] = dataset_index.try_emplace(chunk.dataset, report.datasets_size());
      if (inserted) {
        report.add_datasets()->set_dataset(chunk.dataset.data(), chunk.dataset.size());
      }
      last_dataset = chunk.dataset;
      last_index = it->second;
    }
    v1::DatasetCounters& counters = *report.mutable_datasets(last_index);
    const int64_t events = chunk.failed ? 0 : chunk.events;
    counters.set_events(counters.events() + events);
    counters.set_compressed_bytes_read(counters.compressed_bytes_read() +
                                       chunk.compressed_bytes_read);
    counters.set_uncompressed_bytes_read(counters.uncompressed_bytes_read() +
                                         chunk.uncompressed_bytes_read);
    counters.set_process_time_seconds(counters.process_time_seconds() + chunk.duration_seconds);
    counters.set_chunks(counters.chunks() + 1);
    report.set_events(report.events() + events);
    compressed += chunk.compressed_bytes_read;
    uncompressed += chunk.uncompressed_bytes_read;
    process_time += chunk.duration_seconds;
    any_events = any_events || chunk.events > 0;
  }
  report.set_process_time_seconds(process_time);
  report.set_chunks(counted);
  // Records that count no events or bytes (TaskVine tasks, records the command wrote without
  // them) say nothing about them: unknown, not 0. Per-dataset counters cannot say "unknown",
  // so they are kept only when the events are known.
  if (!any_events) {
    report.clear_events();
    report.clear_datasets();
  }
  if (compressed > 0) report.set_compressed_bytes_read(compressed);
  if (uncompressed > 0) report.set_uncompressed_bytes_read(uncompressed);
  return report;
}

template <typename Records>
v1::WorkflowReport BuildReportOfRecords(const Records& chunks) {
  return BuildReport(static_cast<size_t>(chunks.size()), [&](size_t i, ReportedChunk* chunk) {
    const v1::ChunkRecord& record = chunks[i];
    if (!aggregation_internal::ValidateChunkRecord(record, i).ok()) return false;
    chunk->dataset = record.dataset();
    chunk->failed = record.status() == v1::CHUNK_STATUS_FAILED;
    chunk->events = record.events();
    chunk->compressed_bytes_read = record.compressed_bytes_read();
    chunk->uncompressed_bytes_read = record.uncompressed_bytes_read();
    chunk->duration_seconds = record.duration_seconds();
    return true;
  });
}

}  // namespace

v1::WorkflowReport BuildWorkflowReport(const std::vector<v1::ChunkRecord>& chunks) {
  return BuildReportOfRecords(chunks);
}

v1::WorkflowReport BuildWorkflowReportOfRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  return BuildReportOfRecords(chunks);
}

v1::WorkflowReport BuildWorkflowReportOfRecords(const ChunkTable& chunks) {
  // Validated from the columns (ValidateTableRecord: ValidateChunkRecord's rules, no record).
  return BuildReport(chunks.size(), [&](size_t i, ReportedChunk* chunk) {
    if (!aggregation_internal::ValidateTableRecord(chunks, i).ok()) return false;
    chunk->dataset = chunks.String(chunk_field::kDataset, i);
    chunk->failed = chunks.status(i) == v1::CHUNK_STATUS_FAILED;
    chunk->events = chunks.Int(chunk_field::kEvents, i);
    chunk->compressed_bytes_read = chunks.Int(chunk_field::kCompressedBytesRead, i);
    chunk->uncompressed_bytes_read = chunks.Int(chunk_field::kUncompressedBytesRead, i);
    chunk->duration_seconds = chunks.duration_seconds(i);
    return true;
  });
}

}  // namespace roastcoffea
