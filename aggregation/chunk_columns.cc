#include "aggregation/chunk_columns.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "aggregation/chunk_validation.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// The original files chunks without a dataset under this name.
constexpr char kUnknownDataset[] = "unknown";

// Interns names viewed in the records (which outlive it); records of one name usually come in
// runs, so the last name is checked before hashing.
class NameIds {
 public:
  uint32_t Id(absl::string_view name, std::vector<std::string>* names) {
    if (any_ && name == last_name_) return last_id_;
    any_ = true;
    last_name_ = name;
    // A few names (datasets): comparing them all is cheaper than hashing.
    if (ids_.empty()) {
      for (size_t id = 0; id < few_.size(); ++id) {
        if (few_[id] == name) return last_id_ = static_cast<uint32_t>(id);
      }
      if (few_.size() < kFew) {
        few_.push_back(name);
        if (names != nullptr) names->emplace_back(name);
        return last_id_ = static_cast<uint32_t>(few_.size() - 1);
      }
      for (size_t id = 0; id < few_.size(); ++id) {
        ids_.try_emplace(std::string(few_[id]), static_cast<uint32_t>(id));
      }
    }
    if (const auto it = ids_.find(name); it != ids_.end()) return last_id_ = it->second;
    last_id_ = static_cast<uint32_t>(ids_.size());
    ids_.try_emplace(std::string(name), last_id_);
    if (names != nullptr) names->emplace_back(name);
    return last_id_;
  }
  size_t size() const { return ids_.empty() ? few_.size() : ids_.size(); }
  // Brings into cache the table slot Id(name) will read (a record's name is prefetched first).
  void Prefetch(absl::string_view name) const {
    if (!ids_.empty()) ids_.prefetch(name);
  }

 private:
  static constexpr size_t kFew = 8;
  std::vector<absl::string_view> few_;  // the names while there are at most kFew
  // All names beyond that. Owned keys, not views into the records: a lookup compares with a
  // key in this compact table rather than with a string somewhere in a random record.
  absl::flat_hash_map<std::string, uint32_t> ids_;
  absl::string_view last_name_;
  uint32_t last_id_ = 0;
  bool any_ = false;
};

// The process a record ran in: the worker name without the threadpool's "/thread-<k>" suffix
// (a Dask worker address or a TaskVine worker is one process already).
absl::string_view ProcessOf(absl::string_view worker) {
  const size_t thread = worker.rfind("/thread-");
  return thread == absl::string_view::npos ? worker : worker.substr(0, thread);
}

// Room for `n` records in every column but the optional ones (AddOptional reserves those when
// a record first has a value).
void Reserve(size_t n, ChunkColumns* c) {
  for (auto* column : {&c->start_unix_ns, &c->end_unix_ns, &c->entry_start, &c->entry_stop,
                       &c->events, &c->compressed_bytes_read}) {
    column->reserve(n);
  }
  for (auto* column : {&c->duration_seconds, &c->cpu_seconds}) column->reserve(n);
  for (auto* column : {&c->attempt, &c->file, &c->dataset, &c->process, &c->worker}) {
    column->reserve(n);
  }
  c->thread_index.reserve(n);
  c->flags.reserve(n);
}

// Appends record `i`'s value (`has`: the record has one) to an optional column, which stays
// empty until the first record with a value: then it gets the records before (zeros) and room
// for as many records as `flags`, the first column filled.
template <typename T>
void AddOptional(size_t i, bool has, T value, const ChunkColumns& c, std::vector<T>* column) {
  if (column->empty()) {
    if (!has) return;
    column->reserve(std::max(c.flags.capacity(), i + 1));
    column->resize(i, T{});
  }
  column->push_back(value);
}

// Widens file `file`'s known size (kNone: no file) to `size`.
void AddFileSize(uint32_t file, int64_t size, ChunkColumns* c) {
  if (file == ChunkColumns::kNone) return;
  if (file >= c->file_sizes.size()) c->file_sizes.resize(file + 1, 0);
  c->file_sizes[file] = std::max(c->file_sizes[file], size);
}

