#include "aggregation/chunk_stats.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "aggregation/chunk_info.h"
#include "aggregation/chunk_validation.h"
#include "aggregation/distribution_stats.h"
#include "aggregation/job_queue.h"
#include "aggregation/section_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// The original files chunks without a dataset under this name.
constexpr char kUnknownDataset[] = "unknown";

bool MeasuredMemory(const v1::ChunkRecord& chunk) {
  // The schema stores 0 for unknown memory; a running process never has 0 resident bytes.
  return chunk.memory_before_bytes() != 0 || chunk.memory_after_bytes() != 0;
}

// The process a record ran in: the worker name without the threadpool's "/thread-<k>" suffix
// (a Dask worker address or a TaskVine worker is one process already).
absl::string_view ProcessOf(const v1::ChunkRecord& chunk) {
  absl::string_view worker = chunk.worker();
  const size_t thread = worker.rfind("/thread-");
  return thread == absl::string_view::npos ? worker : worker.substr(0, thread);
}

// Whether two records that measured memory ran at the same time in one process: their
// resident-memory deltas then include each other's allocations. Records are added in the one
// pass over the input; processes are interned by name (the last worker is checked before
// hashing). A zero-length record overlaps nothing that starts at its instant.
// Cost: O(n) when each process's records arrive in (start, end) order; otherwise a counting
// sort by process and a sort of each process's records: O(n log(n / processes)).
class ProcessOverlap {
 public:
  explicit ProcessOverlap(size_t expected) { intervals_.reserve(expected); }

  void Add(const v1::ChunkRecord& chunk) {
    if (intervals_.empty() || chunk.worker() != last_worker_) {
      last_worker_ = chunk.worker();
      last_id_ = process_ids_.try_emplace(ProcessOf(chunk), process_ids_.size()).first->second;
      if (last_id_ >= last_.size()) last_.resize(last_id_ + 1, {INT64_MIN, INT64_MIN});
    }
    const Span span{chunk.start_unix_ns(), chunk.end_unix_ns()};
    if (span < last_[last_id_]) in_order_ = false;
    last_[last_id_] = span;
    intervals_.push_back({last_id_, span});
  }

  bool AnyOverlap() const {
    const size_t processes = last_.size();
    if (in_order_) {
      // Each process's records are already in (start, end) order: one pass.
      std::vector<int64_t> latest_end(processes);
      std::vector<bool> seen(processes, false);
      for (const Interval& interval : intervals_) {
        if (!seen[interval.process]) {
          seen[interval.process] = true;
          latest_end[interval.process] = interval.span.end;
          continue;
        }
        if (interval.span.start < latest_end[interval.process]) return true;
        latest_end[interval.process] = std::max(latest_end[interval.process], interval.span.end);
      }
      return false;
    }
    // Group by process (counting sort), then sort and scan each group.
    std::vector<size_t> begin(processes + 1, 0);
    for (const Interval& interval : intervals_) ++begin[interval.process + 1];
    for (size_t p = 0; p < processes; ++p) begin[p + 1] += begin[p];
    std::vector<Span> grouped(intervals_.size());
    std::vector<size_t> next(begin.begin(), begin.end() - 1);
    for (const Interval& interval : intervals_) grouped[next[interval.process]++] = interval.span;
    for (size_t p = 0; p < processes; ++p) {
      const auto first = grouped.begin() + static_cast<std::ptrdiff_t>(begin[p]);
      const auto last = grouped.begin() + static_cast<std::ptrdiff_t>(begin[p + 1]);
      if (first == last) continue;
      if (!std::is_sorted(first, last)) std::sort(first, last);
      int64_t latest_end = first->end;
      for (auto it = first + 1; it != last; ++it) {
        if (it->start < latest_end) return true;
        latest_end = std::max(latest_end, it->end);
      }
    }
    return false;
  }

 private:
  struct Span {
    int64_t start, end;
    bool operator<(const Span& o) const { return start != o.start ? start < o.start : end < o.end; }
  };
  struct Interval {
    uint32_t process;
    Span span;
  };
  absl::flat_hash_map<absl::string_view, uint32_t> process_ids_;
  std::vector<Interval> intervals_;
  std::vector<Span> last_;  // per process: the (start, end) of its latest record so far
  absl::string_view last_worker_;
  uint32_t last_id_ = 0;
  bool in_order_ = true;
};

