// The built-in sample analysis run end to end on the threadpool backend: ensure the sample
// dataset, chunk it, run the dijet processor over the chunks on N threads with every chunk
// tracked, sample the workers while it runs, and assemble the measurement.
#ifndef ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_
#define ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "schema/measurement.pb.h"
#include "tools/sample_analysis/dijet_processor.h"
#include "tools/sample_analysis/sample_dataset.h"

namespace roastcoffea {

struct SampleRunOptions {
  sample_analysis::SampleDatasetSpec dataset;
  // Where the generated sample files are kept between runs.
  std::string cache_dir;
  // Entries per chunk.
  int64_t chunk_size = 25000;
  // Worker threads (>= 1).
  int threads = 1;
  // Worker-tracking sampling interval (> 0).
  absl::Duration interval = absl::Milliseconds(250);
  // Statistical CPU profile of the worker threads (measurement.profiles), at profile_hz
  // samples per second of each thread's CPU time (1..1000).
  bool profile = false;
  int profile_hz = 100;
};

struct SampleRunResult {
  // Report, tracking data, chunk records, spans and aggregated metrics; metadata has the clock
  // fields (start, end, elapsed, process CPU), host, backend and schema version filled in.
  v1::Measurement measurement;
  // The physics result.
  sample_analysis::DijetOutput output;
  std::string dataset_directory;
  bool dataset_generated = false;
};

// Errors name the offending option or file. Failed chunks do not make the run fail: they are
// kept as FAILED chunk records (see measurement.metrics().chunks().num_failed_chunks()).
absl::StatusOr<SampleRunResult> RunSampleAnalysis(const SampleRunOptions& options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_
