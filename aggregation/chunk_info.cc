#include "aggregation/chunk_info.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aggregation/radix_sort.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Stable sort of `keys` by start_unix_ns, through (start, index) pairs of 16 bytes rather than
// the 48-byte keys. Cost: O(n) per radix pass.
void RadixSortByStart(std::vector<ChunkInfoKey>* keys) {
  struct Item {
    uint64_t key;    // start_unix_ns, ordered as unsigned
    uint32_t index;  // into *keys
  };
  std::vector<Item> items, buffer;
  items.reserve(keys->size());
  for (size_t i = 0; i < keys->size(); ++i) {
    items.push_back({OrderedUnsigned((*keys)[i].start_unix_ns), static_cast<uint32_t>(i)});
  }
  RadixSortByKey(items, buffer);
  std::vector<ChunkInfoKey> sorted;
  sorted.reserve(keys->size());
  for (const Item& item : items) sorted.push_back((*keys)[item.index]);
  keys->swap(sorted);
}

ChunkInfoKey KeyOf(const ChunkColumns& chunks, uint32_t i) {
  return {chunks.start_unix_ns[i],        chunks.end_unix_ns[i], chunks.entry_start[i],
          chunks.entry_stop[i],           chunks.attempt[i],     chunks.file[i],
          chunks.compressed_bytes_read[i]};
}

// chunk_info's order of two keys; the file name only breaks ties.
bool Before(const ChunkColumns& chunks, const ChunkInfoKey& a, const ChunkInfoKey& b) {
  if (a.start_unix_ns != b.start_unix_ns) return a.start_unix_ns < b.start_unix_ns;
  if (a.end_unix_ns != b.end_unix_ns) return a.end_unix_ns < b.end_unix_ns;
  if (a.entry_start != b.entry_start) return a.entry_start < b.entry_start;
  if (a.entry_stop != b.entry_stop) return a.entry_stop < b.entry_stop;
  if (a.attempt != b.attempt) return a.attempt < b.attempt;
  return chunks.file_names[a.file] < chunks.file_names[b.file];
}

}  // namespace

// Integer keys in a flat array keep the sort cache-friendly; the file name only breaks ties.
ChunkInfoOrdering ChunkInfoOrder(const ChunkColumns& chunks) {
  ChunkInfoOrdering order;
  order.records.reserve(chunks.size());
  bool in_order = true;
  ChunkInfoKey previous{};
  for (uint32_t i = 0; i < chunks.size(); ++i) {
    if (chunks.file[i] == ChunkColumns::kNone || chunks.end_unix_ns[i] == 0) continue;
    if (in_order) {
      // Start is read first: in a run's records it nearly always decides.
      const ChunkInfoKey key = KeyOf(chunks, i);
      in_order = order.records.empty() || !Before(chunks, key, previous);
      previous = key;
    }
    order.records.push_back(i);
  }
  if (in_order) return order;
  std::vector<ChunkInfoKey>& keys = order.keys;
  keys.reserve(order.records.size());
  for (uint32_t i : order.records) keys.push_back(KeyOf(chunks, i));
  order.records = std::vector<uint32_t>();
  const auto less = [&chunks](const ChunkInfoKey& a, const ChunkInfoKey& b) {
    return Before(chunks, a, b);
  };
  // By start, then each run of equal starts (rare: records starting in the same nanosecond)
  // by the whole key: the order std::sort by `less` gives, without comparing 10^6 x log 10^6
  // keys. Keys equal in every field, file included, keep the records' order.
  RadixSortByStart(&keys);
  for (auto first = keys.begin(); first != keys.end();) {
    auto last = first + 1;
    while (last != keys.end() && last->start_unix_ns == first->start_unix_ns) ++last;
    if (last - first > 1) std::stable_sort(first, last, less);
    first = last;
  }
  return order;
}

void StartChunkInfoColumns(const ChunkColumns& chunks, const ChunkInfoOrdering& order,
                           v1::ChunkInfoColumns* out) {
  out->Clear();
  const int n = static_cast<int>(order.size());
  // Sized without writing: FillChunkInfoColumns writes every row.
  out->mutable_entry_start()->Reserve(n);
  out->mutable_entry_start()->AddNAlreadyReserved(n);
  out->mutable_entry_stop()->Reserve(n);
  out->mutable_entry_stop()->AddNAlreadyReserved(n);
  out->mutable_attempt()->Reserve(n);
  out->mutable_attempt()->AddNAlreadyReserved(n);
  out->mutable_start_unix_ns()->Reserve(n);
  out->mutable_start_unix_ns()->AddNAlreadyReserved(n);
  out->mutable_end_unix_ns()->Reserve(n);
  out->mutable_end_unix_ns()->AddNAlreadyReserved(n);
  out->mutable_bytes_read()->Reserve(n);
  out->mutable_bytes_read()->AddNAlreadyReserved(n);
  // Files in the order of their first row: the same columns whatever the records' order.
  std::vector<uint32_t> place(chunks.file_names.size(), ChunkColumns::kNone);
  out->mutable_file_index()->Reserve(n);
  uint32_t* file_index = out->mutable_file_index()->AddNAlreadyReserved(n);
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t file = order.keys.empty() ? chunks.file[order.records[k]] : order.keys[k].file;
    if (place[file] == ChunkColumns::kNone) {
      place[file] = static_cast<uint32_t>(out->files_size());
      out->add_files(chunks.file_names[file]);
    }
    file_index[k] = place[file];
  }
}

void FillChunkInfoColumns(const ChunkColumns& chunks, const ChunkInfoOrdering& order, size_t first,
                          size_t last, v1::ChunkInfoColumns* out) {
  int64_t* entry_start = out->mutable_entry_start()->mutable_data();
  int64_t* entry_stop = out->mutable_entry_stop()->mutable_data();
  uint32_t* attempt = out->mutable_attempt()->mutable_data();
  int64_t* start_unix_ns = out->mutable_start_unix_ns()->mutable_data();
  int64_t* end_unix_ns = out->mutable_end_unix_ns()->mutable_data();
  int64_t* bytes_read = out->mutable_bytes_read()->mutable_data();
  for (size_t k = first; k < last; ++k) {
    const ChunkInfoKey key = order.keys.empty() ? KeyOf(chunks, order.records[k]) : order.keys[k];
    entry_start[k] = key.entry_start;
    entry_stop[k] = key.entry_stop;
    attempt[k] = key.attempt;
    start_unix_ns[k] = key.start_unix_ns;
    end_unix_ns[k] = key.end_unix_ns;
    bytes_read[k] = key.bytes_read;
  }
}

void BuildChunkInfo(const ChunkColumns& chunks, v1::ChunkInfoColumns* out) {
  const ChunkInfoOrdering order = ChunkInfoOrder(chunks);
  StartChunkInfoColumns(chunks, order, out);
  FillChunkInfoColumns(chunks, order, 0, order.size(), out);
}

void BuildChunkInfo(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                    v1::ChunkInfoColumns* out) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> columns = BuildChunkColumns(chunks, &branches, &sections);
  if (columns.ok()) {
    BuildChunkInfo(*columns, out);
  } else {
    out->Clear();
  }
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
