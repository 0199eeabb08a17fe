#include "backends/dask/task_stream.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/dask/key_split.h"

namespace roastcoffea::dask {

absl::StatusOr<std::vector<TaskRecord>> ParseTaskStream(const Value& reply) {
  if (!reply.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("get_task_stream reply is not an array: ", reply.DebugString(80)));
  }
  std::vector<TaskRecord> records;
  records.reserve(reply.size());
  for (size_t i = 0; i < reply.size(); ++i) {
    const Value& r = reply.items()[i];
    const Value* key = r.Find("key");
    const Value* worker = r.Find("worker");
    const Value* startstops = r.Find("startstops");
    if (key == nullptr || worker == nullptr || !worker->is_str() || startstops == nullptr ||
        !startstops->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "task stream record ", i, " lacks key, worker (str) or startstops (array): ",
          r.DebugString(120)));
    }
    TaskRecord record;
    record.key = KeyToString(*key);
    record.prefix = KeySplit(*key);
    record.worker = worker->text();
    if (const Value* status = r.Find("status"); status != nullptr && status->is_str()) {
      record.status = status->text();
    }
    if (const Value* nbytes = r.Find("nbytes"); nbytes != nullptr) {
      record.nbytes = nbytes->AsDouble().value_or(0);
    }
    if (const Value* text = r.Find("exception_text"); text != nullptr && text->is_str()) {
      record.exception_text = text->text();
    }
    for (const Value& ss : startstops->items()) {
      const Value* action = ss.Find("action");
      const Value* start = ss.Find("start");
      const Value* stop = ss.Find("stop");
      if (action == nullptr || !action->is_str() || start == nullptr || stop == nullptr ||
          !start->AsDouble().has_value() || !stop->AsDouble().has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "task stream record ", i, " (", record.key,
            ") has a startstop without str action and numeric start/stop: ",
            ss.DebugString(120)));
      }
      StartStop entry;
      entry.action = action->text();
      entry.start_unix_seconds = *start->AsDouble();
      entry.stop_unix_seconds = *stop->AsDouble();
      if (const Value* source = ss.Find("source"); source != nullptr && source->is_str()) {
        entry.source = source->text();
      }
      record.last_stop_unix_seconds =
          std::max(record.last_stop_unix_seconds, entry.stop_unix_seconds);
      record.startstops.push_back(std::move(entry));
    }
    records.push_back(std::move(record));
  }
  return records;
}

Value TaskStreamCursor::NextRequestArguments(bool use_start_index) const {
  Value args = Value::Map();
  if (use_start_index) {
    args.Insert(Value::Str("start_index"), Value::Int(next_index_));
  } else if (any_) {
    args.Insert(Value::Str("start"), Value::Float(max_stop_ - overlap_seconds_));
  }
  return args;
}

std::vector<TaskRecord> TaskStreamCursor::Accept(std::vector<TaskRecord> batch,
                                                 std::optional<int64_t> index_after) {
  std::vector<TaskRecord> fresh;
  if (index_after.has_value()) {
    // start_index mode: the server already skipped what we saw.
    next_index_ = *index_after;
    fresh = std::move(batch);
  } else {
    for (TaskRecord& record : batch) {
      auto id = std::make_tuple(record.last_stop_unix_seconds, record.key, record.worker);
      if (any_ && record.last_stop_unix_seconds < max_stop_ - overlap_seconds_) continue;
      if (!seen_.insert(std::move(id)).second) continue;
      fresh.push_back(std::move(record));
    }
  }
  for (const TaskRecord& record : fresh) {
    max_stop_ = any_ ? std::max(max_stop_, record.last_stop_unix_seconds)
                     : record.last_stop_unix_seconds;
    any_ = true;
  }
  // Forget identities older than twice the overlap: they can no longer be returned.
  const double horizon = max_stop_ - 2 * overlap_seconds_;
  while (!seen_.empty() && std::get<0>(*seen_.begin()) < horizon) seen_.erase(seen_.begin());
  return fresh;
}

void TaskStreamCursor::StartAt(double unix_seconds) {
  any_ = true;
  max_stop_ = unix_seconds + overlap_seconds_;
}

void TaskStreamCursor::ResetForNewScheduler() {
  // Keep max_stop_ and seen_: a restarted scheduler's records are all newer, and keeping the
  // identities costs nothing. Only the index restarts.
  next_index_ = 0;
}

}  // namespace roastcoffea::dask
