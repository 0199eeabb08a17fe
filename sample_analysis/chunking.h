// Splits a sample dataset into work items (chunks) by entry range, as Coffea's preprocessing does.
#ifndef ROASTCOFFEA_SAMPLE_ANALYSIS_CHUNKING_H_
#define ROASTCOFFEA_SAMPLE_ANALYSIS_CHUNKING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {
namespace sample_analysis {

// Entries [entry_start, entry_stop) of one file of one dataset.
struct WorkItem {
  std::string dataset;
  std::string file;  // path of the columnar file
  int64_t entry_start = 0;
  int64_t entry_stop = 0;

  int64_t entries() const { return entry_stop - entry_start; }
  friend bool operator==(const WorkItem& a, const WorkItem& b) {
    return a.dataset == b.dataset && a.file == b.file && a.entry_start == b.entry_start &&
           a.entry_stop == b.entry_stop;
  }
};

// Cuts every file into ceil(entries / chunk_size) chunks of near-equal size (they differ by at
// most one entry, none exceeds chunk_size), in dataset, file, entry order. Every entry of every
// file lands in exactly one chunk; empty files give no chunks. InvalidArgument when
// chunk_size <= 0 or a file has a negative entry count. Cost: O(number of chunks).
absl::StatusOr<std::vector<WorkItem>> MakeChunks(const SampleDataset& dataset, int64_t chunk_size);

}  // namespace sample_analysis
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_SAMPLE_ANALYSIS_CHUNKING_H_
