#include "aggregation/partial_aggregate.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "aggregation/section_stats.h"

namespace roastcoffea {

void ChunkPartialAggregate::Distribution::Merge(const Distribution& other) {
  // Same default accuracy on both sides: cannot fail.
  histogram.Merge(other.histogram).IgnoreError();
  sum.Merge(other.sum);
}

v1::DistributionStats ChunkPartialAggregate::Distribution::ToProto() const {
  v1::DistributionStats stats;
  if (histogram.count() == 0) return stats;
  stats.set_count(histogram.count());
  stats.set_mean(sum.Sum() / static_cast<double>(histogram.count()));
  stats.set_min(histogram.min());
  stats.set_max(histogram.max());
  v1::Percentiles* p = stats.mutable_percentiles();
  p->set_p50(histogram.Quantile(0.5));
  p->set_p90(histogram.Quantile(0.9));
  p->set_p95(histogram.Quantile(0.95));
  p->set_p99(histogram.Quantile(0.99));
  return stats;
}

absl::Status ChunkPartialAggregate::Add(const v1::ChunkRecord& record) {
  if (!std::isfinite(record.duration_seconds()) || record.duration_seconds() < 0 ||
      record.events() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "chunk record uuid \"", record.uuid(), "\": duration_seconds is ",
        record.duration_seconds(), " and events is ", record.events(),
        "; expected a finite duration >= 0 and events >= 0"));
  }
  for (const v1::SectionRecord& section : record.sections()) {
    if (!std::isfinite(section.duration_seconds()) || section.duration_seconds() < 0 ||
        !std::isfinite(section.cpu_seconds())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "chunk record uuid \"", record.uuid(), "\": section \"", section.name(),
          "\" has duration_seconds ", section.duration_seconds(), ", cpu_seconds ",
          section.cpu_seconds()));
    }
  }
  ++num_chunks_;
  if (record.attempt() > 0) ++num_retried_;
  if (record.status() == v1::CHUNK_STATUS_FAILED) {
    ++num_failed_;
    return absl::OkStatus();
  }
  const double duration = record.duration_seconds();
  total_events_ += record.events();
  duration_.Add(duration);
  events_.Add(static_cast<double>(record.events()));
  if (record.events() > 0) time_per_event_.Add(duration / static_cast<double>(record.events()));
  if (record.memory_before_bytes() != 0 || record.memory_after_bytes() != 0) {
    memory_delta_.Add(static_cast<double>(record.memory_after_bytes()) -
                      static_cast<double>(record.memory_before_bytes()));
  }
  Dataset& dataset = datasets_[record.dataset().empty() ? "unknown" : record.dataset()];
  dataset.events += record.events();
  dataset.duration.Add(duration);
  for (const v1::SectionRecord& record_section : record.sections()) {
    Section& section =
        sections_[{record_section.name(), static_cast<int>(record_section.kind())}];
    section.entries += std::max<int64_t>(1, record_section.entries());
    section.values.Add(aggregation_internal::SectionValue(record_section));
    section.duration_seconds.Add(record_section.duration_seconds());
    section.cpu_seconds.Add(record_section.cpu_seconds());
  }
  return absl::OkStatus();
}

void ChunkPartialAggregate::Merge(const ChunkPartialAggregate& other) {
  num_chunks_ += other.num_chunks_;
  num_failed_ += other.num_failed_;
  num_retried_ += other.num_retried_;
  total_events_ += other.total_events_;
  duration_.Merge(other.duration_);
  memory_delta_.Merge(other.memory_delta_);
  events_.Merge(other.events_);
  time_per_event_.Merge(other.time_per_event_);
  for (const auto& [name, theirs] : other.datasets_) {
    Dataset& ours = datasets_[name];
    ours.events += theirs.events;
    ours.duration.Merge(theirs.duration);
  }
  for (const auto& [key, theirs] : other.sections_) {
    Section& ours = sections_[key];
    ours.entries += theirs.entries;
    ours.values.Merge(theirs.values);
    ours.duration_seconds.Merge(theirs.duration_seconds);
    ours.cpu_seconds.Merge(theirs.cpu_seconds);
  }
}

v1::ChunkMetrics ChunkPartialAggregate::ToChunkMetrics() const {
  v1::ChunkMetrics metrics;
  metrics.set_num_chunks(num_chunks_);
  metrics.set_num_failed_chunks(num_failed_);
  metrics.set_num_successful_chunks(num_chunks_ - num_failed_);
  metrics.set_num_retried_chunks(num_retried_);
  if (duration_.histogram.count() == 0) return metrics;
  *metrics.mutable_duration_seconds() = duration_.ToProto();
  *metrics.mutable_events() = events_.ToProto();
  if (memory_delta_.histogram.count() > 0) {
    *metrics.mutable_memory_delta_bytes() = memory_delta_.ToProto();
  }
  if (time_per_event_.histogram.count() > 0) {
    *metrics.mutable_time_per_event_seconds() = time_per_event_.ToProto();
  }
  metrics.set_total_events_from_chunks(total_events_);
  for (const auto& [name, dataset] : datasets_) {
    v1::DatasetChunkMetrics* out = metrics.add_per_dataset();
    const double n = static_cast<double>(dataset.duration.histogram.count());
    const double total = dataset.duration.sum.Sum();
    out->set_dataset(name);
    out->set_num_chunks(dataset.duration.histogram.count());
    out->set_total_duration_seconds(total);
    out->set_total_events(dataset.events);
    out->set_mean_duration_seconds(total / n);
    if (dataset.events > 0) {
      out->set_mean_events_per_chunk(static_cast<double>(dataset.events) / n);
    }
    *out->mutable_duration_distribution_seconds() = dataset.duration.ToProto();
  }
  const double total_chunk_seconds = duration_.sum.Sum();
  for (const auto& [key, section] : sections_) {
    v1::SectionStats* out = metrics.add_section_stats();
    out->set_name(key.first);
    out->set_kind(static_cast<v1::SectionRecord::Kind>(key.second));
    out->set_entries(section.entries);
    out->set_total(section.values.sum.Sum());
    *out->mutable_values() = section.values.ToProto();
    out->set_total_duration_seconds(section.duration_seconds.Sum());
    out->set_share_of_chunk_time_fraction(
        total_chunk_seconds > 0 ? section.duration_seconds.Sum() / total_chunk_seconds : 0.0);
    out->set_total_cpu_seconds(section.cpu_seconds.Sum());
  }
  return metrics;
}

}  // namespace roastcoffea
