#include "export/report_chunks.h"

#include <algorithm>
#include <vector>

namespace roastcoffea {

void ReportChunks::Add(const v1::ChunkRecord& record) {
  timeline_.Add(record);
  duration_seconds_.push_back(record.duration_seconds());
  events_.push_back(record.events());
  uncompressed_bytes_read_.push_back(record.uncompressed_bytes_read());
  accessed_bytes_.push_back(record.accessed_bytes());
  accessed_branches_.push_back(record.accessed_branches_size());
  failed_.push_back(record.status() == v1::CHUNK_STATUS_FAILED ? 1 : 0);
  if (!ChunkHasTimes(record.start_unix_ns(), record.end_unix_ns())) return;
  if (++timed_count_ <= kMaxGanttChunks) {
    timed_records_.push_back(record);
    timed_index_.push_back(size() - 1);
  } else if (!timed_records_.empty()) {  // too many to draw one by one
    timed_records_ = std::vector<v1::ChunkRecord>();
    timed_index_ = std::vector<size_t>();
  }
}

const v1::ChunkRecord* ReportChunks::record(size_t i) const {
  const auto it = std::lower_bound(timed_index_.begin(), timed_index_.end(), i);
  if (it == timed_index_.end() || *it != i) return nullptr;
  return &timed_records_[static_cast<size_t>(it - timed_index_.begin())];
}

ReportChunks ReportChunksOf(const v1::Measurement& measurement) {
  ReportChunks chunks;
  for (const v1::ChunkRecord& record : measurement.chunks()) chunks.Add(record);
  return chunks;
}

}  // namespace roastcoffea