// Every cache line of one message (a record's fields span several).
template <typename Message>
void PrefetchMessage(const Message& message) {
  const char* bytes = reinterpret_cast<const char*>(&message);
  for (size_t offset = 0; offset < sizeof(Message); offset += 64) {
    __builtin_prefetch(bytes + offset);
  }
}

// Records, their sections, the sections' pointer array and every string (a std::string object,
// and for longer strings its characters) are separate heap objects, visited in the caller's
// order: a pipeline of prefetches, each stage reading only what an earlier stage brought into
// cache, so that records out of memory order do not stall on every access. `columns` prefetches
// what AddColumns reads, `sections` what CheckAndAccumulate reads (`record_too`: the records
// themselves as well, when no PrefetchForColumns runs beside it). Always inlined: GCC's
// interprocedural analysis counts a prefetch as no side effect, and dropped the call of a
// function doing nothing else.
constexpr int kStage = 6;

__attribute__((always_inline)) inline void PrefetchForColumns(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, int i, const NameIds& files,
    const NameIds& workers) {
  const int n = chunks.size();
  if (i + 4 * kStage < n) PrefetchMessage(chunks.Get(i + 4 * kStage));
  if (i + 3 * kStage < n) {
    const v1::ChunkRecord& record = chunks.Get(i + 3 * kStage);
    __builtin_prefetch(&record.dataset());
    __builtin_prefetch(&record.worker());
    __builtin_prefetch(&record.file());
  }
  if (i + 2 * kStage < n) {
    const v1::ChunkRecord& record = chunks.Get(i + 2 * kStage);
    __builtin_prefetch(record.dataset().data());
    __builtin_prefetch(record.worker().data());
    __builtin_prefetch(record.file().data());
  }
  if (i + kStage < n) {
    const v1::ChunkRecord& record = chunks.Get(i + kStage);
    if (!record.file().empty()) files.Prefetch(record.file());
    workers.Prefetch(record.worker());
  }
}

__attribute__((always_inline)) inline void PrefetchForSections(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, int i, bool record_too) {
  const int n = chunks.size();
  if (record_too && i + 4 * kStage < n) PrefetchMessage(chunks.Get(i + 4 * kStage));
  if (i + 3 * kStage < n) {
    const v1::ChunkRecord& record = chunks.Get(i + 3 * kStage);
    if (!record.sections().empty()) __builtin_prefetch(record.sections().data());
  }
  if (i + 2 * kStage < n) {
    for (const v1::SectionRecord& section : chunks.Get(i + 2 * kStage).sections()) {
      PrefetchMessage(section);
    }
  }
  if (i + kStage < n) {
    for (const v1::SectionRecord& section : chunks.Get(i + kStage).sections()) {
      __builtin_prefetch(&section.name());
    }
  }
}

// The interned names of one pass over the records.
struct ColumnNames {
  NameIds files, datasets, workers, processes;
  std::vector<uint32_t> process_of_worker;  // by worker id
};

