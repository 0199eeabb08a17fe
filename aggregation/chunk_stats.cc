#include "aggregation/chunk_stats.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "aggregation/chunk_columns.h"
#include "aggregation/chunk_info.h"
#include "aggregation/distribution_stats.h"
#include "aggregation/job_queue.h"
#include "aggregation/section_stats.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

// Whether two successful records that measured memory ran at the same time in one process:
// their resident-memory deltas then include each other's allocations. A zero-length record
// overlaps nothing that starts at its instant. Read from the columns, not from a copy of the
// intervals (24 bytes per chunk at Aggregate's peak, issue #25).
// Cost: O(n) when each process's records come in (start, end) order; otherwise a counting
// sort by process and a sort of each process's records: O(n log(n / processes)).
class ProcessOverlap {
 public:
  static bool Any(const ChunkColumns& c) {
    const size_t processes = c.num_processes;
    // Each process's latest (start, end) so far and the latest end of its records so far.
    std::vector<Span> last(processes, {INT64_MIN, INT64_MIN});
    std::vector<int64_t> latest_end(processes);
    std::vector<bool> seen(processes, false);
    bool in_order = true, overlap = false;
    for (size_t i = 0; i < c.size(); ++i) {
      if (!Counted(c, i)) continue;
      const uint32_t p = c.process[i];
      const Span span{c.start_unix_ns[i], c.end_unix_ns[i]};
      if (span < last[p]) {
        in_order = false;
        break;
      }
      last[p] = span;
      if (!seen[p]) {
        seen[p] = true;
        latest_end[p] = span.end;
        continue;
      }
      overlap |= span.start < latest_end[p];
      latest_end[p] = std::max(latest_end[p], span.end);
    }
    return in_order ? overlap : AnyUnordered(c);
  }

 private:
  struct Span {
    int64_t start, end;
    bool operator<(const Span& o) const { return start != o.start ? start < o.start : end < o.end; }
  };

  static bool Counted(const ChunkColumns& c, size_t i) {
    return !c.failed(i) && c.has(i, ChunkColumns::kMeasuredMemory);
  }

  // Group by process (counting sort), then sort and scan each group.
  static bool AnyUnordered(const ChunkColumns& c) {
    const size_t processes = c.num_processes;
    std::vector<size_t> begin(processes + 1, 0);
    for (size_t i = 0; i < c.size(); ++i) {
      if (Counted(c, i)) ++begin[c.process[i] + 1];
    }
    for (size_t p = 0; p < processes; ++p) begin[p + 1] += begin[p];
    std::vector<Span> grouped(begin.back());
    std::vector<size_t> next(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < c.size(); ++i) {
      if (Counted(c, i)) grouped[next[c.process[i]]++] = {c.start_unix_ns[i], c.end_unix_ns[i]};
    }
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
};

// One quantity of the successful records, with the dataset of each value.
struct Column {
  std::vector<double> values;
  std::vector<uint32_t> datasets;  // empty while `shared`
  // Whether value k is successful record k's, so its dataset is `all`'s k-th (AddBeside): then
  // no copy of the datasets is kept (4 bytes per chunk and column at Aggregate's peak).
  bool shared = false;

  void Add(double value, uint32_t dataset) {
    values.push_back(value);
    datasets.push_back(dataset);
  }
  // Add for a quantity not every successful record has; `all` has one value per successful
  // record, this record's already.
  void AddBeside(double value, uint32_t dataset, const Column& all) {
    if (shared) {
      if (values.size() + 1 == all.values.size()) {
        values.push_back(value);
        return;
      }
      // A record was left out: from now on the datasets are this column's own.
      datasets.reserve(values.capacity());
      datasets.assign(all.datasets.begin(),
                      all.datasets.begin() + static_cast<std::ptrdiff_t>(values.size()));
      shared = false;
    }
    Add(value, dataset);
  }
  absl::Span<const uint32_t> Datasets(const Column& all) const {
    return shared ? absl::MakeConstSpan(all.datasets.data(), values.size())
                  : absl::MakeConstSpan(datasets);
  }
};

// The distributions of one column, overall and per dataset, computed by jobs that may run on
// two threads: the overall one reads the values in place; the per-dataset one copies them,
// grouped by dataset, into a scratch buffer of its own that it frees when done, so that at most
// one such buffer per thread is alive at once rather than one per column (issue #25: 8 bytes per
// chunk and column at Aggregate's peak).
struct ColumnDistributions {
  v1::DistributionStats overall;
  std::vector<v1::DistributionStats> by_dataset;
  double overall_sum = 0;            // CompensatedSum of the values, set by the overall job
  std::vector<double> dataset_sums;  // the same per dataset (more than one dataset only)

