#include "collector/live_status.h"

#include <cmath>

namespace roastcoffea {

void CountChunk(const v1::ChunkRecord& record, LiveStatus* status) {
  const bool ok = record.status() != v1::CHUNK_STATUS_FAILED;
  ++(ok ? status->chunks_ok : status->chunks_failed);
  if (ok && record.events() > 0) status->events += record.events();
  if (record.compressed_bytes_read() > 0) {
    status->compressed_bytes_read += record.compressed_bytes_read();
  }
  const double seconds = record.duration_seconds();
  if (std::isfinite(seconds) && seconds >= 0) {
    status->chunk_seconds += seconds;
    size_t bucket = 0;
    while (bucket < kLiveDurationBuckets.size() && seconds > kLiveDurationBuckets[bucket]) {
      ++bucket;
    }
    ++status->duration_buckets[bucket];
  }
  if (std::isfinite(record.cpu_seconds()) && record.cpu_seconds() > 0) {
    status->chunk_cpu_seconds += record.cpu_seconds();
  }
  if (record.has_run_queue_wait_seconds() && std::isfinite(record.run_queue_wait_seconds()) &&
      record.run_queue_wait_seconds() > 0) {
    status->chunk_run_queue_wait_seconds += record.run_queue_wait_seconds();
  }
}

}  // namespace roastcoffea
