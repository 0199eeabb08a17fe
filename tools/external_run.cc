#include "tools/external_run.h"

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ingest/coffea_json.h"
#include "tools/progress_line.h"

extern char** environ;

namespace roastcoffea {
namespace {

constexpr char kScratchPrefix[] = "roastcoffea-run-";

std::string TemporaryRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp ? tmp : "/tmp";
}

// "<root>/roastcoffea-run-<pid>-XXXXXX": the pid tells a later run whether its owner is gone.
std::string ScratchDirectory() {
  std::string pattern = absl::StrCat(TemporaryRoot(), "/", kScratchPrefix, getpid(), "-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

// Removes `directory` if it holds nothing but the two files a command may leave there.
void RemoveIfOnlyOurFiles(const std::filesystem::path& directory) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if ((name != "report.json" && name != "chunk_records.json") || !entry.is_regular_file(error) ||
        entry.is_symlink(error)) {
      return;  // something we did not make: left alone
    }
  }
  if (error) return;
  std::filesystem::remove_all(directory, error);
}

}  // namespace

void SweepStaleScratchDirectories(const std::string& root) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const std::string name = entry.path().filename().string();
    // By name first: a shared /tmp holds many entries, and only ours need a stat.
    if (!absl::StartsWith(name, "roastcoffea-")) continue;
    struct stat info;
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != getuid()) {
      continue;
    }
    if (absl::StartsWith(name, kScratchPrefix)) {
      // The owner's pid: a run killed with SIGKILL (or a crash) left it behind.
      const std::string rest = name.substr(sizeof(kScratchPrefix) - 1);
      int64_t pid = 0;
      if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) continue;
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
      RemoveIfOnlyOurFiles(entry.path());
    } else if (absl::StartsWith(name, "roastcoffea-") && name.size() == 18 &&
               absl::Now() - absl::FromTimeT(info.st_mtime) > absl::Hours(1)) {
      // Earlier versions' "roastcoffea-XXXXXX", without a pid: an hour old is long gone.
      RemoveIfOnlyOurFiles(entry.path());
    }
  }
}

namespace {

absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& command,
                            const std::vector<std::string>& extra_environment) {
  std::vector<std::string> environment = extra_environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = command;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  // exec resets our SIGINT/SIGTERM handlers, but not what collect ignores (SIGPIPE, SIGXFSZ,
  // tools/collect_main.cc): the command gets the usual dispositions of those too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
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
  bool killed_after_grace = false;
};

// Waits for the command to exit, or (without one) for the duration to pass or the first signal.
// After a signal the command has until the session's work deadline to exit; then it is killed.
WaitOutcome Wait(std::optional<pid_t> child, absl::Duration duration, MeasurementSession& session) {
  WaitOutcome outcome;
  // --duration on the monotonic clock: a wall-clock step (NTP, an administrator) must neither
  // stretch it (-60 s made 5 s last 66 s) nor cut it short.
  const bool timed = !child.has_value() && duration > absl::ZeroDuration();
  const std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(duration);
  const auto remaining = [&] {
    return timed ? absl::FromChrono(deadline - std::chrono::steady_clock::now())
                 : absl::InfiniteDuration();
  };
  while (true) {
    if (child.has_value()) {
      int status = 0;
      const pid_t done = waitpid(*child, &status, WNOHANG);
      if (done == *child) {
        outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return outcome;
      }
      if (done < 0 && errno != EINTR) return outcome;  // not our child any more
      if (session.work_deadline_passed()) {
        kill(*child, SIGKILL);
        outcome.killed_after_grace = true;
        waitpid(*child, &status, 0);
        outcome.exit_code = 128 + SIGKILL;
        return outcome;
      }
    } else if (remaining() <= absl::ZeroDuration() || session.interrupted()) {
      return outcome;
    }
    // Relative sleeps (monotonic): a signal is seen within 20 ms.
    absl::SleepFor(std::max(absl::ZeroDuration(), std::min(remaining(), absl::Milliseconds(20))));
  }
}

v1::Warning Ours(std::string message) {
  v1::Warning warning;
  warning.set_code("external_run");
  warning.set_message(std::move(message));
  return warning;
}

// Runs `command` (unless it is empty or a signal came already) with the paths of its two files
// in its environment, and waits for it (Wait); signals go to it meanwhile. The spawn's error
// when it cannot start.
absl::StatusOr<WaitOutcome> RunCommandAndWait(const std::vector<std::string>& command,
                                              absl::Duration duration,
                                              const std::string& report_path,
                                              const std::string& records_path,
                                              MeasurementSession& session) {
  std::optional<pid_t> child;
  if (!command.empty() && !session.interrupted()) {
    absl::StatusOr<pid_t> pid =
        Spawn(command, {absl::StrCat(kReportPathVariable, "=", report_path),
                        absl::StrCat(kChunkRecordsPathVariable, "=", records_path)});
    if (!pid.ok()) {
      session.ForwardSignalsTo(0);
      return pid.status();
    }
    child = *pid;
    session.ForwardSignalsTo(*pid);
  }
  WaitOutcome waited;
  {
    // On a terminal: the chunks the engine reports, as they finish (tools/progress_line.h).
    ProgressLine progress([&session] { return ProgressOfLiveStatus(session.live_status()); });
    waited = Wait(child, duration, session);
    progress.Finish();
  }
  session.ForwardSignalsTo(0);
  return waited;
}

