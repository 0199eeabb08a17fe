// The scheduler's task stream (`get_task_stream`, dask-protocol.md §4.2): parsing records and
// reading the stream incrementally without losing or double-counting records.
//
// TaskStreamCursor reads each record once. On servers with `start_index` (≥ 2026.6.0) the
// next request asks for records from the global index on. Older servers only have `start`
// (a bisection on stop times, which are not sorted in the buffer: it can skip records) and
// `count` (the last `count` records, in append order): the cursor asks for the tail, a little
// longer than the last poll's new records, and keeps what follows the newest record it already
// has (its anchor: key, worker, first start and last stop). When the anchor is not in a full
// reply, more records arrived than asked for: it asks again for four times as many (up to the
// scheduler's buffer), so nothing is skipped and nothing is counted twice.
// Thread-safety: not thread-safe. Cost: O(records returned) per batch; O(1) memory.
#ifndef ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
#define ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_

#include <algorithm>
#include <cstdint>
#include <optional>
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
  // max_count: the scheduler's buffer (distributed.scheduler.dashboard.tasks.task-stream-length).
  explicit TaskStreamCursor(int64_t max_count = 100000)
      : max_count_(max_count), count_(std::min<int64_t>(16, max_count)) {}

  // Extra arguments for the next get_task_stream request: {"start_index": i}, {"count": c}, or
  // none before the first batch (the whole buffer).
  Value NextRequestArguments(bool use_start_index) const;

  // Keeps the records of `batch` not seen before, in order, and advances the cursor.
  // `index_after` is the server's index after the batch (start_index mode), if known. In tail
  // mode, when the batch cannot be joined to what was read, nothing is kept and needs_retry()
  // is true: ask again at once (NextRequestArguments asks for more).
  std::vector<TaskRecord> Accept(std::vector<TaskRecord> batch,
                                 std::optional<int64_t> index_after = std::nullopt);
  bool needs_retry() const { return needs_retry_; }
  // Tail mode could not join a reply even with the whole buffer: records were dropped.
  bool overran() const { return overran_; }

  // Ignore records that finished before `unix_seconds` (the run's start): the stream may hold
  // records of earlier work when another client installed it first.
  void StartAt(double unix_seconds) { start_unix_seconds_ = unix_seconds; }

  // After a scheduler restart the new scheduler's stream starts empty.
  void ResetForNewScheduler();

  int64_t next_index() const { return next_index_; }
  int64_t next_count() const { return count_; }

 private:
  using Anchor = std::tuple<std::string, std::string, double, double>;
  static Anchor AnchorOf(const TaskRecord& r);

  int64_t max_count_;
  double start_unix_seconds_ = 0;
  int64_t next_index_ = 0;
  std::optional<Anchor> anchor_;  // the newest record read (tail mode)
  int64_t count_;
  bool needs_retry_ = false;
  bool overran_ = false;
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