// One quantity of the successful records, with the dataset of each value.
struct Column {
  std::vector<double> values;
  std::vector<uint32_t> datasets;
  void Add(double value, uint32_t dataset) {
    values.push_back(value);
    datasets.push_back(dataset);
  }
};

// Interns dataset names; records of one dataset usually come in runs, so the last name is
// checked before hashing.
class DatasetIndex {
 public:
  uint32_t Id(const std::string& dataset) {
    const std::string& name = dataset.empty() ? unknown_ : dataset;
    if (!names_.empty() && names_[last_] == name) return last_;
    auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(name);
    last_ = it->second;
    return last_;
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  const std::string unknown_ = kUnknownDataset;
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  uint32_t last_ = 0;
};

// The distributions of one column, overall and per dataset, computed by jobs that may run on
// two threads: the per-dataset values are first copied (grouped by dataset) into `scratch`, so
// that every job selects percentiles in its own buffer.
struct ColumnDistributions {
  v1::DistributionStats overall;
  std::vector<v1::DistributionStats> by_dataset;
  std::vector<double> scratch;
  std::vector<size_t> begin;  // dataset d is scratch[begin[d], begin[d + 1])

  // `datasets[i]` is the dataset of `values[i]`.
  void AddJobs(std::vector<double>& values, const std::vector<uint32_t>& datasets,
               size_t num_datasets, std::vector<std::function<void()>>* jobs) {
    by_dataset.resize(num_datasets);
    if (num_datasets > 1) {
      begin.assign(num_datasets + 1, 0);
      for (uint32_t d : datasets) ++begin[d + 1];
      for (size_t d = 0; d < num_datasets; ++d) begin[d + 1] += begin[d];
      scratch.resize(values.size());
      std::vector<size_t> next(begin.begin(), begin.end() - 1);
      for (size_t i = 0; i < values.size(); ++i) scratch[next[datasets[i]]++] = values[i];
      for (size_t d = 0; d < num_datasets; ++d) {
        jobs->push_back([this, d] {
          by_dataset[d] = ComputeDistributionStatsInPlace(
              absl::MakeSpan(scratch.data() + begin[d], begin[d + 1] - begin[d]), true);
        });
      }
    }
    jobs->push_back([this, &values] {
      overall = ComputeDistributionStatsInPlace(absl::MakeSpan(values), true);
    });
  }
  // Sum of dataset d's values (order-independent, so also valid after the jobs reordered them).
  double DatasetSum(size_t d, double overall_sum) const {
    if (by_dataset.size() == 1) return overall_sum;
    return CompensatedSum(absl::MakeConstSpan(scratch.data() + begin[d], begin[d + 1] - begin[d]));
  }
  // After the jobs ran: with a single dataset its distribution is the overall one.
  void Finish() {
    if (by_dataset.size() == 1) by_dataset[0] = overall;
  }
};

auto FailureKey(const v1::ChunkRecord* c) {
  return std::tuple<const std::string&, const std::string&, int64_t, int64_t, uint32_t,
                    const std::string&, const std::string&>(
      c->dataset(), c->file(), c->entry_start(), c->entry_stop(), c->attempt(), c->uuid(),
      c->error_text());
}

template <typename Key>
void SortIfNeeded(std::vector<const v1::ChunkRecord*>& records, Key key) {
  auto less = [&](const v1::ChunkRecord* a, const v1::ChunkRecord* b) { return key(a) < key(b); };
  if (!std::is_sorted(records.begin(), records.end(), less)) {
    std::sort(records.begin(), records.end(), less);
  }
}

}  // namespace