// The chunk records and the Coffea report the command wrote, into `outputs`; a file that is not
// there is no warning, one that cannot be read is.
void ReadCommandFiles(const std::string& report_path, const std::string& records_path,
                      MeasurementSession& session, RunOutputs* outputs) {
  // A signal while the records are read stops the read (the records read so far are kept), as
  // does the end of the grace period of a signal that came before.
  ChunkRecordsOptions read_options;
  read_options.cancelled = [&session, interrupted_before = session.interrupted()] {
    return (!interrupted_before && session.interrupted()) || SessionShouldGiveUp();
  };
  absl::StatusOr<ChunkTableRead> records = ReadChunkRecordsAsTable(records_path, read_options);
  if (records.ok()) {
    outputs->chunks = std::move(records->table);
    for (std::string& warning : records->warnings) {
      outputs->warnings.push_back(Ours(std::move(warning)));
    }
  } else if (!absl::IsNotFound(records.status())) {
    outputs->warnings.push_back(
        Ours(absl::StrCat("chunk records ignored: ", records.status().message())));
  }
  absl::StatusOr<CoffeaReportRead> report = ReadCoffeaReport(report_path);
  if (report.ok()) {
    outputs->report = std::move(report->report);
    for (std::string& warning : report->warnings) {
      outputs->warnings.push_back(Ours(std::move(warning)));
    }
  } else if (!absl::IsNotFound(report.status())) {
    outputs->warnings.push_back(Ours(absl::StrCat("report ignored: ", report.status().message())));
  }
}

}  // namespace

absl::StatusOr<ExternalRunResult> RunExternalMeasurement(AbstractMetricsBackend& backend,
                                                         ExternalRunOptions options) {
  SweepStaleScratchDirectories(TemporaryRoot());
  const std::string scratch = ScratchDirectory();
  if (scratch.empty()) {
    return absl::InternalError(
        absl::StrCat("cannot create a temporary directory: ", std::strerror(errno)));
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
  // Tracking "until Ctrl-C": the signal is how the run ends.
  options.session.signal_is_the_end =
      options.command.empty() && options.duration <= absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      MeasurementSession::Start(backend, std::move(options.session));
  if (!started.ok()) return started.status();
  result.session = *std::move(started);
  MeasurementSession& session = *result.session;

  absl::StatusOr<WaitOutcome> waited =
      RunCommandAndWait(options.command, options.duration, report_path, records_path, session);
  if (!waited.ok()) {
    (void)session.FinishRun(RunOutputs{});  // stops tracking: no thread is left behind
    return waited.status();
  }
  result.command_exit_code = waited->exit_code;

  RunOutputs outputs;
  if (waited->killed_after_grace) {
    outputs.warnings.push_back(Ours(absl::StrCat(
        "the command did not exit within ", absl::FormatDuration(session.options().grace_period),
        " of the interruption and was killed (SIGKILL)")));
  }
  ReadCommandFiles(report_path, records_path, session, &outputs);
  absl::StatusOr<MeasuredRun> run = session.FinishRun(std::move(outputs));
  if (!run.ok()) return run.status();
  result.run = *std::move(run);
  result.partial = result.run.measurement.tracking().gaps_size() > 0;
  result.interrupted = result.run.measurement.metadata().interrupted();
  return result;
}

absl::StatusOr<ExternalRunResult> MeasureFinishedRun(
    absl::string_view backend, const std::function<absl::StatusOr<RawRun>()>& read,
    SessionOptions session) {
  session.checkpoint_interval = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<MeasurementSession>> started =
      MeasurementSession::StartRecording(backend, std::move(session));
  if (!started.ok()) return started.status();
  ExternalRunResult result;
  result.session = *std::move(started);
  absl::StatusOr<RawRun> record = read();
  if (!record.ok()) return record.status();
  RunOutputs outputs;
  outputs.engine_record = *std::move(record);
  outputs.engine_record_frames_the_run = true;
  absl::StatusOr<MeasuredRun> run = result.session->FinishRun(std::move(outputs));
  if (!run.ok()) return run.status();
  result.run = *std::move(run);
  result.partial = result.run.measurement.tracking().gaps_size() > 0;
  result.interrupted = result.run.measurement.metadata().interrupted();
  return result;
}

}  // namespace roastcoffea
