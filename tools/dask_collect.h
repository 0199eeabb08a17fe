// The `--backend=dask` flags of collect and the factory that turns them into a backend.
//
// Flags (defined in dask_collect.cc):
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
// Thread-safety: call from the main thread after absl::ParseCommandLine.
#ifndef ROASTCOFFEA_TOOLS_DASK_COLLECT_H_
#define ROASTCOFFEA_TOOLS_DASK_COLLECT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "backends/metrics_backend.h"

namespace roastcoffea {

// Builds the Dask backend from the flags. InvalidArgument naming the flag for a bad value
// (every problem listed, one per line). Does not connect: StartTracking does, and fails with
// Unavailable naming the address when the scheduler is unreachable.
absl::StatusOr<std::unique_ptr<AbstractMetricsBackend>> MakeDaskBackendFromFlags();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_DASK_COLLECT_H_
