#include "backends/dask/task_stream.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/dask/key_split.h"
#include "io/untrusted_json.h"

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
      return absl::InvalidArgumentError(
          absl::StrCat("task stream record ", i,
                       " lacks key, worker (str) or startstops (array): ", r.DebugString(120)));
    }
    TaskRecord record;
    record.key = KeyToString(*key);
    // The key stays whole (records are joined by it); what is shown or saved is cut.
    record.prefix = EchoedText(KeySplit(*key));
    record.worker = EchoedText(worker->text());
    if (const Value* status = r.Find("status"); status != nullptr && status->is_str()) {
      record.status = EchoedText(status->text());
    }
    if (const Value* nbytes = r.Find("nbytes"); nbytes != nullptr) {
      record.nbytes = nbytes->AsDouble().value_or(0);
    }
    if (const Value* text = r.Find("exception_text"); text != nullptr && text->is_str()) {
      record.exception_text = EchoedText(text->text());
    }
    for (const Value& ss : startstops->items()) {
      const Value* action = ss.Find("action");
      const Value* start = ss.Find("start");
      const Value* stop = ss.Find("stop");
      if (action == nullptr || !action->is_str() || start == nullptr || stop == nullptr ||
          !start->AsDouble().has_value() || !stop->AsDouble().has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "task stream record ", i, " (", EchoedText(record.key),
            ") has a startstop without str action and numeric start/stop: ", ss.DebugString(120)));
      }
      StartStop entry;
      entry.action = EchoedText(action->text());
      entry.start_unix_seconds = *start->AsDouble();
      entry.stop_unix_seconds = *stop->AsDouble();
      if (const Value* source = ss.Find("source"); source != nullptr && source->is_str()) {
        entry.source = EchoedText(source->text());
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
  } else if (anchor_.has_value() && std::isfinite(back_off_seconds_)) {
    args.Insert(
        Value::Str("start"),
        Value::Float(std::min(std::get<3>(*anchor_), recent_min_stop_) - back_off_seconds_));
  }
  return args;
}

TaskStreamCursor::Anchor TaskStreamCursor::AnchorOf(const TaskRecord& r) {
  const double first_start = r.startstops.empty() ? 0 : r.startstops.front().start_unix_seconds;
  return {r.key, r.worker, first_start, r.last_stop_unix_seconds};
}

std::vector<TaskRecord> TaskStreamCursor::Accept(std::vector<TaskRecord> batch,
                                                 std::optional<int64_t> index_after) {
  needs_retry_ = false;
  size_t first_new = 0;
  if (index_after.has_value()) {
    next_index_ = *index_after;  // the server already skipped what we saw
  } else if (anchor_.has_value()) {
    size_t at = batch.size();
    for (size_t i = 0; i < batch.size(); ++i) {  // usually the first record
      if (AnchorOf(batch[i]) == *anchor_) {
        at = i;
        break;
      }
    }
    if (at < batch.size()) {
      first_new = at + 1;
      back_off_seconds_ = 0;
    } else if (std::isfinite(back_off_seconds_)) {
      // The bisection landed after the anchor: reach further back, then take the whole buffer.
      // Workers' stop times are out of order by milliseconds: start close, widen fast.
      back_off_seconds_ = back_off_seconds_ == 0     ? 0.05
                          : back_off_seconds_ < 1000 ? back_off_seconds_ * 4
                                                     : std::numeric_limits<double>::infinity();
      needs_retry_ = true;
      return {};
    } else {
      // Not even in the whole buffer: evicted (or a new stream), so all of it is newer.
      overran_ = overran_ || !batch.empty();
      back_off_seconds_ = 0;
    }
  }
  if (!index_after.has_value() && batch.size() > first_new) {
    constexpr size_t kRecent = 4;
    recent_min_stop_ = batch.back().last_stop_unix_seconds;
    for (size_t i = batch.size() - std::min(kRecent, batch.size()); i < batch.size(); ++i) {
      recent_min_stop_ = std::min(recent_min_stop_, batch[i].last_stop_unix_seconds);
    }
  }
  std::vector<TaskRecord> fresh;
  fresh.reserve(batch.size() - first_new);
  for (size_t i = first_new; i < batch.size(); ++i) {
    if (!index_after.has_value()) anchor_ = AnchorOf(batch[i]);
    if (batch[i].last_stop_unix_seconds < start_unix_seconds_) continue;
    fresh.push_back(std::move(batch[i]));
  }
  return fresh;
}

void TaskStreamCursor::ResetForNewScheduler() {
  next_index_ = 0;
  anchor_.reset();  // the new stream does not hold it; its whole buffer is new
  back_off_seconds_ = 0;
}

}  // namespace roastcoffea::dask
