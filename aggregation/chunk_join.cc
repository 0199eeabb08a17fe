#include "aggregation/chunk_join.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "schema/chunk_table.h"

namespace roastcoffea {
namespace {

// v1::ChunkRecord's accessors that TakeFromEngine uses, over a ChunkRow: the rule is written
// once for records and for tables.
class RowRecord {
 public:
  explicit RowRecord(ChunkRow* row) : row_(*row) {}
  uint32_t attempt() const { return row_.attempt; }
  void set_attempt(uint32_t attempt) { row_.attempt = attempt; }
  int64_t start_unix_ns() const { return row_.ints[chunk_field::kStartUnixNs]; }
  int64_t end_unix_ns() const { return row_.ints[chunk_field::kEndUnixNs]; }
  void set_start_unix_ns(int64_t ns) { row_.ints[chunk_field::kStartUnixNs] = ns; }
  void set_end_unix_ns(int64_t ns) { row_.ints[chunk_field::kEndUnixNs] = ns; }
  double duration_seconds() const { return row_.doubles[chunk_field::kDurationSeconds]; }
  void set_duration_seconds(double s) { row_.doubles[chunk_field::kDurationSeconds] = s; }
  double cpu_seconds() const { return row_.doubles[chunk_field::kCpuSeconds]; }
  void set_cpu_seconds(double s) { row_.doubles[chunk_field::kCpuSeconds] = s; }
  int64_t memory_peak_bytes() const { return row_.ints[chunk_field::kMemoryPeakBytes]; }
  void set_memory_peak_bytes(int64_t b) { row_.ints[chunk_field::kMemoryPeakBytes] = b; }
  bool has_machine_cpus() const { return row_.HasOptional(chunk_field::kMachineCpus); }
  double machine_load() const { return row_.doubles[chunk_field::kMachineLoad]; }
  double machine_cpus() const { return row_.doubles[chunk_field::kMachineCpus]; }
  void set_machine_load(double x) { row_.SetOptional(chunk_field::kMachineLoad, x); }
  void set_machine_cpus(double x) { row_.SetOptional(chunk_field::kMachineCpus, x); }
  bool has_ready_unix_ns() const { return row_.HasOptional(chunk_field::kReadyUnixNs); }
  int64_t ready_unix_ns() const { return row_.ints[chunk_field::kReadyUnixNs]; }
  void set_ready_unix_ns(int64_t ns) { row_.SetOptional(chunk_field::kReadyUnixNs, ns); }
  v1::ChunkStatus status() const { return static_cast<v1::ChunkStatus>(row_.status); }
  void set_status(v1::ChunkStatus status) { row_.status = status; }
  absl::string_view error_text() const { return row_.strings[chunk_field::kErrorText]; }
  void set_error_text(std::string text) {
    row_.owned_error_text = std::move(text);
    row_.strings[chunk_field::kErrorText] = row_.owned_error_text;
  }

