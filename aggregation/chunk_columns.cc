#include "aggregation/chunk_columns.h"

#include <string>

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
    const auto [it, added] = ids_.try_emplace(name, static_cast<uint32_t>(ids_.size()));
    if (added && names != nullptr) names->emplace_back(name);
    any_ = true;
    last_name_ = name;
    last_id_ = it->second;
    return last_id_;
  }
  size_t size() const { return ids_.size(); }

 private:
  absl::flat_hash_map<absl::string_view, uint32_t> ids_;
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

void Reserve(size_t n, ChunkColumns* c) {
  for (auto* column : {&c->start_unix_ns, &c->end_unix_ns, &c->entry_start, &c->entry_stop,
                       &c->events, &c->compressed_bytes_read, &c->file_size, &c->peak_live_bytes}) {
    column->reserve(n);
  }
  for (auto* column : {&c->duration_seconds, &c->cpu_seconds, &c->run_queue_wait_seconds,
                       &c->memory_delta_bytes}) {
    column->reserve(n);
  }
  for (auto* column : {&c->attempt, &c->file, &c->dataset, &c->process}) column->reserve(n);
  c->flags.reserve(n);
}

// Records (and their sections) are separate heap objects, visited in the caller's order:
// prefetch ahead so that out-of-order records do not stall on every access.
void PrefetchAhead(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, int i) {
  constexpr int kAhead = 8;
  if (i + 2 * kAhead < chunks.size()) __builtin_prefetch(&chunks.Get(i + 2 * kAhead));
  if (i + kAhead < chunks.size()) {
    const v1::ChunkRecord& ahead = chunks.Get(i + kAhead);
    for (const v1::SectionRecord& section : ahead.sections()) __builtin_prefetch(&section);
  }
  // The strings the pass hashes or compares (each a heap object of its own), once their
  // records and sections are in cache.
  if (i + kAhead / 2 < chunks.size()) {
    const v1::ChunkRecord& near = chunks.Get(i + kAhead / 2);
    __builtin_prefetch(near.dataset().data());
    __builtin_prefetch(near.worker().data());
    __builtin_prefetch(near.file().data());
    for (const v1::SectionRecord& section : near.sections()) {
      __builtin_prefetch(section.name().data());
    }
  }
}

}  // namespace

absl::StatusOr<ChunkColumns> BuildChunkColumns(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
    BranchCoverageAccumulator* branches, SectionAccumulator* sections) {
  ChunkColumns c;
  c.records = &chunks;
  Reserve(static_cast<size_t>(chunks.size()), &c);
  NameIds files, datasets, processes;
  for (int i = 0; i < chunks.size(); ++i) {
    PrefetchAhead(chunks, i);
    const v1::ChunkRecord& chunk = chunks.Get(i);
    if (absl::Status valid = ValidateChunkRecord(chunk, static_cast<size_t>(i)); !valid.ok()) {
      return valid;
    }
    branches->Add(chunk);
    const bool failed = chunk.status() == v1::CHUNK_STATUS_FAILED;
    // The schema stores 0 for unknown memory; a running process never has 0 resident bytes.
    const bool measured_memory =
        chunk.memory_before_bytes() != 0 || chunk.memory_after_bytes() != 0;
    c.flags.push_back(static_cast<uint8_t>(
        (failed ? ChunkColumns::kFailed : 0) |
        (measured_memory ? ChunkColumns::kMeasuredMemory : 0) |
        (chunk.has_peak_live_bytes() ? ChunkColumns::kHasPeakLive : 0) |
        (chunk.has_run_queue_wait_seconds() ? ChunkColumns::kHasRunQueueWait : 0)));
    c.start_unix_ns.push_back(chunk.start_unix_ns());
    c.end_unix_ns.push_back(chunk.end_unix_ns());
    c.entry_start.push_back(chunk.entry_start());
    c.entry_stop.push_back(chunk.entry_stop());
    c.events.push_back(chunk.events());
    c.compressed_bytes_read.push_back(chunk.compressed_bytes_read());
    c.file_size.push_back(chunk.file_bytes() > 0 ? chunk.file_bytes()
                                                 : chunk.file_metadata().total_tree_bytes());
    c.duration_seconds.push_back(chunk.duration_seconds());
    c.cpu_seconds.push_back(chunk.cpu_seconds());
    c.run_queue_wait_seconds.push_back(chunk.run_queue_wait_seconds());
    c.memory_delta_bytes.push_back(measured_memory
                                       ? static_cast<double>(chunk.memory_after_bytes()) -
                                             static_cast<double>(chunk.memory_before_bytes())
                                       : 0.0);
    c.peak_live_bytes.push_back(chunk.peak_live_bytes());
    c.attempt.push_back(chunk.attempt());
    c.file.push_back(chunk.file().empty() ? ChunkColumns::kNone
                                          : files.Id(chunk.file(), &c.file_names));
    c.dataset.push_back(failed ? ChunkColumns::kNone
                               : datasets.Id(chunk.dataset().empty()
                                                 ? absl::string_view(kUnknownDataset)
                                                 : absl::string_view(chunk.dataset()),
                                             &c.dataset_names));
    c.process.push_back(processes.Id(ProcessOf(chunk.worker()), nullptr));
    if (!failed && !chunk.sections().empty()) sections->AddChunk(chunk.sections());
  }
  c.num_processes = processes.size();
  return c;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
