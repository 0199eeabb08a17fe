#include "tools/external_command.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "tools/code_identity.h"
#include "tools/command_failure.h"
#include "tools/external_run.h"
#include "tools/taskvine_collect.h"

namespace roastcoffea {

ExitCode RunWithEngineBackend(const RunConfig& config, const OutputPlan& plan,
                              SessionOptions session_options, AbstractMetricsBackend& backend,
                              const std::vector<std::string>& command) {
  const double duration = config.duration;
  ExternalRunOptions options;
  options.command = command;
  options.duration = absl::Seconds(duration);
  auto& configuration = *session_options.metadata.mutable_configuration();
  configuration["backend"] = std::string(backend.name());
  if (!command.empty()) configuration["command"] = absl::StrJoin(command, " ");
  const char* search_path = std::getenv("PATH");
  absl::StatusOr<std::string> executable =
      command.empty() ? absl::NotFoundError("no command")
                      : FindExecutable(command.front(), search_path == nullptr ? "" : search_path);
  RecordCodeIdentity(config.label, executable.ok() ? *executable : "", &configuration);
  options.session = std::move(session_options);
  // Nothing to wait for: the logs of a finished run are read and measured at once.
  const bool finished_run =
      backend.name() == "taskvine" && command.empty() && LogsAreOfAFinishedRun(config.taskvine);
  if (finished_run) {
    std::cerr << "collect: reading the run's record with the " << backend.name() << " backend\n";
  } else {
    std::cerr << "collect: tracking with the " << backend.name() << " backend "
              << (command.empty() ? (duration > 0 ? absl::StrCat("for ", duration, " s")
                                                  : std::string("until Ctrl-C"))
                                  : absl::StrCat("while '", absl::StrJoin(command, " "), "' runs"))
              << "\n";
  }
  const absl::Duration interval = options.session.interval;
  absl::StatusOr<ExternalRunResult> result =
      finished_run
          ? MeasureFinishedRun(
                backend.name(),
                [&config, interval] { return ReadFinishedTaskVineRun(config.taskvine, interval); },
                std::move(options.session))
          : RunExternalMeasurement(backend, std::move(options));
  if (!result.ok()) return Fail(result.status());
  absl::StatusOr<std::string> saved = Finish(config, plan, *result->session, result->run, "");
  if (!saved.ok()) return Fail(saved.status());
  if (Interrupted(*result->session, result->run.measurement))
    return WithSaveOutcome(plan, ExitCode::kInterrupted);
  if (result->partial) {
    std::cerr << "collect: the measurement is partial: the backend lost sight of the engine "
                 "for a while (see tracking gaps)\n";
    return WithSaveOutcome(plan, ExitCode::kPartial);
  }
  if (result->command_exit_code != 0) {
    std::cerr << "collect: the command exited with status " << result->command_exit_code << "\n";
    return WithSaveOutcome(plan, ExitCode::kCommandFailed);
  }
  return WithSaveOutcome(plan, ExitCode::kOk);
}

}  // namespace roastcoffea