 private:
  ChunkRow& row_;
};

// The same accessors over record `i` of a table, changed in place; error texts set are kept in
// `error_texts` (by record), for ChunkTable::ReplaceStrings once all are known.
class TableRecord {
 public:
  TableRecord(ChunkTable* table, size_t i, absl::flat_hash_map<uint32_t, std::string>* error_texts)
      : table_(*table), i_(i), error_texts_(*error_texts) {}
  uint32_t attempt() const { return table_.attempt(i_); }
  void set_attempt(uint32_t attempt) { table_.SetAttempt(i_, attempt); }
  int64_t start_unix_ns() const { return table_.Int(chunk_field::kStartUnixNs, i_); }
  int64_t end_unix_ns() const { return table_.Int(chunk_field::kEndUnixNs, i_); }
  void set_start_unix_ns(int64_t ns) { table_.SetInt(chunk_field::kStartUnixNs, i_, ns); }
  void set_end_unix_ns(int64_t ns) { table_.SetInt(chunk_field::kEndUnixNs, i_, ns); }
  double duration_seconds() const { return table_.Double(chunk_field::kDurationSeconds, i_); }
  void set_duration_seconds(double s) { table_.SetDouble(chunk_field::kDurationSeconds, i_, s); }
  double cpu_seconds() const { return table_.Double(chunk_field::kCpuSeconds, i_); }
  void set_cpu_seconds(double s) { table_.SetDouble(chunk_field::kCpuSeconds, i_, s); }
  int64_t memory_peak_bytes() const { return table_.Int(chunk_field::kMemoryPeakBytes, i_); }
  void set_memory_peak_bytes(int64_t b) { table_.SetInt(chunk_field::kMemoryPeakBytes, i_, b); }
  bool has_machine_cpus() const { return table_.HasOptional(chunk_field::kMachineCpus, i_); }
  double machine_load() const { return table_.Double(chunk_field::kMachineLoad, i_); }
  double machine_cpus() const { return table_.Double(chunk_field::kMachineCpus, i_); }
  void set_machine_load(double x) { table_.SetDouble(chunk_field::kMachineLoad, i_, x); }
  void set_machine_cpus(double x) { table_.SetDouble(chunk_field::kMachineCpus, i_, x); }
  bool has_ready_unix_ns() const { return table_.HasOptional(chunk_field::kReadyUnixNs, i_); }
  int64_t ready_unix_ns() const { return table_.Int(chunk_field::kReadyUnixNs, i_); }
  void set_ready_unix_ns(int64_t ns) { table_.SetInt(chunk_field::kReadyUnixNs, i_, ns); }
  v1::ChunkStatus status() const { return static_cast<v1::ChunkStatus>(table_.status(i_)); }
  void set_status(v1::ChunkStatus status) { table_.SetStatus(i_, status); }
  absl::string_view error_text() const {
    const auto it = error_texts_.find(static_cast<uint32_t>(i_));
    return it != error_texts_.end() ? it->second : table_.String(chunk_field::kErrorText, i_);
  }
  void set_error_text(std::string text) {
    error_texts_[static_cast<uint32_t>(i_)] = std::move(text);
  }

 private:
  ChunkTable& table_;
  const size_t i_;
  absl::flat_hash_map<uint32_t, std::string>& error_texts_;
};

// The getters of TableRecord over record `i` of a table read in place: the engine side of
// TakeFromEngine without copying the engine's row out (its uuid, task id, sections).
class ConstTableRecord {
 public:
  ConstTableRecord(const ChunkTable& table, size_t i) : table_(table), i_(i) {}
  uint32_t attempt() const { return table_.attempt(i_); }
  int64_t start_unix_ns() const { return table_.Int(chunk_field::kStartUnixNs, i_); }
  int64_t end_unix_ns() const { return table_.Int(chunk_field::kEndUnixNs, i_); }
  double duration_seconds() const { return table_.Double(chunk_field::kDurationSeconds, i_); }
  double cpu_seconds() const { return table_.Double(chunk_field::kCpuSeconds, i_); }
  int64_t memory_peak_bytes() const { return table_.Int(chunk_field::kMemoryPeakBytes, i_); }
  bool has_machine_cpus() const { return table_.HasOptional(chunk_field::kMachineCpus, i_); }
  double machine_load() const { return table_.Double(chunk_field::kMachineLoad, i_); }
  double machine_cpus() const { return table_.Double(chunk_field::kMachineCpus, i_); }
  bool has_ready_unix_ns() const { return table_.HasOptional(chunk_field::kReadyUnixNs, i_); }
  int64_t ready_unix_ns() const { return table_.Int(chunk_field::kReadyUnixNs, i_); }
  v1::ChunkStatus status() const { return static_cast<v1::ChunkStatus>(table_.status(i_)); }
  absl::string_view error_text() const { return table_.String(chunk_field::kErrorText, i_); }

 private:
  const ChunkTable& table_;
  const size_t i_;
};

// Fills `record` (from the instrumentation) with what only the engine's record of the same task
// knows (the worker apart: the callers give it). For v1::ChunkRecord, RowRecord and
// TableRecord.
template <typename Engine, typename Record>
void TakeFromEngine(const Engine& engine, Record& record) {
  record.set_attempt(engine.attempt());
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
                              : std::string(engine.error_text()));
    record.set_status(v1::CHUNK_STATUS_FAILED);
  } else if (!engine.error_text().empty()) {
    // A success after lost attempts: the engine's note says so.
    record.set_error_text(record.error_text().empty()
                              ? std::string(engine.error_text())
                              : absl::StrCat(record.error_text(), "; ", engine.error_text()));
  }
}

