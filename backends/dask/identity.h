// Parsing of the scheduler's `identity` reply (docs/dask-protocol.md §4.1) into per-worker
// snapshots.
//
// Reads the fields of every version from 2022.10 to today: task counts from
// `metrics.task_counts` (missing states are 0) or the older top-level `executing`; spilled
// bytes from `spilled_bytes.disk` (or `spilled_nbytes`); network and disk rates from
// `host_net_io`/`host_disk_io` (or the older `read_bytes`…); per-heartbeat fine-metric digests
// from `digests_total_since_heartbeat` (≥ 2023.4) with array labels.
// Every text taken from the reply (addresses, names, digest labels) is the peer's: cut to 200
// bytes and escaped (io/untrusted_json.h's EchoedText) before it reaches a warning or a
// measurement.
// Thread-safety: pure function. Cost: linear in the reply.
#ifndef ROASTCOFFEA_BACKENDS_DASK_IDENTITY_H_
#define ROASTCOFFEA_BACKENDS_DASK_IDENTITY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

// One `["execute", prefix, activity, unit]`-style digest entry (gather-dep and others have no
// prefix: task_prefix is empty then).
struct DigestEntry {
  std::string context;
  std::string task_prefix;
  std::string activity;
  std::string unit;
  double value = 0;
};

struct WorkerSnapshot {
  std::string address;
  std::string host;
  std::string name;
  std::string status;
  double nthreads = 0;
  double memory_limit_bytes = 0;
  double last_seen_unix_seconds = 0;
  double memory_bytes = 0;
  double cpu_percent = 0;
  double managed_bytes = 0;
  double executing_tasks = 0;
  // Tasks the worker knows about that are executing, ready or waiting on it.
  double worker_side_active_tasks = 0;
  std::optional<double> spilled_bytes;
  std::optional<double> network_read_bytes_per_second;
  std::optional<double> network_write_bytes_per_second;
  std::optional<double> disk_read_bytes_per_second;
  std::optional<double> disk_write_bytes_per_second;
  std::vector<DigestEntry> digests;
  // The reply carries digests_total_since_heartbeat (distributed ≥ 2023.4), even if empty.
  bool has_digests = false;
};

struct SchedulerSnapshot {
  std::string scheduler_id;
  std::string address;
  std::vector<WorkerSnapshot> workers;  // in the reply's order
};

// InvalidArgument naming the field for a reply that is not an identity map or a worker entry
// without an address key, nthreads or last_seen of the wrong type.
absl::StatusOr<SchedulerSnapshot> ParseIdentity(const Value& reply);

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_IDENTITY_H_
