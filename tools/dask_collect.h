// The `--backend=dask` flags of collect, their typed config (tools/collect_flags.cc reads the
// flags into it) and the factory that turns the config into a backend.
//
// Flags (defined in dask_collect.cc, declared below for the one reader):
//   --scheduler=tcp://HOST:PORT     the Dask scheduler to track (required for --backend=dask)
//   --dask_connect_timeout=5        seconds to connect and complete the handshake, in all
//   --dask_read_timeout=10          seconds one call may take: the request and the whole reply
//   --dask_max_message_mib=256      cap on one message from the scheduler
//   --dask_task_stream=true         read the task stream (fine metrics per task prefix)
//   --dask_occupancy=true           read per-worker occupancy through dump_state
//   --dask_reconnect_max_backoff=5  seconds, upper bound of the reconnection backoff
//   --dask_profiles=true            read each worker's statistical profile at the end
//   --dask_profile_prefixes=*       task prefixes that get per-worker profiles of their own
//   --dask_profile_timeout=30       seconds the whole end-of-run profile fetch may take
//   --dask_end_timeout=0            seconds the whole end of tracking may take (0: max(2, 10 %))
//   --dask_profile_interval=0.01    the workers' profile sampling interval in seconds
#ifndef ROASTCOFFEA_TOOLS_DASK_COLLECT_H_
#define ROASTCOFFEA_TOOLS_DASK_COLLECT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "backends/metrics_backend.h"

ABSL_DECLARE_FLAG(std::string, scheduler);
ABSL_DECLARE_FLAG(double, dask_connect_timeout);
ABSL_DECLARE_FLAG(double, dask_read_timeout);
ABSL_DECLARE_FLAG(int, dask_max_message_mib);
ABSL_DECLARE_FLAG(bool, dask_task_stream);
ABSL_DECLARE_FLAG(bool, dask_occupancy);
ABSL_DECLARE_FLAG(bool, dask_profiles);
ABSL_DECLARE_FLAG(std::vector<std::string>, dask_profile_prefixes);
ABSL_DECLARE_FLAG(double, dask_profile_timeout);
ABSL_DECLARE_FLAG(double, dask_end_timeout);
ABSL_DECLARE_FLAG(double, dask_profile_interval);
ABSL_DECLARE_FLAG(double, dask_reconnect_max_backoff);

namespace roastcoffea {

// The values of the flags above, as given (MakeDaskBackend checks them). Its defaults are the
// flags' defaults.
struct DaskConfig {
  std::string scheduler;                              // --scheduler
  double connect_timeout = 5;                         // --dask_connect_timeout, seconds
  double read_timeout = 10;                           // --dask_read_timeout, seconds
  int max_message_mib = 256;                          // --dask_max_message_mib
  bool task_stream = true;                            // --dask_task_stream
  bool occupancy = true;                              // --dask_occupancy
  bool profiles = true;                               // --dask_profiles
  std::vector<std::string> profile_prefixes = {"*"};  // --dask_profile_prefixes
  double profile_timeout = 30;                        // --dask_profile_timeout, seconds
  double end_timeout = 0;                             // --dask_end_timeout, seconds
  double profile_interval = 0.01;                     // --dask_profile_interval, seconds
  double reconnect_max_backoff = 5;                   // --dask_reconnect_max_backoff, seconds
};

// Builds the Dask backend from `config`. InvalidArgument naming the flag for a bad value
// (every problem listed, one per line). Does not connect: StartTracking does, and fails with
// Unavailable naming the address when the scheduler is unreachable.
absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeDaskBackend(const DaskConfig& config);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_DASK_COLLECT_H_
