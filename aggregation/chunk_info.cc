#include "aggregation/chunk_info.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// chunk_info's order of two records that start at the same instant; the file name only breaks
// ties.
bool SameStartBefore(const ChunkColumns& chunks, uint32_t a, uint32_t b) {
  if (chunks.end_unix_ns[a] != chunks.end_unix_ns[b]) {
    return chunks.end_unix_ns[a] < chunks.end_unix_ns[b];
  }
  if (chunks.entry_start[a] != chunks.entry_start[b]) {
    return chunks.entry_start[a] < chunks.entry_start[b];
  }
  if (chunks.entry_stop[a] != chunks.entry_stop[b]) {
    return chunks.entry_stop[a] < chunks.entry_stop[b];
  }
  if (chunks.attempt[a] != chunks.attempt[b]) return chunks.attempt[a] < chunks.attempt[b];
  return chunks.file_names[chunks.file[a]] < chunks.file_names[chunks.file[b]];
}

// Reads a few places ahead are prefetched: out of order, each read is a cache miss.
constexpr size_t kPrefetchAhead = 16;

// `column` of the records listed in order.records [first, last) into out[first, last).
template <typename T>
void GatherPart(const std::vector<T>& column, const ChunkInfoOrdering& order, size_t first,
                size_t last, T* out) {
  const uint32_t* records = order.records.data();
  for (size_t k = first; k < last; ++k) {
    if (k + kPrefetchAhead < last) __builtin_prefetch(column.data() + records[k + kPrefetchAhead]);
    out[k] = column[records[k]];
  }
}

}  // namespace

ChunkInfoOrdering ChunkInfoOrder(const ChunkColumns& chunks) {
  return ChunkInfoOrder(chunks, OrderByStart(chunks));
}

// The start order filtered, then each run of one start instant (rare: records starting in the
// same nanosecond) by the rest of the key: the order std::stable_sort by the whole key gives,
// without comparing 10^6 x log 10^6 keys. Keys equal in every field, file included, keep the
// records' order (as the start order does).
ChunkInfoOrdering ChunkInfoOrder(const ChunkColumns& chunks, const StartOrder& start) {
  ChunkInfoOrdering order;
  std::vector<uint32_t>& records = order.records;
  // Which records are listed, read in record order (in start order they would be read at
  // random); usually all of them, and then the start order is the list.
  std::vector<bool> listed;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const bool listed_i = chunks.file[i] != ChunkColumns::kNone && chunks.end_unix_ns[i] != 0;
    if (!listed_i && listed.empty()) listed.assign(chunks.size(), true);
    if (!listed_i) listed[i] = false;
  }
  if (listed.empty() && !start.in_order) {
    records = start.records;
  } else {
    records.reserve(start.size);
    for (size_t k = 0; k < start.size; ++k) {
      const uint32_t i = start.at(k);
      if (listed.empty() || listed[i]) records.push_back(i);
    }
  }
  if (!start.any_same_start) return order;
  const auto less = [&chunks](uint32_t a, uint32_t b) { return SameStartBefore(chunks, a, b); };
  int64_t previous_start = 0;
  size_t run = 0;  // the first position of the current instant's run
  for (size_t k = 0; k <= records.size(); ++k) {
    const bool same =
        k < records.size() && k > 0 && chunks.start_unix_ns[records[k]] == previous_start;
    if (same) continue;
    if (k - run > 1 && !std::is_sorted(records.begin() + run, records.begin() + k, less)) {
      std::stable_sort(records.begin() + run, records.begin() + k, less);
    }
    run = k;
    if (k < records.size()) previous_start = chunks.start_unix_ns[records[k]];
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
    if (k + kPrefetchAhead < order.size()) {
      __builtin_prefetch(chunks.file.data() + order.records[k + kPrefetchAhead]);
    }
    const uint32_t file = chunks.file[order.records[k]];
    if (place[file] == ChunkColumns::kNone) {
      place[file] = static_cast<uint32_t>(out->files_size());
      out->add_files(chunks.file_names[file]);
    }
    file_index[k] = place[file];
  }
}

void FillChunkInfoColumns(const ChunkColumns& chunks, const ChunkInfoOrdering& order, size_t first,
                          size_t last, v1::ChunkInfoColumns* out) {
  GatherPart(chunks.entry_start, order, first, last, out->mutable_entry_start()->mutable_data());
  GatherPart(chunks.entry_stop, order, first, last, out->mutable_entry_stop()->mutable_data());
  GatherPart(chunks.attempt, order, first, last, out->mutable_attempt()->mutable_data());
  GatherPart(chunks.start_unix_ns, order, first, last,
             out->mutable_start_unix_ns()->mutable_data());
  GatherPart(chunks.end_unix_ns, order, first, last, out->mutable_end_unix_ns()->mutable_data());
  GatherPart(chunks.compressed_bytes_read, order, first, last,
             out->mutable_bytes_read()->mutable_data());
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
