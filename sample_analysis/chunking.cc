#include "sample_analysis/chunking.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace sample_analysis {

absl::StatusOr<std::vector<WorkItem>> MakeChunks(const SampleDataset& dataset, int64_t chunk_size) {
  if (chunk_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("chunk_size must be > 0, got ", chunk_size));
  }
  std::vector<WorkItem> chunks;
  for (const DatasetFiles& files : dataset.datasets) {
    for (const SampleFile& file : files.files) {
      if (file.entries < 0) {
        return absl::InvalidArgumentError(absl::StrCat("file ", file.path, " of dataset ",
                                                       files.name, " has negative entries ",
                                                       file.entries));
      }
      if (file.entries == 0) continue;
      // Equal-sized chunks avoid a tiny straggler at the end of each file.
      const int64_t n = (file.entries + chunk_size - 1) / chunk_size;
      const int64_t base = file.entries / n;
      const int64_t larger = file.entries % n;  // the first `larger` chunks get one more entry
      int64_t start = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t size = base + (i < larger ? 1 : 0);
        chunks.push_back(WorkItem{files.name, file.path, start, start + size});
        start += size;
      }
    }
  }
  return chunks;
}

}  // namespace sample_analysis
}  // namespace roastcoffea
