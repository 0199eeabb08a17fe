#include "backends/dask/worker_timeline.h"

#include <utility>

namespace roastcoffea::dask {

void WorkerTimeline::Append(int64_t time_unix_ns, const WorkerSnapshot& w, const Extra& extra) {
  auto [it, inserted] = index_.try_emplace(w.address, series_.size());
  if (inserted) {
    series_.emplace_back();
    series_.back().set_worker(w.address);
    series_.back().set_host(w.host);
    series_.back().set_kind(v1::SERIES_KIND_SAMPLED);
    columns_.emplace_back();
  }
  v1::WorkerSeries& s = series_[it->second];
  Columns& has = columns_[it->second];
  s.add_time_unix_ns(time_unix_ns);
  s.add_memory_bytes(w.memory_bytes);
  s.add_memory_limit_bytes(w.memory_limit_bytes);
  s.add_cores(w.nthreads);
  s.add_active_tasks(extra.active_tasks);
  s.add_executing_tasks(w.executing_tasks);
  s.add_managed_bytes(w.managed_bytes);
  s.add_cpu_percent(w.cpu_percent);
  s.add_last_seen_unix_seconds(w.last_seen_unix_seconds);
  // A column goes for good at the first sample without it.
  has.occupancy = has.occupancy && extra.occupancy_seconds.has_value();
  if (has.occupancy) {
    s.add_occupancy_seconds(*extra.occupancy_seconds);
  } else {
    s.clear_occupancy_seconds();
  }
  has.spilled = has.spilled && w.spilled_bytes.has_value();
  if (has.spilled) {
    s.add_spilled_bytes(*w.spilled_bytes);
  } else {
    s.clear_spilled_bytes();
  }
  has.network = has.network && w.network_read_bytes_per_second.has_value() &&
                w.network_write_bytes_per_second.has_value();
  if (has.network) {
    s.add_network_read_bytes_per_second(*w.network_read_bytes_per_second);
    s.add_network_write_bytes_per_second(*w.network_write_bytes_per_second);
  } else {
    s.clear_network_read_bytes_per_second();
    s.clear_network_write_bytes_per_second();
  }
  has.disk = has.disk && w.disk_read_bytes_per_second.has_value() &&
             w.disk_write_bytes_per_second.has_value();
  if (has.disk) {
    s.add_disk_read_bytes_per_second(*w.disk_read_bytes_per_second);
    s.add_disk_write_bytes_per_second(*w.disk_write_bytes_per_second);
  } else {
    s.clear_disk_read_bytes_per_second();
    s.clear_disk_write_bytes_per_second();
  }
  ++samples_;
}

std::vector<v1::WorkerSeries> WorkerTimeline::TakeSegment() {
  std::vector<v1::WorkerSeries> taken;
  taken.reserve(series_.size());
  for (v1::WorkerSeries& s : series_) {
    v1::WorkerSeries empty;
    empty.set_worker(s.worker());
    empty.set_host(s.host());
    empty.set_kind(s.kind());
    taken.push_back(std::exchange(s, std::move(empty)));
  }
  samples_ = 0;
  return taken;
}

int64_t WorkerTimeline::SpaceUsedBytes() const {
  int64_t bytes = static_cast<int64_t>(series_.capacity() * sizeof(v1::WorkerSeries));
  for (const v1::WorkerSeries& s : series_) {
    bytes += static_cast<int64_t>(s.SpaceUsedLong() - sizeof(v1::WorkerSeries));
  }
  return bytes;
}

}  // namespace roastcoffea::dask
