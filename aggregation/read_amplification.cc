#include "aggregation/read_amplification.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

struct FileReads {
  double bytes_read = 0;
  int64_t size = 0;  // recorded size, 0 unknown
  std::vector<std::pair<int64_t, int64_t>> ranges;
};

// Entries covered at least once by `ranges` (sorted here).
double CoveredEntries(std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  double covered = 0;
  int64_t start = 0, stop = 0;
  bool open = false;
  for (const auto& [a, b] : ranges) {
    if (open && a <= stop) {
      stop = std::max(stop, b);
      continue;
    }
    if (open) covered += static_cast<double>(stop - start);
    start = a, stop = b, open = true;
  }
  if (open) covered += static_cast<double>(stop - start);
  return covered;
}

}  // namespace

std::optional<ReadAmplification> ComputeReadAmplification(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  absl::flat_hash_map<absl::string_view, FileReads> files;
  for (const v1::ChunkRecord& chunk : chunks) {
    if (chunk.file().empty()) continue;
    FileReads& file = files[chunk.file()];
    file.bytes_read += static_cast<double>(std::max<int64_t>(0, chunk.compressed_bytes_read()));
    const int64_t size =
        chunk.file_bytes() > 0 ? chunk.file_bytes() : chunk.file_metadata().total_tree_bytes();
    file.size = std::max(file.size, size);
    if (chunk.entry_stop() > chunk.entry_start()) {
      file.ranges.emplace_back(chunk.entry_start(), chunk.entry_stop());
    }
  }
  ReadAmplification out;
  double read = 0, distinct = 0;
  for (auto& [name, file] : files) {
    if (file.bytes_read <= 0.0) continue;
    double file_distinct = file.bytes_read;
    if (file.size > 0) {
      file_distinct = static_cast<double>(file.size);
      ++out.files_with_size;
    } else {
      double summed = 0;
      for (const auto& [a, b] : file.ranges) summed += static_cast<double>(b - a);
      const double covered = CoveredEntries(file.ranges);
      if (summed > 0.0 && covered < summed) file_distinct = file.bytes_read * covered / summed;
    }
    read += file.bytes_read;
    distinct += file_distinct;
    ++out.files;
  }
  if (out.files == 0 || distinct <= 0.0) return std::nullopt;
  out.bytes_read = static_cast<int64_t>(std::llround(read));
  out.distinct_bytes = static_cast<int64_t>(std::llround(distinct));
  out.ratio = read / distinct;
  return out;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
