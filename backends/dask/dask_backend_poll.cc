// DaskMetricsBackend: one poll of the scheduler (see dask_backend.h).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/dask/dask_backend.h"
#include "backends/dask/dask_backend_time.h"
#include "backends/dask/key_split.h"
#include "io/untrusted_json.h"

namespace roastcoffea {
namespace {

using dask_backend_internal::FormatUnixNs;
using dask_backend_internal::NowUnixNs;

// The `dump_state` exclude list that leaves only per-worker scheduler state
// (docs/dask-protocol.md §4.6).
dask::Value DumpStateWorkersArgs() {
  dask::Value exclude = dask::Value::Array();
  for (const char* name :
       {"tasks", "transition_log", "task_groups", "clients", "events", "extensions", "has_what",
        "needs_what", "actors", "versions", "long_running", "scheduler", "memory", "processing",
        "executing", "bandwidth", "metrics", "extra", "task_prefix_count"}) {
    exclude.Append(dask::Value::Str(name));
  }
  dask::Value args = dask::Value::Map();
  args.Insert(dask::Value::Str("exclude"), std::move(exclude));
  return args;
}

}  // namespace

absl::Status DaskMetricsBackend::PollConnected() {
  const int64_t asked = NowUnixNs();
  absl::StatusOr<dask::Value> reply = comm_->Call("identity");
  if (!reply.ok()) return reply.status();
  const int64_t now = NowUnixNs();
  absl::StatusOr<dask::SchedulerSnapshot> snapshot = dask::ParseIdentity(*reply);
  if (!snapshot.ok()) return snapshot.status();

  PollExtras extras;
  if (absl::Status s = ReadProcessing(extras); !s.ok()) return s;
  if (absl::Status s = ReadOccupancy(extras); !s.ok()) return s;
  if (options_.read_spans && spans_enabled_) {
    absl::Status s = ReadWorkloadSpans();
    if (!s.ok()) return s;
  }
  std::vector<dask::TaskRecord> fresh;
  if (absl::Status s = ReadTaskStreamTail(fresh); !s.ok()) return s;

  std::lock_guard<std::mutex> lock(mutex_);
  UpdateLiveProgress(snapshot->workers, extras.running_by_prefix, fresh);
  IngestHeartbeats(snapshot->workers, asked);
  RecordWorkers(now, snapshot->workers, extras);
  for (dask::TaskRecord& r : fresh) records_.push_back(std::move(r));
  last_good_poll_unix_ns_ = now;
  return absl::OkStatus();
}

absl::Status DaskMetricsBackend::ReadProcessing(PollExtras& extras) {
  absl::StatusOr<dask::Value> p = comm_->Call("processing");
  if (!p.ok()) return comm_->broken() ? p.status() : absl::OkStatus();
  if (!p->is_map()) return absl::OkStatus();
  for (size_t i = 0; i < p->size(); ++i) {
    if (p->key(i).is_str()) {
      extras.processing[p->key(i).text()] = static_cast<double>(p->value(i).size());
    }
    const dask::Value& keys = p->value(i);
    if (!keys.is_array()) continue;
    for (const dask::Value& key : keys.items()) {
      ++extras.running_by_prefix[EchoedText(dask::KeySplit(key))];
    }
  }
  return absl::OkStatus();
}

absl::Status DaskMetricsBackend::ReadOccupancy(PollExtras& extras) {
  if (!options_.read_occupancy || !occupancy_enabled_) return absl::OkStatus();
  absl::StatusOr<dask::Value> state = comm_->Call("dump_state", DumpStateWorkersArgs());
  if (!state.ok()) {
    if (comm_->broken()) return state.status();
    occupancy_enabled_ = false;
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("Worker occupancy is not measured: dump_state failed (",
                            state.status().message(), ")."));
    return absl::OkStatus();
  }
  const dask::Value* ws = state->Find("workers");
  if (ws == nullptr || !ws->is_map()) return absl::OkStatus();
  for (size_t i = 0; i < ws->size(); ++i) {
    const dask::Value* occ = ws->value(i).Find("occupancy");
    if (ws->key(i).is_str() && occ != nullptr && occ->AsDouble().has_value()) {
      extras.occupancy[ws->key(i).text()] = *occ->AsDouble();
    }
  }
  return absl::OkStatus();
}

absl::Status DaskMetricsBackend::ReadTaskStreamTail(std::vector<dask::TaskRecord>& fresh) {
  // A tail reply that cannot be joined to what was read is asked again, bigger (task_stream.h).
  for (int attempt = 0; options_.read_task_stream && task_stream_enabled_ && attempt < 16;
       ++attempt) {
    absl::StatusOr<dask::Value> stream =
        comm_->Call("get_task_stream", cursor_.NextRequestArguments(use_start_index_));
    if (!stream.ok()) {
      if (comm_->broken()) return stream.status();
      task_stream_enabled_ = false;
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The task stream is not read: get_task_stream failed (",
                              stream.status().message(), ")."));
      break;
    }
    absl::StatusOr<std::vector<dask::TaskRecord>> records = dask::ParseTaskStream(*stream);
    if (!records.ok()) {
      task_stream_enabled_ = false;
      std::lock_guard<std::mutex> lock(mutex_);
      AddWarning(absl::StrCat("The task stream is not read: ", records.status().message()));
      break;
    }
    std::optional<int64_t> index_after;
    if (use_start_index_) {
      index_after = cursor_.next_index() + static_cast<int64_t>(records->size());
    }
    fresh = cursor_.Accept(*std::move(records), index_after);
    if (!cursor_.needs_retry()) break;
  }
  if (cursor_.overran()) {
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(
        "The scheduler's task stream turned over its buffer between two polls: some task "
        "records (and their task-stream fine metrics) are missing.");
  }
  return absl::OkStatus();
}

