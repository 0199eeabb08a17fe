#include "tools/workqueue_command.h"

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collector/measurement_session.h"
#include "host/host_name.h"
#include "sample_analysis/dijet_processor.h"
#include "sample_analysis/sample_dataset.h"
#include "store/measurement_io.h"
#include "tools/collect_version.h"
#include "tools/command_failure.h"
#include "tools/failed_chunks.h"
#include "tools/live_view.h"
#include "tools/paths.h"
#include "tools/run_output.h"
#include "tools/workqueue/workqueue_flags.h"
#include "tools/workqueue/workqueue_run.h"

namespace roastcoffea {

namespace {

// The run's dataset, cache, chunking, session and metadata from `config`, and the message that
// says where the manager listens.
void ConfigureRun(const RunConfig& config, const OutputPlan& plan, int argc, char** argv,
                  workqueue::WorkQueueRunOptions* options) {
  options->dataset.events_per_file = config.events_per_file;
  options->dataset.files_per_dataset = config.files_per_dataset;
  options->dataset.seed = config.seed;
  options->cache_dir = config.cache_dir.empty() ? sample_analysis::DefaultCacheDirectory()
                                                : ResolveUserPath(config.cache_dir);
  options->chunk_size = config.chunk_size;
  options->session = MakeSessionOptions(config, plan, argc, argv);
  auto& configuration = *options->session.metadata.mutable_configuration();
  configuration["analysis"] = "sample dijet";
  configuration["backend"] = "workqueue";
  configuration["workers"] = absl::StrCat(options->local_workers);
  configuration["chunks_per_task"] = absl::StrCat(options->chunks_per_task);
  configuration["chunk_size"] = absl::StrCat(options->chunk_size);
  configuration["events_per_file"] = absl::StrCat(options->dataset.events_per_file);
  configuration["files_per_dataset"] = absl::StrCat(options->dataset.files_per_dataset);
  configuration["seed"] = absl::StrCat(options->dataset.seed);
  // The workers run collect's analysis.
  RecordCodeIdentity(config.label, "/proc/self/exe", &configuration);
  const int local = options->local_workers;
  const std::string password = options->password_file;
  options->on_listening = [local, password](int port) {
    if (local > 0) {
      std::cerr << "collect: Work Queue manager on port " << port << ", " << local
                << " local worker" << (local == 1 ? "" : "s") << " ("
                << workqueue::WorkerCommand("127.0.0.1", port, password) << " --cores=1)\n";
    } else {
      std::cerr << "collect: Work Queue manager on port " << port
                << ", waiting for workers; start them with:\n  "
                << workqueue::WorkerCommand(HostName(), port, password) << "\n";
    }
  };
}

// What the Work Queue run adds to the exit code once the measurement is saved in `saved`.
ExitCode ReportOutcome(const OutputPlan& plan, const workqueue::WorkQueueRunResult& result,
                       const std::string& saved) {
  if (absl::Status kept = workqueue::KeepRunFiles(result, saved); !kept.ok()) {
    std::cerr << "collect: warning: " << ForTerminal(kept.message()) << "\n";
  } else {
    std::cout << "Work Queue logs (" << result.tasks << " tasks, " << result.lost_attempts
              << " lost attempts, peak " << result.peak_workers << " workers) kept in " << saved
              << "/workqueue\n";
  }
  if (Interrupted(*result.session, result.run.measurement)) {
    return WithSaveOutcome(plan, ExitCode::kInterrupted);
  }
  if (result.chunks_given_up > 0) {
    std::cerr << "collect: " << result.chunks_given_up
              << " chunks never came back (see --wq_stall_timeout); the measurement is "
                 "partial\n";
    return WithSaveOutcome(plan, ExitCode::kPartial);
  }
  return WithSaveOutcome(plan, ReportFailedChunks(result.run.chunks));
}

}  // namespace

ExitCode RunSampleOnWorkQueue(const RunConfig& config, int argc, char** argv) {
  if (absl::Status status = ValidateRunConfig(config); !status.ok()) return Fail(status);
  bool temporary = false;
  absl::StatusOr<workqueue::WorkQueueRunOptions> options = workqueue::MakeWorkQueueRunOptions(
      config.workqueue, [](const std::string& path) { return ResolveUserPath(path); }, &temporary);
  if (!options.ok()) {
    // InvalidArgument: the flags' values (see workqueue_flags.h); anything else: the system.
    return Fail(absl::IsInvalidArgument(options.status()) ? AsUsageError(options.status())
                                                          : options.status());
  }
  struct RemoveTemporary {
    std::string path;
    bool keep = false;
    ~RemoveTemporary() {
      std::error_code ignored;
      if (!path.empty() && !keep) std::filesystem::remove_all(path, ignored);
    }
  } remove{temporary ? options->work_directory : ""};
  absl::StatusOr<OutputPlan> plan = PlanOutput(config);
  if (!plan.ok()) return Fail(plan.status());
  if (absl::Status serving = StartLiveView(config.serve); !serving.ok()) return Fail(serving);
  ConfigureRun(config, *plan, argc, argv, &*options);
  std::cerr << "collect: the sample analysis as Work Queue tasks of " << options->chunks_per_task
            << (options->chunks_per_task == 1 ? " chunk" : " chunks")
            << "; datasets are kept under " << options->cache_dir << "\n";
  absl::StatusOr<workqueue::WorkQueueRunResult> result =
      workqueue::RunWorkQueueSampleAnalysis(*options);
  if (!result.ok()) {
    // The local workers' logs explain why they never connected (the error names the directory).
    remove.keep = absl::IsDeadlineExceeded(result.status()) && options->local_workers > 0;
    return Fail(result.status());
  }
  absl::StatusOr<std::string> saved = Finish(config, *plan, *result->session, result->run,
                                             sample_analysis::SummarizeDijetOutput(result->output));
  if (!saved.ok()) return Fail(saved.status());
  return ReportOutcome(*plan, *result, *saved);
}

}  // namespace roastcoffea
