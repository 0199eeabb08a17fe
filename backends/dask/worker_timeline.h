// The Dask backend's per-worker samples, kept as columns (one v1::WorkerSeries per worker, in the
// order the workers were first seen) instead of one parsed identity entry per sample: about
// 120 B per worker-sample instead of 849 B (//backends/dask:worker_timeline_benchmark).
//
// A column that some sample of a worker lacks (spilled bytes, network and disk rates, occupancy:
// not every distributed version reports them) is dropped for that worker from then on, so that
// every column kept has one value per time: the rule the series had before.
//
// TakeSegment hands the samples kept so far to the caller (the session's checkpoint, on disk)
// and keeps only the workers' names: memory then holds the samples since the last take.
// MergeTrackingSegment (store/tracking_segments.h) puts segments back together exactly.
//
// Thread-safety: not thread-safe (the backend holds its lock).
#ifndef ROASTCOFFEA_BACKENDS_DASK_WORKER_TIMELINE_H_
#define ROASTCOFFEA_BACKENDS_DASK_WORKER_TIMELINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/dask/identity.h"
#include "schema/measurement.pb.h"

namespace roastcoffea::dask {

class WorkerTimeline {
 public:
  // What the scheduler's other replies add to a worker's identity entry.
  struct Extra {
    double active_tasks = 0;
    std::optional<double> occupancy_seconds;
  };

  void Append(int64_t time_unix_ns, const WorkerSnapshot& worker, const Extra& extra);

  // The series kept (every sample since the last TakeSegment), in first-seen order.
  std::vector<v1::WorkerSeries> TakeSegment();
  // Worker-samples kept now, and their approximate heap bytes.
  int64_t samples() const { return samples_; }
  int64_t SpaceUsedBytes() const;

 private:
  struct Columns {
    bool spilled = true, network = true, disk = true, occupancy = true;
  };
  std::vector<v1::WorkerSeries> series_;
  std::vector<Columns> columns_;
  std::map<std::string, size_t> index_;  // worker address -> series_
  int64_t samples_ = 0;
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_WORKER_TIMELINE_H_