// The columns' part of the pass: one entry per column. Never fails (any record makes numbers);
// an invalid record is rejected by CheckAndAccumulate.
void AddColumns(const v1::ChunkRecord& chunk, ColumnNames* names, ChunkColumns* c) {
  const bool failed = chunk.status() == v1::CHUNK_STATUS_FAILED;
  // The schema stores 0 for unknown memory; a running process never has 0 resident bytes.
  const bool measured_memory = chunk.memory_before_bytes() != 0 || chunk.memory_after_bytes() != 0;
  c->flags.push_back(static_cast<uint8_t>(
      (failed ? ChunkColumns::kFailed : 0) | (measured_memory ? ChunkColumns::kMeasuredMemory : 0) |
      (chunk.has_peak_live_bytes() ? ChunkColumns::kHasPeakLive : 0) |
      (chunk.has_run_queue_wait_seconds() ? ChunkColumns::kHasRunQueueWait : 0) |
      (chunk.has_machine_load() && chunk.has_machine_cpus() ? ChunkColumns::kHasMachineLoad : 0)));
  c->start_unix_ns.push_back(chunk.start_unix_ns());
  c->end_unix_ns.push_back(chunk.end_unix_ns());
  c->entry_start.push_back(chunk.entry_start());
  c->entry_stop.push_back(chunk.entry_stop());
  c->events.push_back(chunk.events());
  c->compressed_bytes_read.push_back(chunk.compressed_bytes_read());
  c->duration_seconds.push_back(chunk.duration_seconds());
  c->cpu_seconds.push_back(chunk.cpu_seconds());
  const size_t i = c->flags.size() - 1;
  AddOptional(i, chunk.has_run_queue_wait_seconds(), chunk.run_queue_wait_seconds(), *c,
              &c->run_queue_wait_seconds);
  AddOptional(i, measured_memory,
              measured_memory ? static_cast<double>(chunk.memory_after_bytes()) -
                                    static_cast<double>(chunk.memory_before_bytes())
                              : 0.0,
              *c, &c->memory_delta_bytes);
  AddOptional(i, chunk.has_peak_live_bytes(), chunk.peak_live_bytes(), *c, &c->peak_live_bytes);
  c->attempt.push_back(chunk.attempt());
  const uint32_t file =
      chunk.file().empty() ? ChunkColumns::kNone : names->files.Id(chunk.file(), &c->file_names);
  c->file.push_back(file);
  AddFileSize(
      file, chunk.file_bytes() > 0 ? chunk.file_bytes() : chunk.file_metadata().total_tree_bytes(),
      c);
  c->dataset.push_back(failed ? ChunkColumns::kNone
                              : names->datasets.Id(chunk.dataset().empty()
                                                       ? absl::string_view(kUnknownDataset)
                                                       : absl::string_view(chunk.dataset()),
                                                   &c->dataset_names));
  // Workers are interned first: a process is one per worker, named only once per worker.
  const uint32_t worker = names->workers.Id(chunk.worker(), &c->worker_names);
  if (worker == names->process_of_worker.size()) {
    names->process_of_worker.push_back(names->processes.Id(ProcessOf(chunk.worker()), nullptr));
  }
  c->worker.push_back(worker);
  c->thread_index.push_back(chunk.thread_index());
  c->process.push_back(names->process_of_worker[worker]);
}

// The rest of the pass: validates the record and feeds the branch and section accumulators.
absl::Status CheckAndAccumulate(const v1::ChunkRecord& chunk, size_t index,
                                BranchCoverageAccumulator* branches, SectionAccumulator* sections) {
  if (absl::Status valid = ValidateChunkRecord(chunk, index); !valid.ok()) return valid;
  branches->Add(chunk);
  if (chunk.status() != v1::CHUNK_STATUS_FAILED && !chunk.sections().empty()) {
    sections->AddChunk(chunk.sections());
  }
  return absl::OkStatus();
}

// Both parts on one thread, record after record (each record is read from memory once).
absl::Status OnePass(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                     BranchCoverageAccumulator* branches, SectionAccumulator* sections,
                     ColumnNames* names, ChunkColumns* c) {
  for (int i = 0; i < chunks.size(); ++i) {
    PrefetchForColumns(chunks, i, names->files, names->workers);
    PrefetchForSections(chunks, i, /*record_too=*/false);
    const v1::ChunkRecord& chunk = chunks.Get(i);
    absl::Status valid = CheckAndAccumulate(chunk, static_cast<size_t>(i), branches, sections);
    if (!valid.ok()) return valid;
    AddColumns(chunk, names, c);
  }
  return absl::OkStatus();
}

// The two parts on two threads, each in record order (so every name, sum and value list is
// what OnePass makes): the columns here, validation, branches and sections on a helper.
absl::Status TwoThreads(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                        BranchCoverageAccumulator* branches, SectionAccumulator* sections,
                        ColumnNames* names, ChunkColumns* c) {
  absl::Status valid;
  std::thread helper([&chunks, branches, sections, &valid] {
    for (int i = 0; i < chunks.size(); ++i) {
      PrefetchForSections(chunks, i, /*record_too=*/true);
      valid = CheckAndAccumulate(chunks.Get(i), static_cast<size_t>(i), branches, sections);
      if (!valid.ok()) return;
    }
  });
  for (int i = 0; i < chunks.size(); ++i) {
    PrefetchForColumns(chunks, i, names->files, names->workers);
    AddColumns(chunks.Get(i), names, c);
  }
  helper.join();
  return valid;
}

