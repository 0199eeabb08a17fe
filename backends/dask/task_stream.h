// The scheduler's task stream (`get_task_stream`, docs/dask-protocol.md §4.2): parsing records and
// reading the stream incrementally without losing or double-counting records.
//
// TaskStreamCursor reads each record once. On servers with `start_index` (≥ 2026.6.0) the
// next request asks for records from the global index on. Older servers only have `start`,
// which returns the buffer from a bisection on the records' stop times to its end. The buffer
// is in append order, so the cursor asks from the newest record it has (its anchor: key,
// worker, first start, last stop; the request starts at the earliest stop of the last
// few records read) and keeps what follows the anchor in the reply: one record
// is received twice per poll, none is skipped. Stop times are not quite sorted (workers finish
// out of order), so when the bisection lands after the anchor the cursor asks again from
// 0.05 s, 0.2 s, ... earlier, and finally for the whole buffer; an anchor not even there has been
// evicted, so every record in the buffer is newer.
// Thread-safety: not thread-safe. Cost: O(records returned) per batch; O(1) memory.
#ifndef ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
#define ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_

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
  TaskStreamCursor() = default;

  // Extra arguments for the next get_task_stream request: {"start_index": i}, {"start": t}, or
  // none (the whole buffer: the first batch, or the last resort of a join).
  Value NextRequestArguments(bool use_start_index) const;

  // Keeps the records of `batch` not seen before, in order, and advances the cursor.
  // `index_after` is the server's index after the batch (start_index mode), if known. Without
  // it, when the batch does not hold the anchor, nothing is kept and needs_retry() is true: ask
  // again at once (NextRequestArguments reaches further back).
  std::vector<TaskRecord> Accept(std::vector<TaskRecord> batch,
                                 std::optional<int64_t> index_after = std::nullopt);
  bool needs_retry() const { return needs_retry_; }
  // The anchor had left the scheduler's buffer: records between two polls may be missing.
  bool overran() const { return overran_; }

  // Ignore records that finished before `unix_seconds` (the run's start): the stream may hold
  // records of earlier work when another client installed it first.
  void StartAt(double unix_seconds) { start_unix_seconds_ = unix_seconds; }

  // After a scheduler restart the new scheduler's stream starts empty.
  void ResetForNewScheduler();

  int64_t next_index() const { return next_index_; }

 private:
  using Anchor = std::tuple<std::string, std::string, double, double>;
  static Anchor AnchorOf(const TaskRecord& r);

  double start_unix_seconds_ = 0;
  int64_t next_index_ = 0;
  std::optional<Anchor> anchor_;  // the newest record read (start mode)
  // The earliest stop among the last few records read: asking from there, the bisection
  // rarely lands after the anchor although stop times are not sorted.
  double recent_min_stop_ = 0;
  // How far before the anchor's stop the next request starts; infinite: the whole buffer.
  double back_off_seconds_ = 0;
  bool needs_retry_ = false;
  bool overran_ = false;
};

}  // namespace roastcoffea::dask

#endif  // ROASTCOFFEA_BACKENDS_DASK_TASK_STREAM_H_
