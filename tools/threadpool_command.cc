#include "tools/threadpool_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"
#include "tools/command_failure.h"
#include "tools/failed_chunks.h"
#include "tools/paths.h"
#include "tools/sample_run.h"

namespace roastcoffea {

ExitCode RunSampleOnThreadPool(const RunConfig& config, const OutputPlan& plan,
                               SessionOptions session_options, CollectBackend& backend) {
  SampleRunOptions options;
  options.dataset.events_per_file = config.events_per_file;
  options.dataset.files_per_dataset = config.files_per_dataset;
  options.dataset.seed = config.seed;
  options.cache_dir = config.cache_dir.empty() ? sample_analysis::DefaultCacheDirectory()
                                               : ResolveUserPath(config.cache_dir);
  options.chunk_size = config.chunk_size;
  const int threads = backend.executor->threads();
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["threads"] = absl::StrCat(threads);
  configuration["chunk_size"] = absl::StrCat(options.chunk_size);
  configuration["events_per_file"] = absl::StrCat(options.dataset.events_per_file);
  configuration["files_per_dataset"] = absl::StrCat(options.dataset.files_per_dataset);
  configuration["seed"] = absl::StrCat(options.dataset.seed);
  if (config.threadpool.profile) {
    configuration["profile_hz"] = absl::StrCat(config.threadpool.profile_hz);
  }
  RecordCodeIdentity(config.label, "/proc/self/exe",
                     &configuration);  // the sample analysis is collect
  options.session = std::move(session_options);
  const std::string sample_cache_dir = options.cache_dir;

  std::cerr << "collect: the sample analysis on " << threads
            << (threads == 1 ? " thread" : " threads") << "; datasets are kept under "
            << options.cache_dir << "\n";
  absl::StatusOr<SampleRunResult> result =
      RunSampleAnalysis(*backend.metrics, backend.executor, std::move(options));
  if (!result.ok()) return Fail(result.status());

  const v1::Measurement& measurement = result->run.measurement;
  absl::StatusOr<std::string> saved = Finish(config, plan, *result->session, result->run,
                                             sample_analysis::SummarizeDijetOutput(result->output));
  ExitCode exit_code = ExitCode::kOk;
  if (!saved.ok()) {
    exit_code = Fail(saved.status());
  } else if (Interrupted(*result->session, measurement)) {
    exit_code = ExitCode::kInterrupted;
  } else {
    exit_code = ReportFailedChunks(result->run.chunks, sample_cache_dir);
  }
  if (result->chunk_left_running) {
    // A worker thread is still inside a chunk that outlived the grace period: leave without
    // unwinding (destructors would join it or pull its state away).
    std::cout.flush();
    std::cerr.flush();
    // No destructor runs: the claim's lock goes with the process, its file is removed here.
    if (plan.name_claim.has_value()) unlink(plan.name_claim->path().c_str());
    std::_Exit(ToInt(WithSaveOutcome(plan, exit_code)));
  }
  return WithSaveOutcome(plan, exit_code);
}

}  // namespace roastcoffea