// A table's interned ids as column ids: each distinct table id is named once (by NameIds, so
// the ids are those the records' names get), later records only look their id up.
class TableIds {
 public:
  template <typename NameIdOf>
  uint32_t Id(uint32_t table_id, NameIdOf name_id_of) {
    if (any_ && table_id == last_table_id_) return last_id_;
    any_ = true;
    last_table_id_ = table_id;
    const auto [it, inserted] = ids_.try_emplace(table_id, 0);
    if (inserted) it->second = name_id_of();
    return last_id_ = it->second;
  }

 private:
  absl::flat_hash_map<uint32_t, uint32_t> ids_;
  uint32_t last_table_id_ = 0;
  uint32_t last_id_ = 0;
  bool any_ = false;
};

struct TableColumnNames {
  ColumnNames names;
  TableIds files, datasets, workers;
};

// Records' remainders (ChunkTable::RestBytes) parsed alone, the last kKept distinct ones kept:
// a remainder equal to a kept one is not parsed again. Chunks of one file mostly share their
// branch list and metadata, and files are read side by side (one per dataset, in turn), so a
// record's remainder is mostly one of the last few; parsing it alone is cheaper than building
// the record (issue #25: 10^6 rich records built twice had cost ~0.9 s CPU). One per thread.
class RestReader {
 public:
  // Record `i`'s remainder (HasRest), and a serial number of its content: equal serials, equal
  // remainders. Valid until the next Get.
  struct Rest {
    const v1::ChunkRecord* fields;
    uint64_t serial;
  };
  Rest Get(const ChunkTable& table, size_t i) {
    const absl::string_view bytes = table.RestBytes(i);
    // The latest first: consecutive records repeat it most.
    for (size_t k = 0; k < kKept; ++k) {
      Entry& entry = kept_[(next_ + kKept - 1 - k) % kKept];
      if (entry.serial != 0 && entry.bytes == bytes) return {&entry.fields, entry.serial};
    }
    Entry& entry = kept_[next_];
    next_ = (next_ + 1) % kKept;
    entry.bytes = bytes;
    entry.serial = NewSerial();
    entry.fields.Clear();
    // The bytes were serialized from a message of this type: they parse.
    entry.fields.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    return {&entry.fields, entry.serial};
  }

