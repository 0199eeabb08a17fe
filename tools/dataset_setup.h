// The sample dataset as collect's runs meet it: where it is, whether it is generated now (with
// progress and its size) or reused, and how to regenerate a damaged one. A SIGINT/SIGTERM while
// it is generated stops the generation (a second one exits at once, as in a run): nothing was
// measured yet, so nothing is saved, and nothing half-written is left in the cache.
//
// Progress goes to `stream`: one line redrawn in place on a terminal, a few plain lines
// otherwise, always ending with a newline.
#ifndef ROASTCOFFEA_TOOLS_DATASET_SETUP_H_
#define ROASTCOFFEA_TOOLS_DATASET_SETUP_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "sample_analysis/sample_dataset.h"

namespace roastcoffea {

struct DatasetSetupOptions {
  // Prefix of the messages.
  std::string program = "collect";
  FILE* stream = stderr;
  // Off: signals keep their usual effect while the dataset is generated.
  bool handle_signals = true;
};

// EnsureSampleDataset, told. Errors: its own (a damaged cache names the directory to delete);
// Cancelled when a signal stopped the generation (the message says which, and that nothing
// was kept).
absl::StatusOr<sample_analysis::SampleDataset> PrepareSampleDataset(
    const sample_analysis::SampleDatasetSpec& spec, const std::string& cache_dir,
    const DatasetSetupOptions& options = {});

// "1.5 MB", "240.1 MB", "2.3 GB" (decimal units).
std::string FormatBytes(int64_t bytes);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_DATASET_SETUP_H_