void DaskMetricsBackend::RecordWorkers(int64_t now, std::vector<dask::WorkerSnapshot>& workers,
                                       const PollExtras& extras) {
  count_times_.push_back(now);
  counts_.push_back(static_cast<int32_t>(workers.size()));
  std::set<std::string> now_present;
  for (dask::WorkerSnapshot& w : workers) {
    now_present.insert(w.address);
    auto [it, inserted] = workers_.try_emplace(w.address);
    WorkerTrack& track = it->second;
    if (inserted) {
      worker_order_.push_back(w.address);
      track.host = w.host;
      if (!first_identity_) {
        AddWarning(
            absl::StrCat("Dask worker ", w.address, " joined mid-run at ", FormatUnixNs(now), "."));
      }
    } else if (!present_workers_.empty() && present_workers_.count(w.address) == 0 &&
               !first_identity_) {
      AddWarning(absl::StrCat("Dask worker ", w.address, " came back at ", FormatUnixNs(now), "."));
    }
    if (w.last_seen_unix_seconds == track.last_seen) continue;  // stale heartbeat
    track.last_seen = w.last_seen_unix_seconds;
    track.name = w.name;
    if (!w.host.empty()) track.host = w.host;
    track.nthreads = w.nthreads;
    track.memory_limit_bytes = w.memory_limit_bytes;
    track.sampled = true;
    dask::WorkerTimeline::Extra extra;
    auto p = extras.processing.find(w.address);
    extra.active_tasks = p != extras.processing.end() ? p->second : w.worker_side_active_tasks;
    if (auto o = extras.occupancy.find(w.address); o != extras.occupancy.end()) {
      extra.occupancy_seconds = o->second;
    }
    timeline_.Append(now, w, extra);
  }
  for (const std::string& gone : present_workers_) {
    if (now_present.count(gone) == 0) {
      AddWarning(absl::StrCat("Dask worker ", gone, " left mid-run (gone from the scheduler at ",
                              FormatUnixNs(now), ")."));
    }
  }
  present_workers_ = std::move(now_present);
  first_identity_ = false;
}

void DaskMetricsBackend::UpdateLiveProgress(const std::vector<dask::WorkerSnapshot>& workers,
                                            const std::map<std::string, int64_t>& running_by_prefix,
                                            const std::vector<dask::TaskRecord>& fresh) {
  live_.workers = static_cast<int64_t>(workers.size());
  live_.cores = live_.memory_bytes = live_.memory_limit_bytes = 0;
  for (const dask::WorkerSnapshot& w : workers) {
    *live_.cores += w.nthreads;
    *live_.memory_bytes += w.memory_bytes;
    *live_.memory_limit_bytes += w.memory_limit_bytes;
  }
  for (auto& [prefix, counts] : live_.tasks_by_prefix) counts.running = 0;
  for (const auto& [prefix, running] : running_by_prefix) {
    live_.tasks_by_prefix[prefix].running = running;
  }
  for (const dask::TaskRecord& r : fresh) {
    ++(r.status == "error" ? live_.tasks_by_prefix[r.prefix].failed
                           : live_.tasks_by_prefix[r.prefix].done);
  }
}

absl::Status DaskMetricsBackend::ReadWorkloadSpans() {
  auto turn_off = [&](absl::string_view why) {
    spans_enabled_ = false;
    std::lock_guard<std::mutex> lock(mutex_);
    AddWarning(absl::StrCat("The workload's Dask spans are not read: ", why, "."));
  };
  absl::StatusOr<dask::Value> reply = comm_->Call("dump_state", dask::TaskGroupsRequestArgs());
  if (!reply.ok()) {
    if (comm_->broken()) return reply.status();
    turn_off(absl::StrCat("dump_state failed (", reply.status().message(), ")"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<dask::TaskGroupSpan>> groups = dask::ParseTaskGroups(*reply);
  if (!groups.ok()) {
    turn_off(groups.status().message());
    return absl::OkStatus();
  }
  // Task groups without span ids: distributed < 2023.6, which has no spans.
  if (!groups->empty() && groups->front().span_id.empty()) {
    spans_enabled_ = false;
    return absl::OkStatus();
  }
  std::vector<std::string> fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fresh = workload_spans_.AddGroups(*groups);
  }
  if (fresh.empty()) return absl::OkStatus();
  // A new span: its name and parents, while its tasks are alive.
  absl::StatusOr<dask::Value> tasks = comm_->Call("dump_state", dask::TaskAnnotationsRequestArgs());
  if (!tasks.ok()) {
    if (comm_->broken()) return tasks.status();
    turn_off(absl::StrCat("dump_state failed (", tasks.status().message(), ")"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::map<std::string, dask::SpanPath>> paths = dask::ParseTaskSpanPaths(*tasks);
  if (!paths.ok()) {
    turn_off(paths.status().message());
    return absl::OkStatus();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  workload_spans_.AddPaths(*paths);
  return absl::OkStatus();
}

}  // namespace roastcoffea