 private:
  static constexpr size_t kKept = 8;
  struct Entry {
    absl::string_view bytes;  // a view of the table
    uint64_t serial = 0;      // 0: unused
    v1::ChunkRecord fields;
  };
  // Unique in the process: serials of two readers never meet in one accumulator by mistake.
  static uint64_t NewSerial() {
    static std::atomic<uint64_t> serials{0};
    return serials.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  std::array<Entry, kKept> kept_;
  size_t next_ = 0;  // the entry the next parse replaces (the oldest)
};

// AddColumns for record `i` of `table`; `rest` reads its remainder (file_metadata is there).
void AddTableColumns(const ChunkTable& table, size_t i, RestReader* rest, TableColumnNames* ids,
                     ChunkColumns* c) {
  using namespace chunk_field;  // NOLINT(build/namespaces): the field names read as columns
  ColumnNames* names = &ids->names;
  const bool failed = table.status(i) == v1::CHUNK_STATUS_FAILED;
  const int64_t memory_before = table.Int(kMemoryBeforeBytes, i);
  const int64_t memory_after = table.Int(kMemoryAfterBytes, i);
  const bool measured_memory = memory_before != 0 || memory_after != 0;
  c->flags.push_back(static_cast<uint8_t>(
      (failed ? ChunkColumns::kFailed : 0) | (measured_memory ? ChunkColumns::kMeasuredMemory : 0) |
      (table.HasOptional(kPeakLiveBytes, i) ? ChunkColumns::kHasPeakLive : 0) |
      (table.HasOptional(kRunQueueWaitSeconds, i) ? ChunkColumns::kHasRunQueueWait : 0) |
      (table.HasOptional(kMachineLoad, i) && table.HasOptional(kMachineCpus, i)
           ? ChunkColumns::kHasMachineLoad
           : 0)));
  c->start_unix_ns.push_back(table.Int(kStartUnixNs, i));
  c->end_unix_ns.push_back(table.Int(kEndUnixNs, i));
  c->entry_start.push_back(table.Int(kEntryStart, i));
  c->entry_stop.push_back(table.Int(kEntryStop, i));
  c->events.push_back(table.Int(kEvents, i));
  c->compressed_bytes_read.push_back(table.Int(kCompressedBytesRead, i));
  const int64_t file_bytes = table.Int(kFileBytes, i);
  const int64_t file_size = file_bytes > 0 ? file_bytes
                            : table.HasRest(i)
                                ? rest->Get(table, i).fields->file_metadata().total_tree_bytes()
                                : 0;
  c->duration_seconds.push_back(table.Double(kDurationSeconds, i));
  c->cpu_seconds.push_back(table.Double(kCpuSeconds, i));
  AddOptional(i, table.HasOptional(kRunQueueWaitSeconds, i), table.Double(kRunQueueWaitSeconds, i),
              *c, &c->run_queue_wait_seconds);
  AddOptional(i, measured_memory,
              measured_memory
                  ? static_cast<double>(memory_after) - static_cast<double>(memory_before)
                  : 0.0,
              *c, &c->memory_delta_bytes);
  AddOptional(i, table.HasOptional(kPeakLiveBytes, i), table.Int(kPeakLiveBytes, i), *c,
              &c->peak_live_bytes);
  c->attempt.push_back(table.attempt(i));
  const uint32_t file_id = table.StringId(kFile, i);
  const uint32_t file = file_id == 0 ? ChunkColumns::kNone : ids->files.Id(file_id, [&] {
    return names->files.Id(table.InternedString(file_id), &c->file_names);
  });
  c->file.push_back(file);
  AddFileSize(file, file_size, c);
  const uint32_t dataset = table.StringId(kDataset, i);
  c->dataset.push_back(failed ? ChunkColumns::kNone : ids->datasets.Id(dataset, [&] {
    return names->datasets.Id(
        dataset == 0 ? absl::string_view(kUnknownDataset) : table.InternedString(dataset),
        &c->dataset_names);
  }));
  const uint32_t worker_id = table.StringId(kWorker, i);
  const uint32_t worker = ids->workers.Id(worker_id, [&] {
    const absl::string_view name = table.InternedString(worker_id);
    const uint32_t id = names->workers.Id(name, &c->worker_names);
    if (id == names->process_of_worker.size()) {
      names->process_of_worker.push_back(names->processes.Id(ProcessOf(name), nullptr));
    }
    return id;
  });
  c->worker.push_back(worker);
  c->thread_index.push_back(table.Int(kThreadIndex, i));
  c->process.push_back(names->process_of_worker[worker]);
}

// CheckAndAccumulate for record `i` of `table`, reading its remainder with `rest`.
absl::Status CheckAndAccumulateTable(const ChunkTable& table, size_t i, RestReader* rest,
                                     BranchCoverageAccumulator* branches,
                                     SectionAccumulator* sections) {
  if (absl::Status valid = ValidateTableRecord(table, i); !valid.ok()) return valid;
  const bool failed = table.status(i) == v1::CHUNK_STATUS_FAILED;
  if (!table.HasRest(i)) {
    branches->AddWithoutBranchData();
  } else {
    const RestReader::Rest read = rest->Get(table, i);
    const v1::ChunkRecord& fields = *read.fields;
    branches->AddTableRecord(table, i, fields, read.serial);
    // Sections with fields beyond the section columns are all in the remainder.
    if (table.SectionsInRest(i)) {
      if (!failed && !fields.sections().empty()) sections->AddChunk(fields.sections());
      return absl::OkStatus();
    }
  }
  const size_t begin = table.SectionsBegin(i), end = table.SectionsEnd(i);
  if (!failed && begin < end) sections->AddChunk(table, begin, end);
  return absl::OkStatus();
}

// The pass over a table's records; validation and accumulation only with `branches`, on a
// helper thread when `two_threads` (as TwoThreads: each part in record order, the same result).
absl::Status TablePass(const ChunkTable& table, BranchCoverageAccumulator* branches,
                       SectionAccumulator* sections, bool two_threads, ChunkColumns* c) {
  c->table = &table;
  c->table_records = std::make_shared<const TableRecords>(&table);
  Reserve(table.size(), c);
  absl::Status valid;
  std::thread helper;
  if (branches != nullptr && two_threads) {
    helper = std::thread([&table, branches, sections, &valid] {
      RestReader rest;
      for (size_t i = 0; i < table.size(); ++i) {
        valid = CheckAndAccumulateTable(table, i, &rest, branches, sections);
        if (!valid.ok()) return;
      }
    });
  }
  TableColumnNames ids;
  RestReader rest;
  for (size_t i = 0; i < table.size(); ++i) {
    if (branches != nullptr && !two_threads) {
      valid = CheckAndAccumulateTable(table, i, &rest, branches, sections);
      if (!valid.ok()) return valid;
    }
    AddTableColumns(table, i, &rest, &ids, c);
  }
  if (helper.joinable()) helper.join();
  c->num_processes = ids.names.processes.size();
  return valid;
}

}  // namespace

