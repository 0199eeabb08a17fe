#include "tools/dask_collect.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/dask/dask_backend.h"
#include "collector/measurement_session.h"

ABSL_FLAG(std::string, scheduler, "",
          "--backend=dask: address of the Dask scheduler, tcp://HOST:PORT.");
ABSL_FLAG(double, dask_connect_timeout, roastcoffea::DaskConfig{}.connect_timeout,
          "--backend=dask: seconds to connect to the scheduler and complete the handshake, in all "
          "(> 0).");
ABSL_FLAG(double, dask_read_timeout, roastcoffea::DaskConfig{}.read_timeout,
          "--backend=dask: seconds one request and its whole reply may take (> 0).");
ABSL_FLAG(int, dask_max_message_mib, roastcoffea::DaskConfig{}.max_message_mib,
          "--backend=dask: largest message accepted from the scheduler, in MiB (1..65536).");
ABSL_FLAG(bool, dask_task_stream, roastcoffea::DaskConfig{}.task_stream,
          "--backend=dask: read the task stream (fine metrics per task prefix and worker).");
ABSL_FLAG(bool, dask_occupancy, roastcoffea::DaskConfig{}.occupancy,
          "--backend=dask: read per-worker occupancy through the scheduler's dump_state.");
ABSL_FLAG(bool, dask_profiles, roastcoffea::DaskConfig{}.profiles,
          "--backend=dask: at the end, read each worker's statistical profile of the run "
          "(--nodask_profiles: do not).");
ABSL_FLAG(std::vector<std::string>, dask_profile_prefixes,
          roastcoffea::DaskConfig{}.profile_prefixes,
          "--backend=dask: task prefixes (comma-separated, e.g. process,load) that get a "
          "per-worker profile of their own, from which each worker's profile of all tasks is "
          "rebuilt; * (the default) stands for the prefixes the task stream saw during the run "
          "(the 16 with the most compute time); empty (--dask_profile_prefixes=): none.");
ABSL_FLAG(double, dask_profile_timeout, roastcoffea::DaskConfig{}.profile_timeout,
          "--backend=dask: seconds the end-of-run profile fetch may take in all (every call, "
          "every worker; > 0); what is not read by then is left out with a warning.");
ABSL_FLAG(double, dask_end_timeout, roastcoffea::DaskConfig{}.end_timeout,
          "--backend=dask: seconds the end of tracking (the last poll, the spans' last heartbeats, "
          "the profile fetch) may take after --duration, however slowly the scheduler answers "
          "(>= 0); 0: max(2, 10 % of the tracked time). What is cut short is a warning.");
ABSL_FLAG(double, dask_profile_interval, roastcoffea::DaskConfig{}.profile_interval,
          "--backend=dask: the workers' distributed.worker.profile.interval in seconds (> 0); "
          "no read-only request reports it.");
ABSL_FLAG(double, dask_reconnect_max_backoff, roastcoffea::DaskConfig{}.reconnect_max_backoff,
          "--backend=dask: longest wait in seconds between reconnection attempts (> 0).");

namespace roastcoffea {
namespace {

bool PositiveFinite(double seconds) { return std::isfinite(seconds) && seconds > 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeDaskBackend(const DaskConfig& config) {
  std::vector<std::string> problems;
  DaskBackendOptions options;
  options.scheduler_address = config.scheduler;
  if (options.scheduler_address.empty()) {
    problems.push_back("--scheduler is required with --backend=dask (e.g. tcp://127.0.0.1:8786)");
  }
  const double connect = config.connect_timeout;
  const double read = config.read_timeout;
  const double backoff = config.reconnect_max_backoff;
  const int max_mib = config.max_message_mib;
  if (!PositiveFinite(connect)) {
    problems.push_back(absl::StrCat("--dask_connect_timeout must be > 0 seconds, got ", connect));
  }
  if (!PositiveFinite(read)) {
    problems.push_back(absl::StrCat("--dask_read_timeout must be > 0 seconds, got ", read));
  }
  if (!PositiveFinite(backoff)) {
    problems.push_back(
        absl::StrCat("--dask_reconnect_max_backoff must be > 0 seconds, got ", backoff));
  }
  const std::vector<std::string>& prefixes = config.profile_prefixes;
  for (const std::string& prefix : prefixes) {
    if (prefix.empty()) {
      problems.push_back(absl::StrCat("--dask_profile_prefixes has an empty prefix: '",
                                      absl::StrJoin(prefixes, ","), "'"));
      break;
    }
  }
  const double profile_timeout = config.profile_timeout;
  if (!PositiveFinite(profile_timeout)) {
    problems.push_back(
        absl::StrCat("--dask_profile_timeout must be > 0 seconds, got ", profile_timeout));
  }
  const double end_timeout = config.end_timeout;
  if (!(end_timeout == 0 || PositiveFinite(end_timeout))) {
    problems.push_back(absl::StrCat("--dask_end_timeout must be >= 0 seconds, got ", end_timeout));
  }
  const double profile_interval = config.profile_interval;
  if (!PositiveFinite(profile_interval)) {
    problems.push_back(
        absl::StrCat("--dask_profile_interval must be > 0 seconds, got ", profile_interval));
  }
  if (max_mib < 1 || max_mib > 65536) {
    problems.push_back(absl::StrCat("--dask_max_message_mib must be in 1..65536, got ", max_mib));
  }
  if (problems.empty()) {
    options.comm.connect_timeout = absl::Seconds(connect);
    options.comm.read_timeout = absl::Seconds(read);
    // An interrupted run stops waiting for the scheduler (a connect, a reply, the profiles).
    options.comm.give_up = SessionShouldGiveUp;
    options.profile_fetch_timeout = absl::Seconds(profile_timeout);
    options.end_timeout = absl::Seconds(end_timeout);
    options.comm.frame_limits.max_message_bytes = static_cast<size_t>(max_mib) << 20;
    options.reconnect_max_backoff = absl::Seconds(backoff);
    options.reconnect_initial_backoff =
        std::min(options.reconnect_initial_backoff, options.reconnect_max_backoff);
    options.read_task_stream = config.task_stream;
    options.read_occupancy = config.occupancy;
    options.read_profiles = config.profiles;
    options.profile_task_prefixes = prefixes;
    options.profile_interval_seconds = profile_interval;
    absl::StatusOr<std::unique_ptr<DaskMetricsBackend>> backend =
        DaskMetricsBackend::Create(std::move(options));
    if (backend.ok()) return std::unique_ptr<AbstractMetricsBackend>(*std::move(backend));
    problems.push_back(absl::StrCat("--scheduler: ", backend.status().message()));
  }
  return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
}

}  // namespace roastcoffea
