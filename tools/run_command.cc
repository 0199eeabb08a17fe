#include "tools/run_command.h"

#include <iostream>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/backend_factory.h"
#include "tools/command_failure.h"
#include "tools/external_command.h"
#include "tools/live_view.h"
#include "tools/run_output.h"
#include "tools/threadpool_command.h"
#include "tools/workqueue_command.h"

namespace roastcoffea {

namespace {

// After a run with --serve: the final figures stay up a little, so that a scraper's last scrape
// sees them. Returns the run's exit code.
ExitCode AfterLiveView(const RunConfig& config, ExitCode exit_code) {
  if (LiveView() != nullptr) {
    if (const double linger = config.serve_linger; linger > 0) {
      std::cerr << "collect: serving the final figures at http://" << LiveView()->address()
                << "/ for " << linger << " s (Ctrl-C ends it)\n";
      ServeUntilSignal(absl::Seconds(linger));
    }
    LiveView()->Stop();
  }
  return exit_code;
}

}  // namespace

ExitCode RunCommand(const RunConfig& config, const Invocation& invocation) {
  const std::string& backend_name = config.backend;
  if (!invocation.command.empty() &&
      (backend_name == "threadpool" || backend_name == "workqueue")) {
    return Fail(UsageError(absl::StrCat("--backend=", backend_name,
                                        " runs the built-in sample analysis; a command to measure "
                                        "needs --backend=dask or --backend=taskvine")));
  }
  if (backend_name == "workqueue") {
    return AfterLiveView(config, RunSampleOnWorkQueue(config, invocation.argc, invocation.argv));
  }
  if (absl::Status status = ValidateRunConfig(config); !status.ok()) return Fail(status);
  const double duration = config.duration;
  if (!(duration >= 0)) {
    return Fail(
        UsageError(absl::StrCat("--duration must be a number of seconds >= 0, got ", duration)));
  }
  absl::StatusOr<OutputPlan> plan = PlanOutput(config);
  if (!plan.ok()) return Fail(plan.status());
  absl::StatusOr<CollectBackend> backend = MakeBackend(config);
  if (!backend.ok()) {
    // InvalidArgument: the backend's flags (see backend_factory.h); anything else: the system.
    return Fail(absl::IsInvalidArgument(backend.status()) ? AsUsageError(backend.status())
                                                          : backend.status());
  }
  if (absl::Status serving = StartLiveView(config.serve); !serving.ok()) return Fail(serving);
  SessionOptions session = MakeSessionOptions(config, *plan, invocation.argc, invocation.argv);
  return AfterLiveView(
      config, backend->executor != nullptr
                  ? RunSampleOnThreadPool(config, *plan, std::move(session), *backend)
                  : RunWithEngineBackend(config, *plan, std::move(session), *backend->metrics,
                                         invocation.command));
}

}  // namespace roastcoffea
