#include "aggregation/chunk_info.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Integer keys in a flat array keep the sort cache-friendly; the file name only breaks ties.
struct ChunkInfoKey {
  int64_t start_unix_ns, end_unix_ns, entry_start, entry_stop;
  uint32_t attempt;
  const v1::ChunkRecord* record;
  bool operator<(const ChunkInfoKey& o) const {
    if (start_unix_ns != o.start_unix_ns) return start_unix_ns < o.start_unix_ns;
    if (end_unix_ns != o.end_unix_ns) return end_unix_ns < o.end_unix_ns;
    if (entry_start != o.entry_start) return entry_start < o.entry_start;
    if (entry_stop != o.entry_stop) return entry_stop < o.entry_stop;
    if (attempt != o.attempt) return attempt < o.attempt;
    return record->file() < o.record->file();
  }
};

}  // namespace

void BuildChunkInfo(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                    google::protobuf::RepeatedPtrField<v1::ChunkInfo>* out) {
  std::vector<ChunkInfoKey> keys;
  keys.reserve(static_cast<size_t>(chunks.size()));
  for (int i = 0; i < chunks.size(); ++i) {
    if (i + 16 < chunks.size()) __builtin_prefetch(&chunks.Get(i + 16));
    const v1::ChunkRecord& chunk = chunks.Get(i);
    if (chunk.file().empty() || chunk.end_unix_ns() == 0) continue;
    keys.push_back({chunk.start_unix_ns(), chunk.end_unix_ns(), chunk.entry_start(),
                    chunk.entry_stop(), chunk.attempt(), &chunk});
  }
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  out->Reserve(out->size() + static_cast<int>(keys.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + 8 < keys.size()) __builtin_prefetch(keys[i + 8].record->file().data());
    const ChunkInfoKey& key = keys[i];
    v1::ChunkInfo* info = out->Add();
    info->set_file(key.record->file());
    info->set_entry_start(key.entry_start);
    info->set_entry_stop(key.entry_stop);
    info->set_attempt(key.attempt);
    info->set_start_unix_ns(key.start_unix_ns);
    info->set_end_unix_ns(key.end_unix_ns);
    info->set_bytes_read(key.record->compressed_bytes_read());
  }
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
