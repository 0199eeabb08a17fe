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
ABSL_FLAG(double, dask_connect_timeout, 5,
          "--backend=dask: seconds to connect to the scheduler and complete the handshake, in all "
          "(> 0).");
ABSL_FLAG(double, dask_read_timeout, 10,
          "--backend=dask: seconds one request and its whole reply may take (> 0).");
ABSL_FLAG(int, dask_max_message_mib, 256,
          "--backend=dask: largest message accepted from the scheduler, in MiB (1..65536).");
ABSL_FLAG(bool, dask_task_stream, true,
          "--backend=dask: read the task stream (fine metrics per task prefix and worker).");
ABSL_FLAG(bool, dask_occupancy, true,
          "--backend=dask: read per-worker occupancy through the scheduler's dump_state.");
ABSL_FLAG(bool, dask_profiles, true,
          "--backend=dask: at the end, read each worker's statistical profile of the run "
          "(--nodask_profiles: do not).");
ABSL_FLAG(std::vector<std::string>, dask_profile_prefixes, {"*"},
          "--backend=dask: task prefixes (comma-separated, e.g. process,load) that get a "
          "per-worker profile of their own, from which each worker's profile of all tasks is "
          "rebuilt; * (the default) stands for the prefixes the task stream saw during the run "
          "(the 16 with the most compute time); empty (--dask_profile_prefixes=): none.");
ABSL_FLAG(double, dask_profile_timeout, 30,
          "--backend=dask: seconds the end-of-run profile fetch may take in all (every call, "
          "every worker; > 0); what is not read by then is left out with a warning.");
ABSL_FLAG(double, dask_end_timeout, 0,
          "--backend=dask: seconds the end of tracking (the last poll, the spans' last heartbeats, "
          "the profile fetch) may take after --duration, however slowly the scheduler answers "
          "(>= 0); 0: max(2, 10 % of the tracked time). What is cut short is a warning.");
ABSL_FLAG(double, dask_profile_interval, 0.01,
          "--backend=dask: the workers' distributed.worker.profile.interval in seconds (> 0); "
          "no read-only request reports it.");
ABSL_FLAG(double, dask_reconnect_max_backoff, 5,
          "--backend=dask: longest wait in seconds between reconnection attempts (> 0).");

namespace roastcoffea {
namespace {

bool PositiveFinite(double seconds) { return std::isfinite(seconds) && seconds > 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeDaskBackendFromFlags() {
  std::vector<std::string> problems;
  DaskBackendOptions options;
  options.scheduler_address = absl::GetFlag(FLAGS_scheduler);
  if (options.scheduler_address.empty()) {
    problems.push_back("--scheduler is required with --backend=dask (e.g. tcp://127.0.0.1:8786)");
  }
  const double connect = absl::GetFlag(FLAGS_dask_connect_timeout);
  const double read = absl::GetFlag(FLAGS_dask_read_timeout);
  const double backoff = absl::GetFlag(FLAGS_dask_reconnect_max_backoff);
  const int max_mib = absl::GetFlag(FLAGS_dask_max_message_mib);
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
  const std::vector<std::string> prefixes = absl::GetFlag(FLAGS_dask_profile_prefixes);
  for (const std::string& prefix : prefixes) {
    if (prefix.empty()) {
      problems.push_back(absl::StrCat("--dask_profile_prefixes has an empty prefix: '",
                                      absl::StrJoin(prefixes, ","), "'"));
      break;
    }
  }
  const double profile_timeout = absl::GetFlag(FLAGS_dask_profile_timeout);
  if (!PositiveFinite(profile_timeout)) {
    problems.push_back(
        absl::StrCat("--dask_profile_timeout must be > 0 seconds, got ", profile_timeout));
  }
  const double end_timeout = absl::GetFlag(FLAGS_dask_end_timeout);
  if (!(end_timeout == 0 || PositiveFinite(end_timeout))) {
    problems.push_back(absl::StrCat("--dask_end_timeout must be >= 0 seconds, got ", end_timeout));
  }
  const double profile_interval = absl::GetFlag(FLAGS_dask_profile_interval);
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
    options.read_task_stream = absl::GetFlag(FLAGS_dask_task_stream);
    options.read_occupancy = absl::GetFlag(FLAGS_dask_occupancy);
    options.read_profiles = absl::GetFlag(FLAGS_dask_profiles);
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
