// RunModel's chunk records: one row per task of the chunk category that reached DONE, appended
// to a ChunkTable without building a v1::ChunkRecord (#25), and the slots of each worker's rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/taskvine/run_model.h"
#include "backends/taskvine/run_model_internal.h"

namespace roastcoffea {
namespace taskvine {
namespace {

using internal::kBytesPerMebibyte;

// The row of a task that reached DONE (`row` cleared first; it views `workers`' ids and owns
// its uuid in `uuid`).
void TaskRow(const Task& task, const std::vector<Worker>& workers, std::string* uuid,
             ChunkRow* row) {
  row->Clear();
  // The attempt that decided the outcome: the last dispatched one.
  const Attempt* final_attempt = nullptr;
  int lost = 0;
  for (const Attempt& a : task.attempts) {
    if (a.dispatched()) final_attempt = &a;
    if (a.end == AttemptEnd::kLost) ++lost;
  }
  uuid->clear();
  absl::StrAppend(uuid, "taskvine-task-", task.id);
  row->strings[chunk_field::kUuid] = *uuid;
  if (!task.attempts.empty() && task.attempts.front().ready_us > 0) {
    row->SetOptional(chunk_field::kReadyUnixNs, task.attempts.front().ready_us * 1000);
  }
  row->owned_task_id.clear();
  absl::StrAppend(&row->owned_task_id, task.id);
  row->strings[chunk_field::kTaskId] = row->owned_task_id;
  row->attempt = task.attempts.empty() ? 0 : static_cast<uint32_t>(task.attempts.size() - 1);
  if (final_attempt != nullptr) {
    if (final_attempt->worker >= 0) {
      row->strings[chunk_field::kWorker] = workers[final_attempt->worker].id;
    }
    bool fallback = false;
    const double exec = final_attempt->ExecutionSeconds(&fallback);
    int64_t start_ns, end_ns;
    if (!fallback) {
      start_ns = static_cast<int64_t>(std::llround(final_attempt->worker_start_s * 1e6)) * 1000;
      end_ns = static_cast<int64_t>(std::llround(final_attempt->worker_end_s * 1e6)) * 1000;
    } else {
      start_ns = final_attempt->running_us * 1000;
      end_ns =
          (final_attempt->end_us > 0 ? final_attempt->end_us : final_attempt->running_us) * 1000;
    }
    row->ints[chunk_field::kStartUnixNs] = start_ns;
    row->ints[chunk_field::kEndUnixNs] = end_ns;
    row->doubles[chunk_field::kDurationSeconds] = exec;
    if (final_attempt->monitored) {
      row->doubles[chunk_field::kCpuSeconds] = final_attempt->cpu_seconds;
      row->ints[chunk_field::kMemoryPeakBytes] =
          static_cast<int64_t>(final_attempt->peak_memory_mb * kBytesPerMebibyte);
    }
    if (final_attempt->machine_cpus > 0) {
      row->SetOptional(chunk_field::kMachineLoad, final_attempt->machine_load);
      row->SetOptional(chunk_field::kMachineCpus, final_attempt->machine_cpus);
    }
  }
  const bool failed = task.Failed();
  row->status = failed ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK;
  row->owned_error_text.clear();
  if (failed) {
    absl::StrAppend(&row->owned_error_text, "TaskVine task ", task.id, " ended with result ",
                    task.result, ", exit code ", task.exit_code);
  }
  if (lost > 0) {
    absl::StrAppend(&row->owned_error_text, row->owned_error_text.empty() ? "" : "; ", lost,
                    " earlier attempt", lost > 1 ? "s" : "", " lost with a disconnected worker");
  }
  row->strings[chunk_field::kErrorText] = row->owned_error_text;
}

// The rows of the tasks of `category` that reached DONE, in task id order, into `table`, with
// their slots. With `release` (the same table as `tasks`), each dense block of tasks is freed
// once its rows are made: the tasks and their rows are never both held whole.
void AppendRows(const TaskTable<Task>& tasks, const std::vector<std::string>& categories,
                const std::vector<Worker>& workers, absl::string_view category, ChunkTable* table,
                TaskTable<Task>* release) {
  std::vector<bool> in_category(categories.size());
  for (size_t i = 0; i < categories.size(); ++i) in_category[i] = categories[i] == category;
  std::vector<const Task*> chosen;
  for (const auto& [id, task] : tasks) {
    if (task.done && in_category[task.category]) chosen.push_back(&task);
  }
  // The table visits dense ids in order: only ids in its sparse map can be out of order.
  const auto by_id = [](const Task* a, const Task* b) { return a->id < b->id; };
  if (!std::is_sorted(chosen.begin(), chosen.end(), by_id)) {
    std::sort(chosen.begin(), chosen.end(), by_id);
  }
  const size_t first = table->size();
  table->Reserve(first + chosen.size());
  ChunkRow row;
  std::string uuid;
  for (const Task* task : chosen) {
    // In id order: every dense block below this id has had its rows made (dense slots never
    // move, so the pointers still to come stay valid).
    if (release != nullptr) release->ReleaseDenseBelow(task->id);
    TaskRow(*task, workers, &uuid, &row);
    table->Append(row);
  }
  AssignSlots(*table, first);
}

}  // namespace

void RunModel::AppendChunkRows(absl::string_view category, ChunkTable* table) const {
  AppendRows(tasks_, categories_, workers_, category, table, /*release=*/nullptr);
}

void RunModel::TakeChunkRows(absl::string_view category, ChunkTable* table) {
  AppendRows(tasks_, categories_, workers_, category, table, &tasks_);
  ReleaseTasks();
}

std::vector<v1::ChunkRecord> RunModel::ChunkRecords(absl::string_view category) const {
  ChunkTable table;
  AppendChunkRows(category, &table);
  return RecordsOf(table);
}

void AssignSlots(ChunkTable& table, size_t from) {
  // The rows of each worker (by its interned id; 0 is no worker), in table order.
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> by_worker;
  for (size_t i = from; i < table.size(); ++i) {
    const uint32_t worker = table.StringId(chunk_field::kWorker, i);
    if (worker != 0) by_worker[worker].push_back(static_cast<uint32_t>(i));
  }
  for (auto& [worker, rows] : by_worker) {
    const auto earlier = [&table](uint32_t a, uint32_t b) {
      return std::make_pair(table.start_unix_ns(a), table.end_unix_ns(a)) <
             std::make_pair(table.start_unix_ns(b), table.end_unix_ns(b));
    };
    // Rows in id order are usually in time order already. Skipped only when strictly so: then
    // the order is the one any sort gives (ties are left to std::sort, as always).
    const bool strictly_ordered =
        std::adjacent_find(rows.begin(), rows.end(), [&earlier](uint32_t a, uint32_t b) {
          return !earlier(a, b);
        }) == rows.end();
    if (!strictly_ordered) std::sort(rows.begin(), rows.end(), earlier);
    std::vector<int64_t> slot_free_at;  // end of the last chunk in each slot
    for (uint32_t i : rows) {
      size_t slot = 0;
      while (slot < slot_free_at.size() && slot_free_at[slot] > table.start_unix_ns(i)) ++slot;
      if (slot == slot_free_at.size()) slot_free_at.push_back(0);
      slot_free_at[slot] = table.end_unix_ns(i);
      table.SetInt(chunk_field::kThreadIndex, i, static_cast<int64_t>(slot));
    }
  }
}

void AssignSlots(std::vector<v1::ChunkRecord>& records) {
  ChunkTable table = ChunkTableOf(records);
  AssignSlots(table);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].set_thread_index(table.Int(chunk_field::kThreadIndex, i));
  }
}

}  // namespace taskvine
}  // namespace roastcoffea
