#include "aggregation/read_amplification.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "aggregation/distribution_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

using Range = std::pair<int64_t, int64_t>;

// Entries covered at least once by `ranges` (sorted here).
double CoveredEntries(Range* first, Range* last) {
  if (!std::is_sorted(first, last)) std::sort(first, last);
  double covered = 0;
  int64_t start = 0, stop = 0;
  bool open = false;
  for (const Range* it = first; it != last; ++it) {
    const auto [a, b] = *it;
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

// The entry ranges (stop > start) of the records of files without a recorded size, grouped by
// file with a counting sort: file f's ranges are ranges[begin[f], begin[f + 1]).
struct RangesByFile {
  std::vector<Range> ranges;
  std::vector<size_t> begin;
};

RangesByFile GroupRanges(const ChunkColumns& chunks, const std::vector<int64_t>& size) {
  RangesByFile out;
  out.begin.assign(size.size() + 1, 0);
  auto wanted = [&](size_t i) {
    const uint32_t file = chunks.file[i];
    return file != ChunkColumns::kNone && size[file] <= 0 &&
           chunks.entry_stop[i] > chunks.entry_start[i];
  };
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (wanted(i)) ++out.begin[chunks.file[i] + 1];
  }
  for (size_t f = 0; f < size.size(); ++f) out.begin[f + 1] += out.begin[f];
  out.ranges.resize(out.begin.back());
  std::vector<size_t> next(out.begin.begin(), out.begin.end() - 1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (wanted(i))
      out.ranges[next[chunks.file[i]]++] = {chunks.entry_start[i], chunks.entry_stop[i]};
  }
  return out;
}

}  // namespace

std::optional<ReadAmplification> ComputeReadAmplification(const ChunkColumns& chunks) {
  const size_t files = chunks.file_names.size();
  std::vector<double> bytes_read(files, 0.0);
  std::vector<int64_t> size = chunks.file_sizes;  // recorded size, 0 unknown
  size.resize(files, 0);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const uint32_t file = chunks.file[i];
    if (file == ChunkColumns::kNone) continue;
    bytes_read[file] += static_cast<double>(std::max<int64_t>(0, chunks.compressed_bytes_read[i]));
  }
  RangesByFile ranges = GroupRanges(chunks, size);
  ReadAmplification out;
  CompensatedAccumulator read, distinct;
  for (size_t f = 0; f < files; ++f) {
    if (bytes_read[f] <= 0.0) continue;
    double file_distinct = bytes_read[f];
    if (size[f] > 0) {
      file_distinct = static_cast<double>(size[f]);
      ++out.files_with_size;
    } else {
      Range* first = ranges.ranges.data() + ranges.begin[f];
      Range* last = ranges.ranges.data() + ranges.begin[f + 1];
      double summed = 0;
      for (const Range* it = first; it != last; ++it) {
        summed += static_cast<double>(it->second - it->first);
      }
      const double covered = CoveredEntries(first, last);
      if (summed > 0.0 && covered < summed) file_distinct = bytes_read[f] * covered / summed;
    }
    read.Add(bytes_read[f]);
    distinct.Add(file_distinct);
    ++out.files;
  }
  if (out.files == 0 || !(distinct.Sum() > 0.0)) return std::nullopt;
  out.bytes_read = static_cast<int64_t>(std::llround(read.Sum()));
  out.distinct_bytes = static_cast<int64_t>(std::llround(distinct.Sum()));
  out.ratio = read.Sum() / distinct.Sum();
  return out;
}

std::optional<ReadAmplification> ComputeReadAmplification(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> columns = BuildChunkColumns(chunks, &branches, &sections);
  if (!columns.ok()) return std::nullopt;
  return ComputeReadAmplification(*columns);
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
