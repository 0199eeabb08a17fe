// DaskMetricsBackend: the heartbeat watcher and the cumulative totals (see dask_backend.h).
#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/dask/dask_backend.h"
#include "backends/dask/dask_backend_time.h"

namespace roastcoffea {

using dask_backend_internal::NowUnixNs;

double DaskMetricsBackend::HeartbeatPeriodNow() const {
  return dask::HeartbeatPeriodSeconds(counts_.empty() ? 1 : counts_.back());
}

std::map<std::string, double> DaskMetricsBackend::IngestHeartbeats(
    std::vector<dask::WorkerSnapshot>& workers, int64_t observed_unix_ns) {
  std::map<std::string, double> last_seen;
  const double period = dask::HeartbeatPeriodSeconds(static_cast<int>(workers.size()));
  for (dask::WorkerSnapshot& w : workers) {
    last_seen[w.address] = w.last_seen_unix_seconds;
    digests_seen_ = digests_seen_ || w.has_digests;
    auto [it, first] = digest_last_seen_.try_emplace(w.address, w.last_seen_unix_seconds);
    // Both pollers read identity: only a later heartbeat is new (each is taken once).
    if (!first && w.last_seen_unix_seconds <= it->second) continue;
    HeartbeatEvent e;
    e.observed_unix_ns = observed_unix_ns;
    e.last_seen = w.last_seen_unix_seconds;
    e.worker = w.address;
    e.missed_before =
        first ? 0 : dask::MissedHeartbeats(w.last_seen_unix_seconds - it->second, period);
    it->second = w.last_seen_unix_seconds;
    e.digests = std::move(w.digests);
    w.digests.clear();
    heartbeats_.push_back(std::move(e));
  }
  return last_seen;
}

absl::StatusOr<dask::SchedulerSnapshot> DaskMetricsBackend::HeartbeatIdentity() {
  if (hb_comm_ == nullptr || hb_comm_->broken()) {
    hb_comm_.reset();
    if (options_.clock->Monotonic() < hb_next_connect_) {
      return absl::UnavailableError("heartbeat connection: waiting to reconnect");
    }
    absl::StatusOr<std::unique_ptr<dask::DaskComm>> comm =
        dask::DaskComm::Connect(address_, CommOptionsWithEnd());
    if (!comm.ok()) {
      hb_next_connect_ = options_.clock->Monotonic() + options_.reconnect_max_backoff;
      return comm.status();
    }
    hb_comm_ = *std::move(comm);
  }
  absl::StatusOr<dask::Value> reply = hb_comm_->Call("identity");
  if (!reply.ok()) return reply.status();
  return dask::ParseIdentity(*reply);
}

absl::StatusOr<dask::CumulativeExecuting> DaskMetricsBackend::ReadCumulative() {
  std::lock_guard<std::mutex> lock(hb_mutex_);
  if (hb_comm_ == nullptr || hb_comm_->broken()) {
    hb_comm_.reset();
    absl::StatusOr<std::unique_ptr<dask::DaskComm>> comm =
        dask::DaskComm::Connect(address_, CommOptionsWithEnd());
    if (!comm.ok()) return comm.status();
    hb_comm_ = *std::move(comm);
  }
  absl::StatusOr<dask::Value> reply =
      hb_comm_->Call("get_cluster_state", dask::ClusterStateRequestArgs());
  if (!reply.ok()) return reply.status();
  return dask::ParseCumulativeExecuting(*reply);
}

void DaskMetricsBackend::HeartbeatLoop() {
  for (;;) {
    double period;
    bool watch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      period = HeartbeatPeriodNow();
      watch = digests_seen_;  // before 2023.4 there is nothing a heartbeat could lose
    }
    // A third of the period, whatever the sampling interval: a late poll still sees every
    // heartbeat, whose digests cover only the time since the previous one (README, "Dask
    // polling").
    const absl::Duration wait = std::max(absl::Milliseconds(20), absl::Seconds(period / 3));
    Clock& clock = *options_.clock;
    if (clock.WaitUntil(clock.Monotonic() + wait, stop_heartbeat_watcher_)) return;
    if (!watch) continue;
    const int64_t asked = NowUnixNs();
    absl::StatusOr<dask::SchedulerSnapshot> snapshot;
    {
      std::lock_guard<std::mutex> lock(hb_mutex_);
      snapshot = HeartbeatIdentity();
    }
    if (!snapshot.ok()) continue;  // the main poller reports losses and bad replies
    std::lock_guard<std::mutex> lock(mutex_);
    IngestHeartbeats(snapshot->workers, asked);
  }
}

}  // namespace roastcoffea
