#include "aggregation/chunk_stats.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "aggregation/distribution_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// The original files chunks without a dataset under this name.
constexpr char kUnknownDataset[] = "unknown";

bool MeasuredMemory(const v1::ChunkRecord& chunk) {
  // The schema stores 0 for unknown memory; a running process never has 0 resident bytes.
  return chunk.memory_before_bytes() != 0 || chunk.memory_after_bytes() != 0;
}

struct DatasetAccumulator {
  std::vector<double> durations;
  int64_t total_events = 0;
};

v1::DatasetChunkMetrics SummarizeDataset(const std::string& name, DatasetAccumulator acc) {
  // Summing sorted durations keeps the total independent of the record order.
  std::sort(acc.durations.begin(), acc.durations.end());
  double total_duration = 0;
  for (double d : acc.durations) total_duration += d;
  const double num_chunks = static_cast<double>(acc.durations.size());

  v1::DatasetChunkMetrics dataset;
  dataset.set_dataset(name);
  dataset.set_num_chunks(static_cast<int64_t>(acc.durations.size()));
  dataset.set_total_duration_seconds(total_duration);
  dataset.set_total_events(acc.total_events);
  dataset.set_mean_duration_seconds(total_duration / num_chunks);
  if (acc.total_events > 0) {
    dataset.set_mean_events_per_chunk(static_cast<double>(acc.total_events) / num_chunks);
  }
  return dataset;
}

}  // namespace

std::optional<v1::ChunkMetrics> ComputeChunkMetrics(const std::vector<v1::ChunkRecord>& chunks) {
  if (chunks.empty()) return std::nullopt;

  std::vector<double> durations;
  std::vector<double> memory_deltas;
  std::vector<double> events;
  int64_t total_events = 0;
  int64_t num_failed = 0;
  std::map<std::string, DatasetAccumulator> datasets;  // sorted by name
  for (const v1::ChunkRecord& chunk : chunks) {
    if (chunk.status() == v1::CHUNK_STATUS_FAILED) {
      ++num_failed;
      continue;
    }
    durations.push_back(chunk.duration_seconds());
    events.push_back(static_cast<double>(chunk.events()));
    total_events += chunk.events();
    if (MeasuredMemory(chunk)) {
      // In double: an int64 difference of arbitrary inputs could overflow.
      memory_deltas.push_back(static_cast<double>(chunk.memory_after_bytes()) -
                              static_cast<double>(chunk.memory_before_bytes()));
    }
    DatasetAccumulator& dataset =
        datasets[chunk.dataset().empty() ? std::string(kUnknownDataset) : chunk.dataset()];
    dataset.durations.push_back(chunk.duration_seconds());
    dataset.total_events += chunk.events();
  }

  v1::ChunkMetrics metrics;
  const int64_t num_chunks = static_cast<int64_t>(chunks.size());
  metrics.set_num_chunks(num_chunks);
  metrics.set_num_failed_chunks(num_failed);
  metrics.set_num_successful_chunks(num_chunks - num_failed);
  if (durations.empty()) return metrics;  // every chunk failed: counts only

  *metrics.mutable_duration_seconds() = ComputeDistributionStats(std::move(durations));
  *metrics.mutable_events() = ComputeDistributionStats(std::move(events));
  metrics.set_total_events_from_chunks(total_events);
  if (!memory_deltas.empty()) {
    *metrics.mutable_memory_delta_bytes() = ComputeDistributionStats(std::move(memory_deltas));
  }
  for (auto& [name, accumulator] : datasets) {
    *metrics.add_per_dataset() = SummarizeDataset(name, std::move(accumulator));
  }
  return metrics;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