absl::StatusOr<std::optional<v1::ChunkMetrics>> AggregateChunkRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, bool include_chunk_info,
    size_t parallel_min_records, BranchCoverageAccumulator* branches) {
  if (chunks.empty()) return std::optional<v1::ChunkMetrics>();
  const size_t n = static_cast<size_t>(chunks.size());

  Column durations, memory_deltas, time_per_event, peak_live;
  ProcessOverlap memory_overlap(n);
  durations.values.reserve(n);
  durations.datasets.reserve(n);
  std::vector<double> events;  // same datasets as `durations`
  events.reserve(n);
  time_per_event.values.reserve(n);
  time_per_event.datasets.reserve(n);
  DatasetIndex datasets;
  std::vector<int64_t> dataset_events;
  SectionAccumulator sections(n);
  std::vector<const v1::ChunkRecord*> failed;
  // On big inputs a helper thread builds chunk_info (it only reads the records) while this one
  // makes the pass, then both share the percentile selections (JobQueue).
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> chunk_info;
  JobQueue jobs;
  bool published = false;
  std::thread helper;
  const bool parallel = n >= parallel_min_records;
  if (parallel) {
    helper = std::thread([&chunks, &chunk_info, &jobs, include_chunk_info] {
      if (include_chunk_info) BuildChunkInfo(chunks, &chunk_info);
      jobs.Work();
    });
  }
  // Releases and joins the helper on every return path, errors included.
  const absl::Cleanup join = [&helper, &jobs, &published] {
    if (!helper.joinable()) return;
    if (!published) jobs.Cancel();
    helper.join();
  };
  int64_t total_events = 0;
  int64_t num_retried = 0;

  for (int i = 0; i < chunks.size(); ++i) {
    // Records (and their sections) are separate heap objects, visited in the caller's order:
    // prefetch ahead so that out-of-order records do not stall on every access.
    constexpr int kAhead = 8;
    if (i + 2 * kAhead < chunks.size()) __builtin_prefetch(&chunks.Get(i + 2 * kAhead));
    if (i + kAhead < chunks.size()) {
      const v1::ChunkRecord& ahead = chunks.Get(i + kAhead);
      for (const v1::SectionRecord& section : ahead.sections()) __builtin_prefetch(&section);
    }
    // The strings the pass compares (each a heap object of its own), once their records and
    // sections are in cache.
    if (i + kAhead / 2 < chunks.size()) {
      const v1::ChunkRecord& near = chunks.Get(i + kAhead / 2);
      __builtin_prefetch(near.dataset().data());
      __builtin_prefetch(near.worker().data());
      for (const v1::SectionRecord& section : near.sections()) {
        __builtin_prefetch(section.name().data());
      }
    }
    const v1::ChunkRecord& chunk = chunks.Get(i);
    if (absl::Status valid = ValidateChunkRecord(chunk, static_cast<size_t>(i)); !valid.ok()) {
      return valid;
    }
    branches->Add(chunk);
    if (chunk.attempt() > 0) ++num_retried;
    if (chunk.status() == v1::CHUNK_STATUS_FAILED) {
      failed.push_back(&chunk);
      continue;
    }
    const uint32_t dataset = datasets.Id(chunk.dataset());
    if (dataset >= dataset_events.size()) dataset_events.resize(dataset + 1, 0);
    dataset_events[dataset] += chunk.events();
    total_events += chunk.events();
    durations.Add(chunk.duration_seconds(), dataset);
    events.push_back(static_cast<double>(chunk.events()));
    if (chunk.events() > 0) {
      time_per_event.Add(chunk.duration_seconds() / static_cast<double>(chunk.events()), dataset);
    }
    if (chunk.has_peak_live_bytes()) {
      peak_live.Add(static_cast<double>(chunk.peak_live_bytes()), dataset);
    }
    if (MeasuredMemory(chunk)) {
      memory_overlap.Add(chunk);
      // In double: an int64 difference of arbitrary inputs could overflow.
      memory_deltas.Add(static_cast<double>(chunk.memory_after_bytes()) -
                            static_cast<double>(chunk.memory_before_bytes()),
                        dataset);
    }
    if (!chunk.sections().empty()) sections.AddChunk(chunk.sections());
  }

  v1::ChunkMetrics metrics;
  const int64_t num_failed = static_cast<int64_t>(failed.size());
  metrics.set_num_chunks(static_cast<int64_t>(n));
  metrics.set_num_failed_chunks(num_failed);
  metrics.set_num_successful_chunks(static_cast<int64_t>(n) - num_failed);
  metrics.set_num_retried_chunks(num_retried);
  SortIfNeeded(failed, FailureKey);
  for (const v1::ChunkRecord* chunk : failed) {
    v1::FailedChunk* out = metrics.add_failed_chunks();
    out->set_uuid(chunk->uuid());
    out->set_dataset(chunk->dataset());
    out->set_file(chunk->file());
    out->set_entry_start(chunk->entry_start());
    out->set_entry_stop(chunk->entry_stop());
    out->set_attempt(chunk->attempt());
    out->set_worker(chunk->worker());
    out->set_error_text(chunk->error_text());
    out->set_task_id(chunk->task_id());
  }
  const size_t num_datasets = datasets.names().size();
  const double total_chunk_seconds = CompensatedSum(durations.values);
  ColumnDistributions duration_stats, events_stats, time_per_event_stats, memory_stats,
      peak_live_stats;
  std::vector<std::function<void()>> work;
  if (!durations.values.empty()) {
    duration_stats.AddJobs(durations.values, durations.datasets, num_datasets, &work);
    events_stats.AddJobs(events, durations.datasets, num_datasets, &work);
    time_per_event_stats.AddJobs(time_per_event.values, time_per_event.datasets, num_datasets,
                                 &work);
    memory_stats.AddJobs(memory_deltas.values, memory_deltas.datasets, num_datasets, &work);
    peak_live_stats.AddJobs(peak_live.values, peak_live.datasets, num_datasets, &work);
    sections.AddJobs(&work);
  }
  jobs.Publish(std::move(work));
  published = true;
  jobs.Work();
  if (helper.joinable()) helper.join();
  if (include_chunk_info) {
    if (!parallel) BuildChunkInfo(chunks, &chunk_info);
    metrics.mutable_chunk_info()->Swap(&chunk_info);
  }
  // Every chunk failed: counts (and the failures) only.
  if (durations.values.empty()) return std::optional<v1::ChunkMetrics>(std::move(metrics));

  for (ColumnDistributions* column :
       {&duration_stats, &events_stats, &time_per_event_stats, &memory_stats, &peak_live_stats}) {
    column->Finish();
  }
  *metrics.mutable_duration_seconds() = duration_stats.overall;
  // Records that never count events (engine tasks without a Coffea chunk record) leave the
  // event statistics unknown, not a distribution of zeros.
  if (total_events > 0) *metrics.mutable_events() = events_stats.overall;
  if (!time_per_event.values.empty()) {
    *metrics.mutable_time_per_event_seconds() = time_per_event_stats.overall;
  }
  if (!memory_deltas.values.empty()) {
    *metrics.mutable_memory_delta_bytes() = memory_stats.overall;
    metrics.set_memory_delta_source(memory_overlap.AnyOverlap()
                                        ? v1::MEMORY_SOURCE_SHARED_PROCESS_RSS
                                        : v1::MEMORY_SOURCE_PROCESS_RSS);
  }
  if (!peak_live.values.empty()) *metrics.mutable_peak_live_bytes() = peak_live_stats.overall;
  // The original's event statistics have no std; ours keep it (it is our addition).
  metrics.set_total_events_from_chunks(total_events);

  // Datasets sorted by name.
  std::vector<uint32_t> order(num_datasets);
  for (uint32_t d = 0; d < num_datasets; ++d) order[d] = d;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return datasets.names()[a] < datasets.names()[b]; });
  for (uint32_t d : order) {
    const int64_t count = duration_stats.by_dataset[d].count();
    const double num_chunks = static_cast<double>(count);
    const double total_duration = duration_stats.DatasetSum(d, total_chunk_seconds);
    v1::DatasetChunkMetrics* dataset = metrics.add_per_dataset();
    dataset->set_dataset(datasets.names()[d]);
    dataset->set_num_chunks(count);
    dataset->set_total_duration_seconds(total_duration);
    dataset->set_total_events(dataset_events[d]);
    dataset->set_mean_duration_seconds(total_duration / num_chunks);
    if (dataset_events[d] > 0) {
      dataset->set_mean_events_per_chunk(static_cast<double>(dataset_events[d]) / num_chunks);
    }
    *dataset->mutable_duration_distribution_seconds() = duration_stats.by_dataset[d];
    if (dataset_events[d] > 0) {
      *dataset->mutable_events_distribution() = events_stats.by_dataset[d];
    }
    if (time_per_event_stats.by_dataset[d].count() > 0) {
      *dataset->mutable_time_per_event_distribution_seconds() = time_per_event_stats.by_dataset[d];
    }
    if (memory_stats.by_dataset[d].count() > 0) {
      *dataset->mutable_memory_delta_distribution_bytes() = memory_stats.by_dataset[d];
    }
  }
  sections.Finish(total_chunk_seconds, &metrics);
  return std::optional<v1::ChunkMetrics>(std::move(metrics));
}

std::optional<v1::ChunkMetrics> ComputeChunkMetrics(const std::vector<v1::ChunkRecord>& chunks) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> records(chunks.begin(), chunks.end());
  BranchCoverageAccumulator branches;
  absl::StatusOr<std::optional<v1::ChunkMetrics>> metrics =
      AggregateChunkRecords(records, /*include_chunk_info=*/true,
                            /*parallel_min_records=*/SIZE_MAX, &branches);
  return metrics.ok() ? *std::move(metrics) : std::nullopt;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
