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
  uint32_t record;
};

}  // namespace

void BuildChunkInfo(const ChunkColumns& chunks,
                    google::protobuf::RepeatedPtrField<v1::ChunkInfo>* out) {
  std::vector<ChunkInfoKey> keys;
  keys.reserve(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks.file[i] == ChunkColumns::kNone || chunks.end_unix_ns[i] == 0) continue;
    keys.push_back({chunks.start_unix_ns[i], chunks.end_unix_ns[i], chunks.entry_start[i],
                    chunks.entry_stop[i], chunks.attempt[i], static_cast<uint32_t>(i)});
  }
  const auto file_of = [&chunks](const ChunkInfoKey& key) -> const std::string& {
    return chunks.file_names[chunks.file[key.record]];
  };
  const auto less = [&file_of](const ChunkInfoKey& a, const ChunkInfoKey& b) {
    if (a.start_unix_ns != b.start_unix_ns) return a.start_unix_ns < b.start_unix_ns;
    if (a.end_unix_ns != b.end_unix_ns) return a.end_unix_ns < b.end_unix_ns;
    if (a.entry_start != b.entry_start) return a.entry_start < b.entry_start;
    if (a.entry_stop != b.entry_stop) return a.entry_stop < b.entry_stop;
    if (a.attempt != b.attempt) return a.attempt < b.attempt;
    return file_of(a) < file_of(b);
  };
  if (!std::is_sorted(keys.begin(), keys.end(), less)) std::sort(keys.begin(), keys.end(), less);
  out->Reserve(out->size() + static_cast<int>(keys.size()));
  for (const ChunkInfoKey& key : keys) {
    v1::ChunkInfo* info = out->Add();
    info->set_file(file_of(key));
    info->set_entry_start(key.entry_start);
    info->set_entry_stop(key.entry_stop);
    info->set_attempt(key.attempt);
    info->set_start_unix_ns(key.start_unix_ns);
    info->set_end_unix_ns(key.end_unix_ns);
    info->set_bytes_read(chunks.compressed_bytes_read[key.record]);
  }
}

void BuildChunkInfo(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                    google::protobuf::RepeatedPtrField<v1::ChunkInfo>* out) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> columns = BuildChunkColumns(chunks, &branches, &sections);
  if (columns.ok()) BuildChunkInfo(*columns, out);
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