  // `datasets[i]` is the dataset of `values[i]`; both must outlive the jobs.
  void AddJobs(const std::vector<double>& values, absl::Span<const uint32_t> datasets,
               size_t num_datasets, std::vector<std::function<void()>>* jobs) {
    by_dataset.resize(num_datasets);
    dataset_sums.resize(num_datasets);
    if (num_datasets > 1) {
      jobs->push_back([this, &values, datasets] { ComputeByDataset(values, datasets); });
    }
    jobs->push_back(
        [this, &values] { overall = ComputeDistributionStatsOf(values, true, &overall_sum); });
  }
  // Each dataset's distribution, from its values in the records' order.
  void ComputeByDataset(const std::vector<double>& values, absl::Span<const uint32_t> datasets) {
    const size_t num_datasets = by_dataset.size();
    std::vector<size_t> begin(num_datasets + 1, 0);  // dataset d is scratch[begin[d], begin[d + 1])
    for (uint32_t d : datasets) ++begin[d + 1];
    for (size_t d = 0; d < num_datasets; ++d) begin[d + 1] += begin[d];
    std::vector<double> scratch(values.size());
    std::vector<size_t> next(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < values.size(); ++i) scratch[next[datasets[i]]++] = values[i];
    for (size_t d = 0; d < num_datasets; ++d) {
      by_dataset[d] = ComputeDistributionStatsOf(
          absl::MakeConstSpan(scratch.data() + begin[d], begin[d + 1] - begin[d]), true,
          &dataset_sums[d]);
    }
  }
  // Sum of dataset d's values, after the jobs ran.
  double DatasetSum(size_t d) const {
    return by_dataset.size() == 1 ? overall_sum : dataset_sums[d];
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

// The successful records' values, in the records' order.
struct SuccessfulValues {
  Column durations, memory_deltas, time_per_event, peak_live;
  std::vector<double> events;  // same datasets as `durations`
  std::vector<int64_t> dataset_events;
  int64_t total_events = 0;
  bool memory_overlap = false;
};

SuccessfulValues CollectSuccessful(const ChunkColumns& c) {
  const size_t n = c.size();
  SuccessfulValues v;
  // Room for every record in each column: growing the memory column instead took ~20
  // reallocations, each copying into fresh pages. Untouched capacity (no peak-live figures)
  // costs no resident memory. Datasets only for durations: the others share them (AddBeside).
  for (Column* column : {&v.durations, &v.time_per_event, &v.memory_deltas, &v.peak_live}) {
    column->values.reserve(n);
    if (column == &v.durations) column->datasets.reserve(n);
    column->shared = column != &v.durations;
  }
  v.events.reserve(n);
  v.dataset_events.assign(c.dataset_names.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    if (c.failed(i)) continue;
    const uint32_t dataset = c.dataset[i];
    const int64_t events = c.events[i];
    v.dataset_events[dataset] += events;
    v.total_events += events;
    v.durations.Add(c.duration_seconds[i], dataset);
    v.events.push_back(static_cast<double>(events));
    if (events > 0) {
      v.time_per_event.AddBeside(c.duration_seconds[i] / static_cast<double>(events), dataset,
                                 v.durations);
    }
    if (c.has(i, ChunkColumns::kHasPeakLive)) {
      v.peak_live.AddBeside(static_cast<double>(c.peak_live_bytes[i]), dataset, v.durations);
    }
    if (c.has(i, ChunkColumns::kMeasuredMemory)) {
      v.memory_deltas.AddBeside(c.memory_delta_bytes[i], dataset, v.durations);
    }
  }
  v.memory_overlap = !v.memory_deltas.values.empty() && ProcessOverlap::Any(c);
  return v;
}

// Counts, and the failed records sorted by dataset, file, entry range, attempt, uuid, error.
void AddCountsAndFailures(const ChunkColumns& c, v1::ChunkMetrics* metrics) {
  std::vector<const v1::ChunkRecord*> failed;
  int64_t num_retried = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.attempt[i] > 0) ++num_retried;
    if (c.failed(i)) failed.push_back(&c.record(i));
  }
  const int64_t n = static_cast<int64_t>(c.size());
  const int64_t num_failed = static_cast<int64_t>(failed.size());
  metrics->set_num_chunks(n);
  metrics->set_num_failed_chunks(num_failed);
  metrics->set_num_successful_chunks(n - num_failed);
  metrics->set_num_retried_chunks(num_retried);
  SortIfNeeded(failed, FailureKey);
  for (const v1::ChunkRecord* chunk : failed) {
    v1::FailedChunk* out = metrics->add_failed_chunks();
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
}

struct Distributions {
  ColumnDistributions duration, events, time_per_event, memory, peak_live;
};

// Datasets sorted by name, each with its counts, totals and distributions.
void AddPerDataset(const ChunkColumns& c, const SuccessfulValues& v, const Distributions& stats,
                   v1::ChunkMetrics* metrics) {
  const std::vector<std::string>& names = c.dataset_names;
  std::vector<uint32_t> order(names.size());
  for (uint32_t d = 0; d < names.size(); ++d) order[d] = d;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  for (uint32_t d : order) {
    const int64_t count = stats.duration.by_dataset[d].count();
    const double num_chunks = static_cast<double>(count);
    const double total_duration = stats.duration.DatasetSum(d);
    const int64_t events = v.dataset_events[d];
    v1::DatasetChunkMetrics* dataset = metrics->add_per_dataset();
    dataset->set_dataset(names[d]);
    dataset->set_num_chunks(count);
    dataset->set_total_duration_seconds(total_duration);
    dataset->set_total_events(events);
    dataset->set_mean_duration_seconds(total_duration / num_chunks);
    if (events > 0) {
      dataset->set_mean_events_per_chunk(static_cast<double>(events) / num_chunks);
    }
    *dataset->mutable_duration_distribution_seconds() = stats.duration.by_dataset[d];
    if (events > 0) *dataset->mutable_events_distribution() = stats.events.by_dataset[d];
    if (stats.time_per_event.by_dataset[d].count() > 0) {
      *dataset->mutable_time_per_event_distribution_seconds() = stats.time_per_event.by_dataset[d];
    }
    if (stats.memory.by_dataset[d].count() > 0) {
      *dataset->mutable_memory_delta_distribution_bytes() = stats.memory.by_dataset[d];
    }
  }
}

// chunk_info made in parts: the order and the columns' start once (Order), then one job per
// part of the order filling its rows, so that both threads share them; MoveTo hands the columns
// over without copying them.
constexpr size_t kChunkInfoParts = 2;

class ChunkInfoParts {
 public:
  explicit ChunkInfoParts(size_t parts) : parts_(parts), ordered_(promise_.get_future().share()) {}

