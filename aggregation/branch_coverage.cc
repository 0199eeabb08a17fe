#include "aggregation/branch_coverage.h"

#include <map>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

bool Earlier(const v1::ChunkRecord& a, const v1::ChunkRecord& b) {
  return std::make_tuple(a.start_unix_ns(), a.entry_start(), a.attempt(), a.uuid()) <
         std::make_tuple(b.start_unix_ns(), b.entry_start(), b.attempt(), b.uuid());
}

// The fields of `record` that Finish and Earlier read, without its accessed branches (Finish
// reads only their count, kept apart).
v1::ChunkRecord FirstFields(const v1::ChunkRecord& record) {
  v1::ChunkRecord first;
  first.set_start_unix_ns(record.start_unix_ns());
  first.set_entry_start(record.entry_start());
  first.set_attempt(record.attempt());
  first.set_uuid(record.uuid());
  *first.mutable_file_metadata() = record.file_metadata();
  first.set_branches_read_percent(record.branches_read_percent());
  first.set_bytes_read_percent(record.bytes_read_percent());
  first.set_accessed_bytes(record.accessed_bytes());
  return first;
}

}  // namespace

void BranchCoverageAccumulator::KeepFirst(const v1::ChunkRecord& record, File* file) {
  file->owned_first = std::make_shared<const v1::ChunkRecord>(FirstFields(record));
  file->first = file->owned_first.get();
  file->first_accessed_branches = record.accessed_branches_size();
}

std::optional<v1::BranchCoverage> ComputeBranchCoverage(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  BranchCoverageAccumulator accumulator;
  for (const v1::ChunkRecord& chunk : chunks) accumulator.Add(chunk);
  return accumulator.Finish();
}

BranchCoverageAccumulator::File* BranchCoverageAccumulator::AddBranches(
    const v1::ChunkRecord& chunk) {
  any_record_ = true;
  if (!chunk.has_file_metadata() && chunk.accessed_branches().empty()) return nullptr;
  all_branches_.insert(chunk.accessed_branches().begin(), chunk.accessed_branches().end());
  File& file = files_[chunk.file()];
  file.branches.insert(chunk.accessed_branches().begin(), chunk.accessed_branches().end());
  const bool first =
      chunk.has_file_metadata() && (file.first == nullptr || Earlier(chunk, *file.first));
  return first ? &file : nullptr;
}

void BranchCoverageAccumulator::Add(const v1::ChunkRecord& chunk) {
  if (File* file = AddBranches(chunk)) {
    file->first = &chunk;
    file->owned_first.reset();
    file->first_accessed_branches = chunk.accessed_branches_size();
  }
}

void BranchCoverageAccumulator::AddCopying(const v1::ChunkRecord& chunk) {
  if (File* file = AddBranches(chunk)) KeepFirst(chunk, file);
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
  if (file->first != nullptr) {
    const v1::ChunkRecord& first = *file->first;
    using Key = std::tuple<int64_t, int64_t, uint32_t, absl::string_view>;
    const Key key(table.start_unix_ns(i), table.Int(chunk_field::kEntryStart, i), table.attempt(i),
                  table.String(chunk_field::kUuid, i));
    if (!(key < Key(first.start_unix_ns(), first.entry_start(), first.attempt(), first.uuid()))) {
      return;
    }
  }
  KeepFirst(table.Record(i), file);
}

std::optional<v1::BranchCoverage> BranchCoverageAccumulator::Finish() const {
  if (!any_record_) return std::nullopt;
  const auto& files = files_;
  v1::BranchCoverage coverage;
  coverage.set_total_branches_read(static_cast<int64_t>(all_branches_.size()));
  double branches_percent_sum = 0;
  double bytes_percent_sum = 0;
  for (const auto& [name, file] : files) {
    if (file.first == nullptr) continue;
    const v1::ChunkRecord& record = *file.first;
    const v1::FileMetadata& metadata = record.file_metadata();
    const double total_branches = static_cast<double>(metadata.total_branches());
    const double tree_bytes = static_cast<double>(metadata.total_tree_bytes());
    double branches_percent = record.branches_read_percent();
    if (branches_percent == 0 && total_branches > 0) {
      branches_percent = 100.0 * file.first_accessed_branches / total_branches;
    }
    double bytes_percent = record.bytes_read_percent();
    if (bytes_percent == 0 && tree_bytes > 0) {
      bytes_percent = 100.0 * static_cast<double>(record.accessed_bytes()) / tree_bytes;
    }
    v1::FileReadMetrics* out = coverage.add_files();
    out->set_file(name);
    out->set_total_branches(metadata.total_branches());
    out->set_total_tree_bytes(metadata.total_tree_bytes());
    out->set_branches_read_percent(branches_percent);
    out->set_bytes_read(record.accessed_bytes());
    out->set_bytes_read_percent(bytes_percent);
    out->set_compression_ratio(metadata.compression_ratio());
    out->set_branches_read_union_percent(
        total_branches > 0 ? 100.0 * static_cast<double>(file.branches.size()) / total_branches
                           : 0.0);
    if (metadata.compression_ratio() > 0) {
      coverage.add_compression_ratios(metadata.compression_ratio());
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
