#include "backends/chunk_join.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

// Fills `record` (from the instrumentation) with what only the engine's record of the same task
// knows.
void TakeFromEngine(const v1::ChunkRecord& engine, v1::ChunkRecord& record) {
  record.set_attempt(engine.attempt());
  if (record.worker().empty()) record.set_worker(engine.worker());
  if (record.start_unix_ns() == 0 && record.end_unix_ns() == 0) {
    record.set_start_unix_ns(engine.start_unix_ns());
    record.set_end_unix_ns(engine.end_unix_ns());
    record.set_duration_seconds(engine.duration_seconds());
  }
  if (record.cpu_seconds() == 0) record.set_cpu_seconds(engine.cpu_seconds());
  if (record.memory_peak_bytes() == 0) record.set_memory_peak_bytes(engine.memory_peak_bytes());
  // The resource monitor's machine load and the task's submission are the engine's alone.
  if (engine.has_machine_cpus()) {
    record.set_machine_load(engine.machine_load());
    record.set_machine_cpus(engine.machine_cpus());
  }
  if (engine.has_ready_unix_ns()) record.set_ready_unix_ns(engine.ready_unix_ns());
  if (engine.status() == v1::CHUNK_STATUS_FAILED) {
    // The processor returned but the task failed (e.g. a non-zero exit code afterwards), or
    // both saw the failure: keep both accounts.
    record.set_error_text(record.status() == v1::CHUNK_STATUS_FAILED && !record.error_text().empty()
                              ? absl::StrCat(record.error_text(), "; ", engine.error_text())
                              : engine.error_text());
    record.set_status(v1::CHUNK_STATUS_FAILED);
  } else if (!engine.error_text().empty()) {
    // A success after lost attempts: the engine's note says so.
    record.set_error_text(record.error_text().empty()
                              ? engine.error_text()
                              : absl::StrCat(record.error_text(), "; ", engine.error_text()));
  }
}

using ChunkIdentity = std::tuple<std::string, std::string, int64_t, int64_t>;

bool HasIdentity(const v1::ChunkRecord& r) {
  return !r.task_id().empty() && (!r.file().empty() || r.entry_stop() > r.entry_start());
}

// Folds the records of one chunk (indices into `records`, at least two) into the one that
// started last.
v1::ChunkRecord FoldRetries(std::vector<v1::ChunkRecord>& records, std::vector<size_t> group) {
  std::stable_sort(group.begin(), group.end(), [&](size_t a, size_t b) {
    return records[a].start_unix_ns() < records[b].start_unix_ns();
  });
  v1::ChunkRecord last = std::move(records[group.back()]);
  uint32_t attempts = last.attempt() + 1;
  std::vector<std::string> retried;
  std::string earlier_errors;
  for (size_t i = 0; i + 1 < group.size(); ++i) {
    const v1::ChunkRecord& earlier = records[group[i]];
    attempts += earlier.attempt() + 1;
    for (const std::string& id : earlier.retried_task_ids()) retried.push_back(id);
    retried.push_back(earlier.task_id());
    if (!earlier.error_text().empty()) {
      absl::StrAppend(&earlier_errors, earlier_errors.empty() ? "" : "; ", "task ",
                      earlier.task_id(), ": ", earlier.error_text());
    }
  }
  for (const std::string& id : last.retried_task_ids()) retried.push_back(id);
  last.clear_retried_task_ids();
  for (std::string& id : retried) last.add_retried_task_ids(std::move(id));
  last.set_attempt(attempts - 1);
  if (last.status() == v1::CHUNK_STATUS_FAILED && !earlier_errors.empty()) {
    last.set_error_text(absl::StrCat(last.error_text(), " (earlier: ", earlier_errors, ")"));
  }
  return last;
}

}  // namespace