  // Call exactly once, on any thread. `start`: the records' start order, made here into
  // `*start` when not null (for the findings), else only when chunk_info needs it.
  void Order(const ChunkColumns& c, StartOrder* start) {
    StartOrder made;
    if (start == nullptr && parts_ > 0) start = &made;
    if (start != nullptr) *start = OrderByStart(c);
    if (parts_ > 0) {
      order_ = ChunkInfoOrder(c, *start);
      StartChunkInfoColumns(c, order_, &columns_);
    }
    promise_.set_value();
  }
  void AddJobs(const ChunkColumns& c, std::vector<std::function<void()>>* jobs) {
    for (size_t p = 0; p < parts_; ++p) {
      jobs->push_back([this, &c, p] {
        ordered_.wait();
        const size_t n = order_.size();
        FillChunkInfoColumns(c, order_, n * p / parts_, n * (p + 1) / parts_, &columns_);
      });
    }
  }
  void MoveTo(v1::ChunkMetrics* metrics) {  // no columns without rows
    if (columns_.file_index_size() > 0) metrics->mutable_chunk_info_columns()->Swap(&columns_);
  }

 private:
  size_t parts_;
  ChunkInfoOrdering order_;
  v1::ChunkInfoColumns columns_;
  std::promise<void> promise_;
  std::shared_future<void> ordered_;
};

}  // namespace

std::optional<v1::ChunkMetrics> AggregateChunkColumns(const ChunkColumns& c,
                                                      const SectionAccumulator* sections,
                                                      bool include_chunk_info,
                                                      size_t parallel_min_records) {
  return AggregateChunkColumns(c, sections, include_chunk_info, parallel_min_records, nullptr);
}

std::optional<v1::ChunkMetrics> AggregateChunkColumns(const ChunkColumns& c,
                                                      const SectionAccumulator* sections,
                                                      bool include_chunk_info,
                                                      size_t parallel_min_records,
                                                      StartOrder* start_order) {
  if (c.size() == 0) return std::nullopt;
  // chunk_info's order first (on the helper thread, if any, while this one collects the
  // values); its messages are then made by jobs that wait for it.
  ChunkInfoParts info(include_chunk_info ? kChunkInfoParts : 0);
  JobQueue jobs;
  std::thread helper;
  if (c.size() >= parallel_min_records) {
    helper = std::thread([&info, &c, &jobs, start_order] {
      info.Order(c, start_order);
      jobs.Work();
    });
  } else {
    info.Order(c, start_order);
  }
  v1::ChunkMetrics metrics;
  AddCountsAndFailures(c, &metrics);
  SuccessfulValues v = CollectSuccessful(c);
  const size_t num_datasets = c.dataset_names.size();
  // The percentile selections and chunk_info are independent jobs; on big inputs a helper
  // thread shares them (JobQueue).
  Distributions stats;
  std::vector<std::optional<SectionAccumulator::Distribution>> section_distributions;
  std::vector<std::function<void()>> work;
  if (!v.durations.values.empty()) {
    const Column& all = v.durations;
    stats.duration.AddJobs(all.values, all.datasets, num_datasets, &work);
    stats.events.AddJobs(v.events, all.datasets, num_datasets, &work);
    stats.time_per_event.AddJobs(v.time_per_event.values, v.time_per_event.Datasets(all),
                                 num_datasets, &work);
    stats.memory.AddJobs(v.memory_deltas.values, v.memory_deltas.Datasets(all), num_datasets,
                         &work);
    stats.peak_live.AddJobs(v.peak_live.values, v.peak_live.Datasets(all), num_datasets, &work);
    sections->AddJobs(&section_distributions, &work);
  }
  info.AddJobs(c, &work);  // last: the other jobs need not wait for the order
  jobs.Publish(std::move(work));
  jobs.Work();
  if (helper.joinable()) helper.join();
  info.MoveTo(&metrics);
  // Every chunk failed: counts (and the failures) only.
  if (v.durations.values.empty()) return metrics;

  for (ColumnDistributions* column :
       {&stats.duration, &stats.events, &stats.time_per_event, &stats.memory, &stats.peak_live}) {
    column->Finish();
  }
  *metrics.mutable_duration_seconds() = stats.duration.overall;
  // Records that never count events (engine tasks without a Coffea chunk record) leave the
  // event statistics unknown, not a distribution of zeros.
  if (v.total_events > 0) *metrics.mutable_events() = stats.events.overall;
  if (!v.time_per_event.values.empty()) {
    *metrics.mutable_time_per_event_seconds() = stats.time_per_event.overall;
  }
  if (!v.memory_deltas.values.empty()) {
    *metrics.mutable_memory_delta_bytes() = stats.memory.overall;
    metrics.set_memory_delta_source(v.memory_overlap ? v1::MEMORY_SOURCE_SHARED_PROCESS_RSS
                                                     : v1::MEMORY_SOURCE_PROCESS_RSS);
  }
  if (!v.peak_live.values.empty()) *metrics.mutable_peak_live_bytes() = stats.peak_live.overall;
  // The original's event statistics have no std; ours keep it (it is our addition).
  metrics.set_total_events_from_chunks(v.total_events);
  AddPerDataset(c, v, stats, &metrics);
  sections->Finish(/*total_chunk_seconds=*/stats.duration.overall_sum, section_distributions,
                   &metrics);
  return metrics;
}

absl::StatusOr<std::optional<v1::ChunkMetrics>> AggregateChunkRecords(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, bool include_chunk_info,
    size_t parallel_min_records, BranchCoverageAccumulator* branches) {
  SectionAccumulator sections(static_cast<size_t>(chunks.size()));
  absl::StatusOr<ChunkColumns> columns =
      BuildChunkColumns(chunks, branches, &sections, parallel_min_records);
  if (!columns.ok()) return columns.status();
  return AggregateChunkColumns(*columns, &sections, include_chunk_info, parallel_min_records);
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
