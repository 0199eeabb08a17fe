// The scheduler's task stream (`get_task_stream`, dask-protocol.md §4.2): parsing records and
// reading the stream incrementally without losing or double-counting records.
//
// TaskStreamCursor tracks what was already seen. On servers with `start_index` (≥ 2026.6.0)
// the next request asks for records from the global index on; on older ones it asks for
// records whose last stop is ≥ (latest stop seen − overlap) and drops duplicates by
// (key, worker, last stop). No `count` is sent, so nothing is capped; only the scheduler's own
// ring buffer (100000 records by default) limits how far a slow poller can fall behind, and
// the cursor notices when records were dropped (index jumped) in index mode.
// Thread-safety: not thread-safe. Cost: O(records) per batch; memory O(records in the overlap).
#ifndef ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
#define ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/dask/value.h"

namespace roastcoffea::dask {

struct StartStop {
  std::string action;  // compute, transfer, disk-read, disk-write, deserialize, ...
  double start_unix_seconds = 0;
  double stop_unix_seconds = 0;
  std::string source;  // transfer only: the worker the data came from
};

struct TaskRecord {
  std::string key;     // display form (KeyToString)
  std::string prefix;  // KeySplit(key)
  std::string worker;
  std::string status;  // "OK" or "error"
  std::vector<StartStop> startstops;
  double nbytes = 0;
  std::string exception_text;  // erred records
  double last_stop_unix_seconds = 0;
};

// Parses a get_task_stream reply (an array of record maps). InvalidArgument naming the record
// for a non-array reply or a record without key/worker/startstops of the right shape.
absl::StatusOr<std::vector<TaskRecord>> ParseTaskStream(const Value& reply);

class TaskStreamCursor {
 public:
  explicit TaskStreamCursor(double overlap_seconds = 10.0) : overlap_seconds_(overlap_seconds) {}

  // Extra arguments for the next get_task_stream request: {"start": t} or {"start_index": i}
  // (empty before the first batch: the whole buffer).
  Value NextRequestArguments(bool use_start_index) const;

  // Keeps the records of `batch` not seen before, in order, and advances the cursor.
  // `index_after` is the server's index after the batch (start_index mode), if known.
  std::vector<TaskRecord> Accept(std::vector<TaskRecord> batch,
                                 std::optional<int64_t> index_after = std::nullopt);

  // Ignore records that finished before `unix_seconds` (the run's start): the stream may hold
  // records of earlier work when another client installed it first.
  void StartAt(double unix_seconds);

  // After a scheduler restart the new scheduler's stream starts empty.
  void ResetForNewScheduler();

  int64_t next_index() const { return next_index_; }
  size_t seen_in_overlap() const { return seen_.size(); }

 private:
  double overlap_seconds_;
  double max_stop_ = 0;
  bool any_ = false;
  int64_t next_index_ = 0;
  std::set<std::tuple<double, std::string, std::string>> seen_;  // (last stop, key, worker)
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
