#include "aggregation/branch_coverage.h"

#include <map>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace aggregation_internal {

BranchCoverageAccumulator::FirstRecord::FirstRecord(const v1::ChunkRecord& record)
    : start_unix_ns(record.start_unix_ns()),
      entry_start(record.entry_start()),
      attempt(record.attempt()),
      uuid(record.uuid()),
      compression_ratio(record.file_metadata().compression_ratio()),
      total_branches(record.file_metadata().total_branches()),
      total_tree_bytes(record.file_metadata().total_tree_bytes()),
      branches_read_percent(record.branches_read_percent()),
      bytes_read_percent(record.bytes_read_percent()),
      accessed_bytes(record.accessed_bytes()),
      accessed_branches(record.accessed_branches_size()) {}

bool BranchCoverageAccumulator::FirstRecord::After(int64_t start, int64_t entry,
                                                   uint32_t attempt_of,
                                                   absl::string_view uuid_of) const {
  using Key = std::tuple<int64_t, int64_t, uint32_t, absl::string_view>;
  return Key(start, entry, attempt_of, uuid_of) <
         Key(start_unix_ns, entry_start, attempt, absl::string_view(uuid));
}

std::optional<v1::BranchCoverage> ComputeBranchCoverage(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  BranchCoverageAccumulator accumulator;
  for (const v1::ChunkRecord& chunk : chunks) accumulator.Add(chunk);
  return accumulator.Finish();
}

void BranchCoverageAccumulator::Add(const v1::ChunkRecord& chunk) {
  any_record_ = true;
  if (!chunk.has_file_metadata() && chunk.accessed_branches().empty()) return;
  all_branches_.insert(chunk.accessed_branches().begin(), chunk.accessed_branches().end());
  File& file = files_[chunk.file()];
  file.branches.insert(chunk.accessed_branches().begin(), chunk.accessed_branches().end());
  if (chunk.has_file_metadata() &&
      (!file.first.has_value() || file.first->After(chunk.start_unix_ns(), chunk.entry_start(),
                                                    chunk.attempt(), chunk.uuid()))) {
    file.first.emplace(chunk);
  }
}

void BranchCoverageAccumulator::AddTableRecord(const ChunkTable& table, size_t i,
                                               const v1::ChunkRecord& rest, uint64_t rest_serial) {
  any_record_ = true;
  if (!rest.has_file_metadata() && rest.accessed_branches().empty()) return;
  const uint32_t file_id = table.StringId(chunk_field::kFile, i);
  File* file = nullptr;
  for (const Added& added : recent_) {
    if (rest_serial != 0 && added.rest_serial == rest_serial && added.table == &table &&
        added.file_id == file_id) {
      file = added.file;
      break;
    }
  }
  if (file == nullptr) {
    // Branches not added already for this file: hash them.
    all_branches_.insert(rest.accessed_branches().begin(), rest.accessed_branches().end());
    file = &files_[std::string(table.InternedString(file_id))];
    file->branches.insert(rest.accessed_branches().begin(), rest.accessed_branches().end());
    recent_[next_recent_] = Added{rest_serial, &table, file_id, file};
    next_recent_ = (next_recent_ + 1) % kRecent;
  }
  if (!rest.has_file_metadata()) return;
  if (file->first.has_value() &&
      !file->first->After(table.start_unix_ns(i), table.Int(chunk_field::kEntryStart, i),
                          table.attempt(i), table.String(chunk_field::kUuid, i))) {
    return;
  }
  file->first.emplace(table.Record(i));
}

std::optional<v1::BranchCoverage> BranchCoverageAccumulator::Finish() const {
  if (!any_record_) return std::nullopt;
  const auto& files = files_;
  v1::BranchCoverage coverage;
  coverage.set_total_branches_read(static_cast<int64_t>(all_branches_.size()));
  double branches_percent_sum = 0;
  double bytes_percent_sum = 0;
  for (const auto& [name, file] : files) {
    if (!file.first.has_value()) continue;
    const FirstRecord& record = *file.first;
    const double total_branches = static_cast<double>(record.total_branches);
    const double tree_bytes = static_cast<double>(record.total_tree_bytes);
    double branches_percent = record.branches_read_percent;
    if (branches_percent == 0 && total_branches > 0) {
      branches_percent = 100.0 * record.accessed_branches / total_branches;
    }
    double bytes_percent = record.bytes_read_percent;
    if (bytes_percent == 0 && tree_bytes > 0) {
      bytes_percent = 100.0 * static_cast<double>(record.accessed_bytes) / tree_bytes;
    }
    v1::FileReadMetrics* out = coverage.add_files();
    out->set_file(name);
    out->set_total_branches(record.total_branches);
    out->set_total_tree_bytes(record.total_tree_bytes);
    out->set_branches_read_percent(branches_percent);
    out->set_bytes_read(record.accessed_bytes);
    out->set_bytes_read_percent(bytes_percent);
    out->set_compression_ratio(record.compression_ratio);
    out->set_branches_read_union_percent(
        total_branches > 0 ? 100.0 * static_cast<double>(file.branches.size()) / total_branches
                           : 0.0);
    if (record.compression_ratio > 0) {
      coverage.add_compression_ratios(record.compression_ratio);
    }
    if (bytes_percent > 0) coverage.add_bytes_read_percent_per_file(bytes_percent);
    branches_percent_sum += branches_percent;
    bytes_percent_sum += bytes_percent;
  }
  if (coverage.files_size() > 0) {
    coverage.set_avg_branches_read_percent(branches_percent_sum / coverage.files_size());
    coverage.set_avg_bytes_read_percent(bytes_percent_sum / coverage.files_size());
  }
  return coverage;
}

}  // namespace aggregation_internal
}  // namespace roastcoffea
