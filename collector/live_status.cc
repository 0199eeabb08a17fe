#include "collector/live_status.h"

#include <cmath>

#include "aggregation/fine_metrics.h"

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

void AddBackendProgress(const BackendLiveProgress& progress,
                        const std::vector<std::string>& processor_patterns, LiveStatus* status) {
  int64_t done = 0, failed = 0, running = 0;
  for (const auto& [prefix, counts] : progress.tasks_by_prefix) {
    bool processor = processor_patterns.empty();
    for (const std::string& pattern : processor_patterns) {
      processor = processor || aggregation_internal::MatchesTaskPattern(prefix, pattern);
    }
    if (!processor) continue;
    done += counts.done;
    failed += counts.failed;
    running += counts.running;
  }
  if (!progress.tasks_by_prefix.empty()) status->chunks_running = running;
  if (status->chunks_ok + status->chunks_failed == 0 && done + failed > 0) {
    status->chunks_ok = done;
    status->chunks_failed = failed;
    status->chunks_from_engine_tasks = true;
  }
  status->workers = progress.workers;
  status->cores = progress.cores;
  status->worker_memory_bytes = progress.memory_bytes;
  status->worker_memory_limit_bytes = progress.memory_limit_bytes;
}

void ExtendWorkerTimeline(const LiveStatus& status, double* step,
                          std::vector<LiveStatus::WorkerPoint>* timeline) {
  if (!status.workers.has_value()) return;
  if (!timeline->empty() && status.elapsed_seconds - timeline->back().elapsed_seconds < *step) {
    return;
  }
  if (timeline->size() >= kWorkerTimelinePoints) {
    size_t kept = 0;
    for (size_t i = 0; i < timeline->size(); i += 2) (*timeline)[kept++] = (*timeline)[i];
    timeline->resize(kept);
    *step *= 2;
  }
  timeline->push_back({status.elapsed_seconds, *status.workers, status.cores.value_or(0),
                       status.worker_memory_bytes.value_or(0)});
}

}  // namespace roastcoffea
