#include "tools/external_run.h"

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/chunk_join.h"
#include "tools/coffea_json.h"
#include "tools/measurement_builder.h"
#include "tools/workflow_report.h"

extern char** environ;

namespace roastcoffea {
namespace {

// Holds SIGINT, SIGTERM and SIGCHLD for this thread and every thread started while it lives (a
// backend's sampler threads), so that the wait loop receives them with sigtimedwait instead of
// the process dying on Ctrl-C with its measurement unsaved.
class HeldSignals {
 public:
  HeldSignals() {
    sigemptyset(&held_);
    sigaddset(&held_, SIGINT);
    sigaddset(&held_, SIGTERM);
    sigaddset(&held_, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &held_, &previous_);
  }
  ~HeldSignals() {
    // Signals that arrived after the run ended are dropped rather than delivered late.
    const timespec zero = {0, 0};
    while (sigtimedwait(&held_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  const sigset_t& held() const { return held_; }
  const sigset_t& previous() const { return previous_; }

 private:
  sigset_t held_;
  sigset_t previous_;
};

std::string ScratchDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/roastcoffea-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& command,
                            const std::vector<std::string>& extra_environment,
                            const HeldSignals& signals) {
  std::vector<std::string> environment = extra_environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = command;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  // The command gets the signal mask and dispositions we had before holding signals.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setsigmask(&attributes, &signals.previous());
  posix_spawnattr_setsigdefault(&attributes, &signals.held());
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, argv[0], nullptr, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    const std::string what = absl::StrCat("cannot run command '", absl::StrJoin(command, " "),
                                          "': ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(what) : absl::InternalError(what);
  }
  return pid;
}

struct WaitOutcome {
  int exit_code = 0;
  bool interrupted = false;
};

// Waits for the command to exit, or (without one) for the duration to pass; either way SIGINT or
// SIGTERM ends the wait. A signal sent with kill() is passed on to the command; one from the
// terminal (Ctrl-C) already reached it, as it shares our process group.
WaitOutcome Wait(std::optional<pid_t> child, absl::Duration duration, const HeldSignals& signals) {
  WaitOutcome outcome;
  const absl::Time deadline =
      (!child.has_value() && duration > absl::ZeroDuration()) ? absl::Now() + duration
                                                              : absl::InfiniteFuture();
  while (true) {
    if (child.has_value()) {
      int status = 0;
      const pid_t done = waitpid(*child, &status, WNOHANG);
      if (done == *child) {
        outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return outcome;
      }
      if (done < 0 && errno != EINTR) return outcome;  // not our child any more
    } else if (absl::Now() >= deadline) {
      return outcome;
    }
    const absl::Duration slice =
        std::min(absl::Milliseconds(200), std::max(absl::ZeroDuration(), deadline - absl::Now()));
    const timespec timeout = absl::ToTimespec(slice);
    siginfo_t info;
    const int signal = sigtimedwait(&signals.held(), &info, &timeout);
    if (signal == SIGINT || signal == SIGTERM) {
      outcome.interrupted = true;
      if (!child.has_value()) return outcome;
      if (info.si_code == SI_USER || info.si_code == SI_QUEUE) kill(*child, signal);
      // Go on waiting: the command decides how long it needs to shut down.
    }
  }
}

}  // namespace

absl::StatusOr<ExternalRunResult> RunExternalMeasurement(AbstractMetricsBackend& backend,
                                                         const ExternalRunOptions& options) {
  const HeldSignals signals;  // before the backend starts any thread
  const std::string scratch = ScratchDirectory();
  if (scratch.empty()) {
    return absl::InternalError(absl::StrCat("cannot create a temporary directory: ",
                                            std::strerror(errno)));
  }
  const std::string report_path = scratch + "/report.json";
  const std::string records_path = scratch + "/chunk_records.json";
  struct RemoveScratch {
    std::string path;
    ~RemoveScratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_scratch{scratch};

  ExternalRunResult result;
  const RunStopwatch stopwatch;
  if (absl::Status status = backend.StartTracking(options.interval); !status.ok()) return status;
  std::optional<SpanId> span;
  if (backend.SupportsFineMetrics()) {
    absl::StatusOr<SpanId> created = backend.CreateSpan("collect window");
    if (created.ok()) {
      span = *created;
    } else {
      result.warnings.push_back(absl::StrCat("no fine metrics: ", created.status().message()));
    }
  }

  std::optional<pid_t> child;
  absl::Status spawn_status;
  if (!options.command.empty()) {
    absl::StatusOr<pid_t> pid =
        Spawn(options.command,
              {absl::StrCat(kReportPathVariable, "=", report_path),
               absl::StrCat(kChunkRecordsPathVariable, "=", records_path)},
              signals);
    if (pid.ok()) {
      child = *pid;
    } else {
      spawn_status = pid.status();
    }
  }
  WaitOutcome waited;
  // A backend that reads a finished run has nothing to wait for, unless there is a command.
  if (spawn_status.ok() && (child.has_value() || !backend.ReadsFinishedRun())) {
    waited = Wait(child, options.duration, signals);
  }

  RawRun run;
  run.window = stopwatch.Stop();
  std::vector<v1::Span> spans;
  if (span.has_value()) {
    absl::Status ended = backend.EndSpan(*span);
    absl::StatusOr<v1::Span> metrics =
        ended.ok() ? backend.GetSpanMetrics(*span) : absl::StatusOr<v1::Span>(ended);
    if (metrics.ok()) {
      run.spans.push_back(*std::move(metrics));
    } else {
      result.warnings.push_back(absl::StrCat("no fine metrics: ", metrics.status().message()));
    }
  }
  absl::StatusOr<v1::TrackingData> tracking = backend.StopTracking();
  if (!spawn_status.ok()) return spawn_status;
  if (!tracking.ok()) return tracking.status();
  result.command_exit_code = waited.exit_code;
  result.interrupted = waited.interrupted;
  result.partial = tracking->gaps_size() > 0;
  // The backend's warnings keep their codes in the measurement; ours are "external_run".
  const std::vector<v1::Warning> coded = backend.CodedWarnings();
  const size_t first_coded = result.warnings.size();
  for (const v1::Warning& warning : coded) result.warnings.push_back(warning.message());

  // A finished run is framed by its own record, not by the time it took us to read it.
  if (const std::optional<AbstractMetricsBackend::RecordedWindow> recorded =
          backend.RecordedRunWindow();
      recorded.has_value()) {
    run.window.start = recorded->start;
    run.window.end = recorded->end;
    run.window.elapsed_seconds = absl::ToDoubleSeconds(recorded->end - recorded->start);
  }
  // A run that ended before we read it happened on other machines at another time: this
  // machine's load and steal now say nothing about it, and must not warn as if they did.
  if (backend.ReadsFinishedRun() && !child.has_value()) run.window.host_facts.reset();
  run.backend = std::string(backend.name());
  run.tracking = *std::move(tracking);
  run.profiles = backend.TakeProfiles();
  absl::StatusOr<ChunkRecordsRead> records = ReadChunkRecords(records_path);
  if (records.ok()) {
    for (std::string& warning : records->warnings) result.warnings.push_back(std::move(warning));
  } else if (!absl::IsNotFound(records.status())) {
    result.warnings.push_back(absl::StrCat("chunk records ignored: ", records.status().message()));
  }
  ChunkJoinResult joined =
      JoinChunkRecords(backend.TakeChunkRecords(),
                       records.ok() ? std::move(records->records) : std::vector<v1::ChunkRecord>{});
  run.chunks = std::move(joined.records);
  for (std::string& warning : joined.warnings) result.warnings.push_back(std::move(warning));
  absl::StatusOr<CoffeaReportRead> report = ReadCoffeaReport(report_path);
  if (report.ok()) {
    run.report = std::move(report->report);
    for (std::string& warning : report->warnings) result.warnings.push_back(std::move(warning));
  } else {
    if (!absl::IsNotFound(report.status())) {
      result.warnings.push_back(absl::StrCat("report ignored: ", report.status().message()));
    }
    // Without a report, the chunk records are the best account of what was processed.
    if (!run.chunks.empty()) run.report = BuildWorkflowReport(run.chunks);
  }
  run.processor_patterns = options.processor_patterns;
  // The host facts (the stopwatch's) describe this client machine. The analysis ran elsewhere:
  // no in-process worker threads to oversubscribe it, and its build is unknown.
  run.in_process_worker_threads.reset();
  run.analysis_build.reset();
  absl::StatusOr<v1::Measurement> measurement = AssembleMeasurement(std::move(run));
  if (!measurement.ok()) return measurement.status();
  result.measurement = *std::move(measurement);
  for (size_t i = 0; i < result.warnings.size(); ++i) {
    v1::Warning* warning = result.measurement.add_warnings();
    if (i >= first_coded && i - first_coded < coded.size()) {
      *warning = coded[i - first_coded];
    } else {
      warning->set_code("external_run");
      warning->set_message(result.warnings[i]);
    }
  }
  return result;
}

}  // namespace roastcoffea