ChunkJoinResult JoinChunkRecords(std::vector<v1::ChunkRecord> engine_records,
                                 std::vector<v1::ChunkRecord> instrumented_records) {
  ChunkJoinResult result;
  absl::flat_hash_map<std::string, size_t> engine_by_task;
  for (size_t i = 0; i < engine_records.size(); ++i) {
    const std::string& id = engine_records[i].task_id();
    if (!id.empty()) engine_by_task.emplace(id, i);
  }
  std::vector<bool> engine_used(engine_records.size(), false);
  // A task may process several chunks (one record each); a chunk named twice under one task
  // is the suspicious case.
  absl::flat_hash_map<std::string, std::vector<ChunkIdentity>> chunks_of_task;
  int64_t unknown_tasks = 0, reused_tasks = 0;
  std::string first_unknown;
  for (v1::ChunkRecord& record : instrumented_records) {
    if (record.task_id().empty() || engine_by_task.empty()) continue;
    auto it = engine_by_task.find(record.task_id());
    if (it == engine_by_task.end()) {
      if (unknown_tasks++ == 0) first_unknown = record.task_id();
      continue;
    }
    std::vector<ChunkIdentity>& seen = chunks_of_task[record.task_id()];
    const ChunkIdentity identity(record.dataset(), record.file(), record.entry_start(),
                                 record.entry_stop());
    if (engine_used[it->second] &&
        (!HasIdentity(record) || std::find(seen.begin(), seen.end(), identity) != seen.end())) {
      ++reused_tasks;
    }
    seen.push_back(identity);
    engine_used[it->second] = true;
    TakeFromEngine(engine_records[it->second], record);
  }
  int64_t joined = 0;
  for (bool used : engine_used) joined += used ? 1 : 0;
  const int64_t unmatched = static_cast<int64_t>(engine_records.size()) - joined;
  if (unknown_tasks > 0) {
    result.warnings.push_back(absl::StrCat(unknown_tasks, " chunk record",
                                           unknown_tasks > 1 ? "s name" : " names",
                                           " a task the engine's records do not have (first: task ",
                                           first_unknown, "); kept without the engine's view"));
  }
  if (reused_tasks > 0) {
    result.warnings.push_back(absl::StrCat(reused_tasks, " chunk record",
                                           reused_tasks > 1 ? "s" : "",
                                           " share a task id with another record"));
  }
  if (joined > 0 && unmatched > 0) {
    result.warnings.push_back(absl::StrCat(
        unmatched, " engine task", unmatched > 1 ? "s" : "",
        " of the chunk category have no chunk record from the instrumentation; kept with the "
        "engine's figures only"));
  }

  std::vector<v1::ChunkRecord> all = std::move(instrumented_records);
  for (size_t i = 0; i < engine_records.size(); ++i) {
    if (!engine_used[i]) all.push_back(std::move(engine_records[i]));
  }
  // Application retries: records with a task id of the same chunk.
  absl::flat_hash_map<ChunkIdentity, std::vector<size_t>> by_chunk;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!HasIdentity(all[i])) continue;
    by_chunk[ChunkIdentity(all[i].dataset(), all[i].file(), all[i].entry_start(),
                           all[i].entry_stop())]
        .push_back(i);
  }
  // Each group's folded record takes the place of its first member, in input order.
  std::vector<int> role(all.size(), 0);  // 0 keep, 1 replaced by the fold, 2 dropped
  absl::flat_hash_map<size_t, v1::ChunkRecord> folded;
  for (auto& [identity, group] : by_chunk) {
    if (group.size() < 2) continue;
    const size_t first = *std::min_element(group.begin(), group.end());
    for (size_t i : group) role[i] = 2;
    role[first] = 1;
    folded.emplace(first, FoldRetries(all, group));
  }
  // Compacted in place: a second vector would hold a second full-size message per record
  // (about 350 B each, 350 MB for a million chunks) at the peak.
  size_t kept = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (role[i] == 2) continue;
    if (role[i] == 1) {
      all[kept++] = std::move(folded.at(i));
    } else if (kept != i) {
      all[kept++] = std::move(all[i]);
    } else {
      ++kept;
    }
  }
  all.resize(kept);
  result.records = std::move(all);
  return result;
}

}  // namespace roastcoffea
