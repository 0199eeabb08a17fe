// The built-in sample analysis on the thread pool, around one measurement session: ensure the
// sample dataset, chunk it, start the session, run the dijet processor over the chunks with
// every chunk tracked, finish the session.
#ifndef ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_
#define ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "aggregation/measure.h"
#include "backends/metrics_backend.h"
#include "backends/threadpool/executor.h"
#include "collector/measurement_session.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

struct SampleRunOptions {
  sample_analysis::SampleDatasetSpec dataset;
  // Where the generated sample files are kept between runs.
  std::string cache_dir;
  // Entries per chunk.
  int64_t chunk_size = 25000;
  // The session's; the run adds its processor, threads, build and dataset directory.
  SessionOptions session;
};

struct SampleRunResult {
  // Finished: Save the run with it (it also decides what an interruption saves).
  std::unique_ptr<MeasurementSession> session;
  // The measurement, its chunk records held apart as a table (FinishRun).
  MeasuredRun run;
  // The physics result of the chunks that ran.
  sample_analysis::DijetOutput output;
  std::string dataset_directory;
  bool dataset_generated = false;
  // Interrupted: chunks never started, and whether one was still running when the grace period
  // ended (its thread is left behind: the process should exit without unwinding).
  int64_t chunks_not_started = 0;
  bool chunk_left_running = false;
};

// Runs the sample analysis on `executor`, which `backend` samples. Errors name the offending
// option or file. Failed chunks do not make the run fail: they are kept as FAILED chunk records.
// On SIGINT/SIGTERM no chunk starts any more; those running get the session's grace period.
// A signal while the sample dataset is generated: Cancelled (nothing measured, nothing kept).
absl::StatusOr<SampleRunResult> RunSampleAnalysis(AbstractMetricsBackend& backend,
                                                  std::shared_ptr<ThreadPoolExecutor> executor,
                                                  SampleRunOptions options);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_SAMPLE_RUN_H_