const v1::ChunkRecord& TableRecords::Get(size_t i) const {
  absl::MutexLock lock(&mu_);
  const auto [it, inserted] = records_.try_emplace(i);
  if (inserted) table_->ReadRecord(i, &it->second);
  return it->second;
}

size_t TableRecords::built() const {
  absl::MutexLock lock(&mu_);
  return records_.size();
}

absl::StatusOr<ChunkColumns> BuildChunkColumns(const ChunkTable& table,
                                               BranchCoverageAccumulator* branches,
                                               SectionAccumulator* sections,
                                               size_t parallel_min_records) {
  ChunkColumns c;
  const bool two_threads = table.size() >= parallel_min_records;
  if (absl::Status valid = TablePass(table, branches, sections, two_threads, &c); !valid.ok()) {
    return valid;
  }
  return c;
}

ChunkColumns ColumnsOf(const ChunkTable& table) {
  ChunkColumns c;
  // Never fails: nothing is validated.
  TablePass(table, nullptr, nullptr, /*two_threads=*/false, &c).IgnoreError();
  return c;
}

bool RecordsMostlyInMemoryOrder(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  constexpr int kSample = 4096;
  constexpr uintptr_t kNear = 64 * 1024;  // a record with its strings and sections: ~2 KB
  const int n = std::min(chunks.size(), kSample);
  int ascending = 0;
  for (int i = 1; i < n; ++i) {
    const auto before = reinterpret_cast<uintptr_t>(&chunks.Get(i - 1));
    const auto after = reinterpret_cast<uintptr_t>(&chunks.Get(i));
    if (after > before && after - before <= kNear) ++ascending;
  }
  return n > 1 && ascending * 4 >= (n - 1) * 3;
}

ChunkColumns ColumnsOf(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  ChunkColumns c;
  c.records = &chunks;
  Reserve(static_cast<size_t>(chunks.size()), &c);
  ColumnNames names;
  for (const v1::ChunkRecord& chunk : chunks) AddColumns(chunk, &names, &c);
  c.num_processes = names.processes.size();
  return c;
}

absl::StatusOr<ChunkColumns> BuildChunkColumns(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
    BranchCoverageAccumulator* branches, SectionAccumulator* sections,
    size_t parallel_min_records) {
  ChunkColumns c;
  c.records = &chunks;
  Reserve(static_cast<size_t>(chunks.size()), &c);
  ColumnNames names;
  const absl::Status valid = static_cast<size_t>(chunks.size()) >= parallel_min_records
                                 ? TwoThreads(chunks, branches, sections, &names, &c)
                                 : OnePass(chunks, branches, sections, &names, &c);
  if (!valid.ok()) return valid;
  c.num_processes = names.processes.size();
  return c;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