// A chunk's identity, viewing the strings of a record that stays in place while it is used.
struct ChunkKey {
  absl::string_view dataset, file;
  int64_t entry_start, entry_stop;

  explicit ChunkKey(const v1::ChunkRecord& r)
      : dataset(r.dataset()),
        file(r.file()),
        entry_start(r.entry_start()),
        entry_stop(r.entry_stop()) {}
  ChunkKey(const ChunkTable& table, size_t i)
      : dataset(table.String(chunk_field::kDataset, i)),
        file(table.String(chunk_field::kFile, i)),
        entry_start(table.Int(chunk_field::kEntryStart, i)),
        entry_stop(table.Int(chunk_field::kEntryStop, i)) {}
  bool operator==(const ChunkKey& o) const {
    return entry_start == o.entry_start && entry_stop == o.entry_stop && file == o.file &&
           dataset == o.dataset;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ChunkKey& k) {
    return H::combine(std::move(h), k.dataset, k.file, k.entry_start, k.entry_stop);
  }
};

// What the join's steps read of its records, by index: of a vector of records...
class RecordsView {
 public:
  explicit RecordsView(const std::vector<v1::ChunkRecord>& records) : records_(records) {}
  size_t size() const { return records_.size(); }
  absl::string_view task_id(size_t i) const { return records_[i].task_id(); }
  ChunkKey key(size_t i) const { return ChunkKey(records_[i]); }

 private:
  const std::vector<v1::ChunkRecord>& records_;
};

// ... of a table ...
class TableView {
 public:
  explicit TableView(const ChunkTable& table) : table_(table) {}
  size_t size() const { return table_.size(); }
  absl::string_view task_id(size_t i) const { return table_.String(chunk_field::kTaskId, i); }
  ChunkKey key(size_t i) const { return ChunkKey(table_, i); }

 private:
  const ChunkTable& table_;
};

// ... and of the instrumented records followed by the engine records no record named (`unused`),
// the records JoinChunkTables folds.
class JoinedTablesView {
 public:
  JoinedTablesView(const ChunkTable& instrumented, const ChunkTable& engine,
                   const std::vector<uint32_t>& unused)
      : instrumented_(instrumented), engine_(engine), unused_(unused) {}
  size_t size() const { return instrumented_.size() + unused_.size(); }
  absl::string_view task_id(size_t i) const {
    return i < instrumented_.size() ? instrumented_.String(chunk_field::kTaskId, i)
                                    : engine_.String(chunk_field::kTaskId, Engine(i));
  }
  ChunkKey key(size_t i) const {
    return i < instrumented_.size() ? ChunkKey(instrumented_, i) : ChunkKey(engine_, Engine(i));
  }

 private:
  uint32_t Engine(size_t i) const { return unused_[i - instrumented_.size()]; }
  const ChunkTable& instrumented_;
  const ChunkTable& engine_;
  const std::vector<uint32_t>& unused_;
};

// A record that names its task and its chunk: one that retries fold.
template <typename View>
bool HasIdentity(const View& view, size_t i) {
  if (view.task_id(i).empty()) return false;
  const ChunkKey key = view.key(i);
  return !key.file.empty() || key.entry_stop > key.entry_start;
}

// Hash and equality of record indices by the chunk of the record (ChunkKey).
template <typename View>
struct RecordChunkKey {
  const View* records;
  size_t operator()(uint32_t i) const { return absl::Hash<ChunkKey>{}(records->key(i)); }
  bool operator()(uint32_t a, uint32_t b) const { return records->key(a) == records->key(b); }
};

