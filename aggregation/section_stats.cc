#include "aggregation/section_stats.h"

#include <algorithm>
#include <numeric>

#include "absl/types/span.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

const char* TypeName(v1::SectionRecord::Kind kind) {
  switch (kind) {
    case v1::SectionRecord::KIND_TIME:
      return "time";
    case v1::SectionRecord::KIND_MEMORY:
      return "memory";
    case v1::SectionRecord::KIND_BYTES:
      return "bytes";
    default:
      return "section";
  }
}

// A section record in column form, viewing its name.
SectionRow RowOf(const v1::SectionRecord& record) {
  SectionRow row;
  row.name = record.name();
  row.kind = static_cast<int32_t>(record.kind());
  row.entries = record.entries();
  row.duration_seconds = record.duration_seconds();
  row.cpu_seconds = record.cpu_seconds();
  row.memory_delta_bytes = record.memory_delta_bytes();
  row.bytes_read = record.bytes_read();
  return row;
}

}  // namespace

double SectionValue(const SectionRow& row) {
  switch (row.kind) {
    case v1::SectionRecord::KIND_MEMORY:
      return static_cast<double>(row.memory_delta_bytes);
    case v1::SectionRecord::KIND_BYTES:
      return static_cast<double>(row.bytes_read);
    default:
      return row.duration_seconds;
  }
}

double SectionValue(const v1::SectionRecord& record) { return SectionValue(RowOf(record)); }

int SectionAccumulator::Intern(const SectionRow& record, size_t position) {
  // The guess is only a guess: the previous chunk may have had fewer sections, or none yet.
  if (position < previous_ids_.size() &&
      static_cast<size_t>(previous_ids_[position]) < sections_.size()) {
    const Section& guess = sections_[static_cast<size_t>(previous_ids_[position])];
    if (guess.kind == record.kind && guess.name == record.name) return previous_ids_[position];
  }
  auto [it, inserted] = index_.try_emplace(std::make_pair(std::string(record.name), record.kind),
                                           static_cast<int>(sections_.size()));
  if (inserted) {
    Section& section = sections_.emplace_back();
    section.name = std::string(record.name);
    section.kind = static_cast<v1::SectionRecord::Kind>(record.kind);
    // Room for a value per chunk for the first few names only: a measurement with many
    // distinct names (each in few chunks) must not reserve names x chunks values.
    constexpr size_t kReservedSections = 64;
    if (sections_.size() <= kReservedSections) section.values.reserve(expected_chunks_);
  }
  return it->second;
}

void SectionAccumulator::AddSection(const SectionRow& record, size_t position) {
  const int id = Intern(record, position);
  previous_ids_[position] = id;
  Section& section = sections_[static_cast<size_t>(id)];
  section.entries += std::max<int64_t>(1, record.entries);
  section.values.push_back(SectionValue(record));
  section.duration_seconds.Add(record.duration_seconds);
  section.cpu_seconds.Add(record.cpu_seconds);
  if (record.kind == v1::SectionRecord::KIND_MEMORY) {
    const double delta = static_cast<double>(record.memory_delta_bytes);
    const bool first = section.values.size() == 1;
    section.memory_delta_bytes.Add(delta);
    section.min_memory_delta_bytes =
        first ? delta : std::min(section.min_memory_delta_bytes, delta);
    section.max_memory_delta_bytes =
        first ? delta : std::max(section.max_memory_delta_bytes, delta);
  }
}

void SectionAccumulator::AddChunk(
    const google::protobuf::RepeatedPtrField<v1::SectionRecord>& sections) {
  if (previous_ids_.size() < static_cast<size_t>(sections.size())) {
    previous_ids_.resize(static_cast<size_t>(sections.size()), 0);
  }
  for (int i = 0; i < sections.size(); ++i) {
    AddSection(RowOf(sections[i]), static_cast<size_t>(i));
  }
}

void SectionAccumulator::AddChunk(const ChunkTable& table, size_t begin, size_t end) {
  if (previous_ids_.size() < end - begin) previous_ids_.resize(end - begin, 0);
  for (size_t s = begin; s < end; ++s) AddSection(table.Section(s), s - begin);
}

void SectionAccumulator::AddJobs(std::vector<std::optional<Distribution>>* distributions,
                                 std::vector<std::function<void()>>* jobs) const {
  distributions->resize(sections_.size());
  for (size_t id = 0; id < sections_.size(); ++id) {
    jobs->push_back([this, distributions, id] {
      Distribution& out = (*distributions)[id].emplace();
      out.stats =
          ComputeDistributionStatsOf(sections_[id].values, /*with_percentiles=*/true, &out.total);
    });
  }
}

void SectionAccumulator::Finish(double total_chunk_seconds,
                                const std::vector<std::optional<Distribution>>& distributions,
                                v1::ChunkMetrics* metrics) const {
  std::vector<size_t> order(sections_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sections_[a].name != sections_[b].name) return sections_[a].name < sections_[b].name;
    return sections_[a].kind < sections_[b].kind;
  });
  for (size_t id : order) {
    const Section& section = sections_[id];
    const double count = static_cast<double>(section.entries);
    const double total_duration = section.duration_seconds.Sum();

    v1::SectionSummary* summary = metrics->add_sections();
    summary->set_name(section.name);
    summary->set_type(TypeName(section.kind));
    summary->set_count(section.entries);
    summary->set_total_duration_seconds(total_duration);
    summary->set_mean_duration_seconds(total_duration / count);
    if (section.kind == v1::SectionRecord::KIND_MEMORY) {
      summary->set_mean_memory_delta_bytes(section.memory_delta_bytes.Sum() / count);
      summary->set_min_memory_delta_bytes(section.min_memory_delta_bytes);
      summary->set_max_memory_delta_bytes(section.max_memory_delta_bytes);
    }

    v1::SectionStats* stats = metrics->add_section_stats();
    stats->set_name(section.name);
    stats->set_kind(section.kind);
    stats->set_entries(section.entries);
    Distribution computed;  // for a section whose job did not run
    const bool has_job = id < distributions.size() && distributions[id].has_value();
    if (!has_job)
      computed.stats = ComputeDistributionStatsOf(section.values, true, &computed.total);
    const Distribution& distribution = has_job ? *distributions[id] : computed;
    stats->set_total(distribution.total);
    *stats->mutable_values() = distribution.stats;
    stats->set_total_duration_seconds(total_duration);
    stats->set_share_of_chunk_time_fraction(
        total_chunk_seconds > 0 ? total_duration / total_chunk_seconds : 0.0);
    stats->set_total_cpu_seconds(section.cpu_seconds.Sum());
  }
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
