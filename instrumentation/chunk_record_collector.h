// A thread-safe ChunkRecordSink (chunk_record_sink.h) that keeps the records in memory, for
// executors that keep records apart from the processor's output (TrackChunksInto in
// chunk_tracking.h).
//
//   roastcoffea::ChunkRecordCollector records;
//   ... any number of threads: records.Add(std::move(record));
//   std::vector<roastcoffea::v1::ChunkRecord> all = records.Take();
//
// Thread-safety: Add, Take and size may be called from any thread at any time.
// Cost: Add moves the record into one of 16 shards chosen by the calling thread, under that
// shard's mutex, so threads rarely contend (once per chunk, never on the section-scope path).
// Memory: every record added and not yet taken.
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_COLLECTOR_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_COLLECTOR_H_

#include <cstddef>
#include <mutex>
#include <vector>

#include "instrumentation/chunk_record_sink.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

class ChunkRecordCollector : public ChunkRecordSink {
 public:
  ChunkRecordCollector() = default;
  ChunkRecordCollector(const ChunkRecordCollector&) = delete;
  ChunkRecordCollector& operator=(const ChunkRecordCollector&) = delete;

  void Add(v1::ChunkRecord record) override;

  // Removes and returns every record added so far: per adding thread in the order added,
  // threads in no particular order.
  std::vector<v1::ChunkRecord> Take();

  // Records added and not yet taken.
  size_t size() const;

 private:
  static constexpr int kShards = 16;
  struct alignas(64) Shard {  // one cache line apart: no false sharing between threads
    mutable std::mutex mutex;
    std::vector<v1::ChunkRecord> records;
  };
  Shard shards_[kShards];
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_COLLECTOR_H_