// Folds the records of one chunk (indices into `records`, at least two) into the one that
// started last.
v1::ChunkRecord FoldRetries(std::vector<v1::ChunkRecord>& records, std::vector<uint32_t> group) {
  std::stable_sort(group.begin(), group.end(), [&](uint32_t a, uint32_t b) {
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

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// `id` as a number when it is one written canonically (decimal digits, no leading zero, at most
// 9 digits): then two such ids are equal exactly when their numbers are.
std::optional<uint32_t> CanonicalNumber(absl::string_view id) {
  if (id.empty() || id.size() > 9 || (id[0] == '0' && id.size() > 1)) return std::nullopt;
  uint32_t n = 0;
  for (const char c : id) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  return n;
}

// The engine record of each task id. TaskVine and Work Queue number their tasks 1, 2, ...:
// when every id is such a number (and they are not too sparse) a vector indexed by it replaces
// the hash map, whose random probes into 10^6 entries were most of the join's time.
class EngineIndex {
 public:
  template <typename View>
  explicit EngineIndex(const View& engine_records) {
    uint32_t largest = 0;
    bool numbers = true;
    for (size_t i = 0; i < engine_records.size(); ++i) {
      const absl::string_view id = engine_records.task_id(i);
      if (id.empty()) continue;
      const std::optional<uint32_t> n = CanonicalNumber(id);
      if (!n.has_value()) {
        numbers = false;
        break;
      }
      largest = std::max(largest, *n);
    }
    if (numbers && largest / 4 <= engine_records.size()) {
      by_number_.assign(static_cast<size_t>(largest) + 1, kNone);
      for (size_t i = 0; i < engine_records.size(); ++i) {
        const absl::string_view id = engine_records.task_id(i);
        if (id.empty()) continue;
        uint32_t& slot = by_number_[*CanonicalNumber(id)];
        if (slot == kNone) slot = static_cast<uint32_t>(i);  // the first, as emplace keeps
        empty_ = false;
      }
      return;
    }
    by_id_.reserve(engine_records.size());
    for (size_t i = 0; i < engine_records.size(); ++i) {
      const absl::string_view id = engine_records.task_id(i);
      if (!id.empty()) by_id_.emplace(id, static_cast<uint32_t>(i));
    }
    empty_ = by_id_.empty();
  }

  bool empty() const { return empty_; }

  // The engine record of task `id`, or kNone.
  uint32_t Find(absl::string_view id) const {
    if (!by_id_.empty()) {
      const auto it = by_id_.find(id);
      return it == by_id_.end() ? kNone : it->second;
    }
    const std::optional<uint32_t> n = CanonicalNumber(id);
    return n.has_value() && *n < by_number_.size() ? by_number_[*n] : kNone;
  }

 private:
  std::vector<uint32_t> by_number_;
  absl::flat_hash_map<absl::string_view, uint32_t> by_id_;  // views the engine records' ids
  bool empty_ = true;
};

struct MatchCounts {
  std::vector<bool> engine_used;
  int64_t unknown_tasks = 0, reused_tasks = 0;
  std::string first_unknown;
};

// Which engine record each instrumented record names.
struct TaskMatch {
  std::vector<uint32_t> task_of;     // per instrumented record: its engine record, or kNone
  std::vector<uint32_t> first_user;  // per engine record: the first record naming it, or kNone
  MatchCounts counts;
};

// Step 1: the engine record of each instrumented record's task. One hash lookup per record;
// the identities of a task's earlier chunks are compared only for tasks named by several
// records (rare: Work Queue's chunks per task).
template <typename View>
TaskMatch MatchTasks(const View& engine_records, const View& instrumented_records) {
  TaskMatch match;
  MatchCounts& counts = match.counts;
  counts.engine_used.assign(engine_records.size(), false);
  match.task_of.assign(instrumented_records.size(), kNone);
  if (engine_records.size() == 0) return match;
  const EngineIndex engine_by_task(engine_records);
  if (engine_by_task.empty()) return match;
  // Per engine task, the instrumented records that named it after the first (in a map).
  match.first_user.assign(engine_records.size(), kNone);
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> later_users;
  for (size_t r = 0; r < instrumented_records.size(); ++r) {
    const absl::string_view task_id = instrumented_records.task_id(r);
    if (task_id.empty()) continue;
    const uint32_t task = engine_by_task.Find(task_id);
    if (task == kNone) {
      if (counts.unknown_tasks++ == 0) counts.first_unknown = std::string(task_id);
      continue;
    }
    if (counts.engine_used[task]) {
      bool same_chunk = !HasIdentity(instrumented_records, r);
      const ChunkKey key = instrumented_records.key(r);
      const auto named_before = [&](uint32_t earlier) {
        return instrumented_records.key(earlier) == key;
      };
      same_chunk = same_chunk || named_before(match.first_user[task]);
      for (uint32_t earlier : later_users[task]) same_chunk = same_chunk || named_before(earlier);
      if (same_chunk) ++counts.reused_tasks;
      later_users[task].push_back(static_cast<uint32_t>(r));
    } else {
      match.first_user[task] = static_cast<uint32_t>(r);
    }
    counts.engine_used[task] = true;
    match.task_of[r] = task;
  }
  return match;
}

// Step 1 for records: each instrumented record takes from the engine record of its task.
MatchCounts MatchEngineRecords(std::vector<v1::ChunkRecord>& engine_records,
                               std::vector<v1::ChunkRecord>& instrumented_records) {
  TaskMatch match = MatchTasks(RecordsView(engine_records), RecordsView(instrumented_records));
  // The engine's worker name moves to the task's first record when it has none (a used engine
  // record is dropped: no copy to make and free per record); later records copy it from there.
  std::vector<bool> worker_moved(engine_records.size(), false);
  for (size_t r = 0; r < instrumented_records.size(); ++r) {
    const uint32_t task = match.task_of[r];
    if (task == kNone) continue;
    v1::ChunkRecord& record = instrumented_records[r];
    v1::ChunkRecord& engine = engine_records[task];
    if (record.worker().empty()) {
      const uint32_t first = match.first_user[task];
      if (first == r) {
        record.set_allocated_worker(engine.release_worker());
        worker_moved[task] = true;
      } else {
        record.set_worker(worker_moved[task] ? instrumented_records[first].worker()
                                             : engine.worker());
      }
    }
    TakeFromEngine(engine, record);
  }
  return std::move(match.counts);
}

void AddWarnings(const MatchCounts& counts, size_t engine_records,
                 std::vector<std::string>& warnings) {
  int64_t joined = 0;
  for (bool used : counts.engine_used) joined += used ? 1 : 0;
  const int64_t unmatched = static_cast<int64_t>(engine_records) - joined;
  if (counts.unknown_tasks > 0) {
    warnings.push_back(absl::StrCat(counts.unknown_tasks, " chunk record",
                                    counts.unknown_tasks > 1 ? "s name" : " names",
                                    " a task the engine's records do not have (first: task ",
                                    counts.first_unknown, "); kept without the engine's view"));
  }
  if (counts.reused_tasks > 0) {
    warnings.push_back(absl::StrCat(counts.reused_tasks, " chunk record",
                                    counts.reused_tasks > 1 ? "s" : "",
                                    " share a task id with another record"));
  }
  if (joined > 0 && unmatched > 0) {
    warnings.push_back(absl::StrCat(
        unmatched, " engine task", unmatched > 1 ? "s" : "",
        " of the chunk category have no chunk record from the instrumentation; kept with the "
        "engine's figures only"));
  }
}

// The records of each chunk seen more than once (with a task id), by its first record: the
// application retries step 2 folds. One hash lookup per record.
template <typename View>
absl::flat_hash_map<uint32_t, std::vector<uint32_t>> RetryGroups(const View& all) {
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> groups;  // by first member
  // The first record of each chunk, by index: 4-byte slots (5 MB for 10^6 records, not the
  // 64 MB of ChunkKey slots whose random probes missed the cache on every insert).
  const RecordChunkKey<View> by_chunk{&all};
  absl::flat_hash_set<uint32_t, RecordChunkKey<View>, RecordChunkKey<View>> first_of_chunk(
      0, by_chunk, by_chunk);
  first_of_chunk.reserve(all.size());  // never rehashed: that would read every record again
  for (size_t i = 0; i < all.size(); ++i) {
    if (!HasIdentity(all, i)) continue;
    const auto [it, inserted] = first_of_chunk.insert(static_cast<uint32_t>(i));
    if (inserted) continue;
    std::vector<uint32_t>& group = groups[*it];
    if (group.empty()) group.push_back(*it);
    group.push_back(static_cast<uint32_t>(i));
  }
  return groups;
}

// Step 2: application retries (records with a task id of the same chunk) folded into one,
// which takes the place of the group's first member. Only chunks seen more than once get a
// member list.
void FoldApplicationRetries(std::vector<v1::ChunkRecord>& all) {
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> groups = RetryGroups(RecordsView(all));
  if (groups.empty()) return;
  std::vector<uint8_t> role(all.size(), 0);  // 0 keep, 1 replaced by the fold, 2 dropped
  absl::flat_hash_map<uint32_t, v1::ChunkRecord> folded;
  for (auto& [first, group] : groups) {
    for (uint32_t i : group) role[i] = 2;
    role[first] = 1;
    folded.emplace(first, FoldRetries(all, std::move(group)));
  }
  // Compacted in place: a second vector would hold a second full-size message per record
  // (about 350 B each, 350 MB for a million chunks) at the peak.
  size_t kept = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (role[i] == 2) continue;
    if (role[i] == 1) {
      all[kept++] = std::move(folded.at(static_cast<uint32_t>(i)));
    } else if (kept != i) {
      all[kept++] = std::move(all[i]);
    } else {
      ++kept;
    }
  }
  all.resize(kept);
}

// The records JoinChunkTables writes, one at a time: instrumented records joined to their
// engine record (JoinedTablesView's order), then the engine records no record named.
class JoinedRows {
 public:
  JoinedRows(const ChunkTable& instrumented, const ChunkTable& engine, const TaskMatch& match,
             const std::vector<uint32_t>& unused)
      : instrumented_(instrumented), engine_(engine), match_(match), unused_(unused) {}

  // Record `i` of the JoinedTablesView into `row` (which views the tables and owns the rest).
  void Read(size_t i, ChunkRow* row) {
    if (i >= instrumented_.size()) {
      engine_.ReadRow(unused_[i - instrumented_.size()], row);
      return;
    }
    instrumented_.ReadRow(i, row);
    const uint32_t task = match_.task_of[i];
    if (task == kNone) return;
    if (row->strings[chunk_field::kWorker].empty()) {
      row->strings[chunk_field::kWorker] = engine_.String(chunk_field::kWorker, task);
    }
    engine_.ReadRow(task, &engine_row_);
    RowRecord record(row);
    TakeFromEngine(RowRecord(&engine_row_), record);
  }

 private:
  const ChunkTable& instrumented_;
  const ChunkTable& engine_;
  const TaskMatch& match_;
  const std::vector<uint32_t>& unused_;
  ChunkRow engine_row_;
};

// Step 1 in place: each instrumented record (of `instrumented`) takes from the engine record of
// its task, as MatchEngineRecords does.
void TakeFromEngineInPlace(const ChunkTable& engine, const TaskMatch& match,
                           ChunkTable& instrumented) {
  absl::flat_hash_map<uint32_t, std::string> error_texts;
  // The instrumented pool's id of each engine worker id (kNone: not interned yet): a run has
  // few workers, so each name is hashed once, not once per record.
  std::vector<uint32_t> worker_id_of;
  for (size_t r = 0; r < instrumented.size(); ++r) {
    const uint32_t task = match.task_of[r];
    if (task == kNone) continue;
    if (instrumented.StringId(chunk_field::kWorker, r) == 0) {
      const uint32_t engine_worker = engine.StringId(chunk_field::kWorker, task);
      if (engine_worker >= worker_id_of.size()) worker_id_of.resize(engine_worker + 1, kNone);
      uint32_t& worker = worker_id_of[engine_worker];
      if (worker == kNone) {
        instrumented.SetInternedString(chunk_field::kWorker, r,
                                       engine.InternedString(engine_worker));
        worker = instrumented.StringId(chunk_field::kWorker, r);
      } else {
        instrumented.SetStringId(chunk_field::kWorker, r, worker);
      }
    }
    TableRecord record(&instrumented, r, &error_texts);
    TakeFromEngine(ConstTableRecord(engine, task), record);
  }
  instrumented.ReplaceStrings(chunk_field::kErrorText, error_texts);
}

// Step 2 when some chunk was retried: the (few) retried chunks folded as records by FoldRetries,
// as for JoinChunkRecords, into a new table.
ChunkTable FoldIntoNewTable(const ChunkTable& engine, const ChunkTable& instrumented,
                            const TaskMatch& match, const std::vector<uint32_t>& unused,
                            absl::flat_hash_map<uint32_t, std::vector<uint32_t>> groups) {
  JoinedRows rows(instrumented, engine, match, unused);
  const size_t total = instrumented.size() + unused.size();
  ChunkRow row;
  std::vector<uint8_t> role(total, 0);  // as FoldApplicationRetries
  absl::flat_hash_map<uint32_t, v1::ChunkRecord> folded;
  size_t dropped = 0;
  for (auto& [first, group] : groups) {
    std::vector<v1::ChunkRecord> members(group.size());
    std::vector<uint32_t> order(group.size());
    for (size_t m = 0; m < group.size(); ++m) {
      rows.Read(group[m], &row);
      row.ToRecord(&members[m]);
      order[m] = static_cast<uint32_t>(m);
      role[group[m]] = 2;
    }
    role[first] = 1;
    dropped += group.size() - 1;
    folded.emplace(first, FoldRetries(members, std::move(order)));
  }
  ChunkTable table;
  table.Reserve(total - dropped);
  for (size_t i = 0; i < total; ++i) {
    if (role[i] == 2) continue;
    if (role[i] == 1) {
      table.Append(folded.at(static_cast<uint32_t>(i)));
      continue;
    }
    rows.Read(i, &row);
    table.Append(row);
  }
  return table;
}

}  // namespace

ChunkTableJoinResult JoinChunkTables(const ChunkTable& engine_records,
                                     ChunkTable instrumented_records) {
  ChunkTableJoinResult result;
  const TaskMatch match = MatchTasks(TableView(engine_records), TableView(instrumented_records));
  AddWarnings(match.counts, engine_records.size(), result.warnings);
  std::vector<uint32_t> unused;
  for (size_t i = 0; i < engine_records.size(); ++i) {
    if (!match.counts.engine_used[i]) unused.push_back(static_cast<uint32_t>(i));
  }
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> groups =
      RetryGroups(JoinedTablesView(instrumented_records, engine_records, unused));
  if (!groups.empty()) {
    result.table =
        FoldIntoNewTable(engine_records, instrumented_records, match, unused, std::move(groups));
    return result;
  }
  // No retries to fold (the common case): the instrumented table changed in place, the engine
  // records no record named appended; no second table at the peak.
  TakeFromEngineInPlace(engine_records, match, instrumented_records);
  result.table = std::move(instrumented_records);
  ChunkRow row;
  for (const uint32_t i : unused) {
    engine_records.ReadRow(i, &row);
    result.table.Append(row);
  }
  return result;
}

ChunkJoinResult JoinChunkRecords(std::vector<v1::ChunkRecord> engine_records,
                                 std::vector<v1::ChunkRecord> instrumented_records) {
  ChunkJoinResult result;
  const MatchCounts counts = MatchEngineRecords(engine_records, instrumented_records);
  AddWarnings(counts, engine_records.size(), result.warnings);
  std::vector<v1::ChunkRecord> all = std::move(instrumented_records);
  size_t unused = 0;
  for (bool used : counts.engine_used) unused += used ? 0 : 1;
  all.reserve(all.size() + unused);
  for (size_t i = 0; i < engine_records.size(); ++i) {
    if (!counts.engine_used[i]) all.push_back(std::move(engine_records[i]));
  }
  engine_records = std::vector<v1::ChunkRecord>();
  FoldApplicationRetries(all);
  result.records = std::move(all);
  return result;
}

}  // namespace roastcoffea
