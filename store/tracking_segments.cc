#include "store/tracking_segments.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "schema/worker_series_columns.h"

namespace roastcoffea {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Appends every repeated number column of `from` to `into`, both aligned with the time column
// `time_field` (`*_rows` samples each); a column that is not full in one of them is cleared.
void AppendColumns(const Message& from, int from_rows, Message* into, int into_rows,
                   const FieldDescriptor* time_field) {
  const google::protobuf::Descriptor* descriptor = into->GetDescriptor();
  const google::protobuf::Reflection* reflection = into->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated() || field == time_field) continue;
    const int from_size = reflection->FieldSize(from, field);
    const int into_size = reflection->FieldSize(*into, field);
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
      auto out = reflection->GetMutableRepeatedFieldRef<double>(into, field);
      if (into_rows > 0 && into_size != into_rows) continue;  // dropped before
      if (from_size != from_rows) {
        out.Clear();
        continue;
      }
      for (const double v : reflection->GetRepeatedFieldRef<double>(from, field)) out.Add(v);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32) {
      auto out = reflection->GetMutableRepeatedFieldRef<int32_t>(into, field);
      if (into_rows > 0 && into_size != into_rows) continue;
      if (from_size != from_rows) {
        out.Clear();
        continue;
      }
      for (const int32_t v : reflection->GetRepeatedFieldRef<int32_t>(from, field)) out.Add(v);
    }
  }
  if (time_field != nullptr) {
    auto out = reflection->GetMutableRepeatedFieldRef<int64_t>(into, time_field);
    for (const int64_t t : reflection->GetRepeatedFieldRef<int64_t>(from, time_field)) out.Add(t);
  }
}

}  // namespace

void MergeTrackingSegment(v1::TrackingData segment, v1::TrackingData* into,
                          int max_samples_per_worker) {
  if (into->backend().empty()) into->set_backend(segment.backend());
  if (into->interval_seconds() == 0) into->set_interval_seconds(segment.interval_seconds());
  if (into->worker_count_kind() == v1::SERIES_KIND_UNSPECIFIED) {
    into->set_worker_count_kind(segment.worker_count_kind());
  }
  into->set_workers_share_process(into->workers_share_process() || segment.workers_share_process());
  // The worker counts (and queued chunks) are columns of the count's time.
  v1::TrackingData counts;
  *counts.mutable_worker_count_time_unix_ns() = segment.worker_count_time_unix_ns();
  *counts.mutable_worker_count() = segment.worker_count();
  *counts.mutable_queued_chunks() = segment.queued_chunks();
  if (counts.worker_count_time_unix_ns_size() > 0) {
    v1::TrackingData kept;
    *kept.mutable_worker_count_time_unix_ns() = into->worker_count_time_unix_ns();
    *kept.mutable_worker_count() = into->worker_count();
    *kept.mutable_queued_chunks() = into->queued_chunks();
    const FieldDescriptor* time =
        v1::TrackingData::descriptor()->FindFieldByName("worker_count_time_unix_ns");
    // Only the count columns: workers and gaps are not numbers and are joined below.
    AppendColumns(counts, counts.worker_count_time_unix_ns_size(), &kept,
                  kept.worker_count_time_unix_ns_size(), time);
    *into->mutable_worker_count_time_unix_ns() = kept.worker_count_time_unix_ns();
    *into->mutable_worker_count() = kept.worker_count();
    *into->mutable_queued_chunks() = kept.queued_chunks();
  }
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < into->workers_size(); ++i) index.emplace(into->workers(i).worker(), i);
  if (max_samples_per_worker == kShareOfTrackingBudget) {
    int64_t workers = into->workers_size();
    for (const v1::WorkerSeries& series : segment.workers()) {
      workers += index.contains(series.worker()) ? 0 : 1;  // a repeated new name: a lower budget
    }
    max_samples_per_worker = MaxSamplesPerWorker(workers);
  }
  const FieldDescriptor* time = v1::WorkerSeries::descriptor()->FindFieldByName("time_unix_ns");
  for (v1::WorkerSeries& series : *segment.mutable_workers()) {
    if (series.time_unix_ns_size() == 0) continue;
    auto [it, inserted] = index.emplace(series.worker(), into->workers_size());
    if (inserted) {
      v1::WorkerSeries& added = *into->add_workers();
      added = std::move(series);
      ReduceWorkerSeries(max_samples_per_worker, {}, &added);
      continue;
    }
    v1::WorkerSeries& kept = *into->mutable_workers(it->second);
    if (kept.host().empty()) kept.set_host(series.host());
    // Appended point by point: a column stored once stands for each point first.
    ExpandColumnsStoredOnce(&kept);
    ExpandColumnsStoredOnce(&series);
    // A reduced series counts what it stands for; its peak outlives the reduction.
    if (kept.samples_before_reduction() > 0 || series.samples_before_reduction() > 0) {
      kept.set_samples_before_reduction(
          std::max<int64_t>(kept.samples_before_reduction(), kept.time_unix_ns_size()) +
          std::max<int64_t>(series.samples_before_reduction(), series.time_unix_ns_size()));
    }
    kept.set_max_memory_bytes(std::max(kept.max_memory_bytes(), series.max_memory_bytes()));
    AppendColumns(series, series.time_unix_ns_size(), &kept, kept.time_unix_ns_size(), time);
    ReduceWorkerSeries(max_samples_per_worker, {}, &kept);
  }
  for (v1::TrackingGap& gap : *segment.mutable_gaps()) *into->add_gaps() = std::move(gap);
  if (segment.has_manager() && !into->has_manager()) *into->mutable_manager() = segment.manager();
}

}  // namespace roastcoffea
