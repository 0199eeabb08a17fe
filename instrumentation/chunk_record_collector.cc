#include "instrumentation/chunk_record_collector.h"

#include <iterator>
#include <utility>

#include "instrumentation/internal/chunk_context.h"

namespace roastcoffea {

void ChunkRecordCollector::Add(v1::ChunkRecord record) {
  Shard& shard = shards_[instrumentation_internal::ThreadIndex() % kShards];
  std::lock_guard<std::mutex> lock(shard.mutex);
  shard.records.push_back(std::move(record));
}

std::vector<v1::ChunkRecord> ChunkRecordCollector::Take() {
  std::vector<v1::ChunkRecord> all;
  for (Shard& shard : shards_) {
    std::vector<v1::ChunkRecord> records;
    {
      std::lock_guard<std::mutex> lock(shard.mutex);
      records.swap(shard.records);
    }
    all.insert(all.end(), std::make_move_iterator(records.begin()),
               std::make_move_iterator(records.end()));
  }
  return all;
}

size_t ChunkRecordCollector::size() const {
  size_t count = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    count += shard.records.size();
  }
  return count;
}

}  // namespace roastcoffea
