// Branch coverage / data access from chunk records (internal to //aggregation).
#ifndef ROASTCOFFEA_AGGREGATION_BRANCH_COVERAGE_H_
#define ROASTCOFFEA_AGGREGATION_BRANCH_COVERAGE_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// The original's aggregate_branch_coverage (docs/reference.md §2.6). nullopt for no records.
//   files (file_metadata + file_read_metrics, sorted by file): for each file with a record
//     carrying file_metadata, the metadata and the percentages of the file's "first" record.
//     The original takes the first in list order; here "first" is the earliest start_unix_ns
//     (then entry_start, attempt, uuid), so the result does not depend on the record order.
//     A record whose branches_read_percent / bytes_read_percent are 0 gets them computed as
//     100 * accessed branches / total_branches and 100 * accessed_bytes / total_tree_bytes.
//     branches_read_union_percent (fix, docs/reference.md §6.12): distinct branches of all the
//     file's records;
//   compression_ratios / bytes_read_percent_per_file: the files' values > 0 (as the original,
//     whose average keeps the zeros);
//   avg_branches_read_percent / avg_bytes_read_percent: unweighted mean over files, 0 without;
//   total_branches_read: size of the union of accessed_branches over all records.
// Cost: O(records + branches).
std::optional<v1::BranchCoverage> ComputeBranchCoverage(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);

// The same, one record at a time (for the single pass over the records). The records given
// need not outlive Finish (the fields read of each file's earliest one are copied). Cost:
// O(branches) per record.
class BranchCoverageAccumulator {
 public:
  void Add(const v1::ChunkRecord& chunk);
  // The same as Add (kept for the callers that reuse one message).
  void AddCopying(const v1::ChunkRecord& chunk) { Add(chunk); }
  // A record without file_metadata and accessed_branches (all the same to the coverage).
  void AddWithoutBranchData() { any_record_ = true; }
  // The same as AddCopying(table.Record(i)) for record `i` of `table`, given `rest`: its
  // remainder parsed alone (ChunkTable::RestBytes; accessed_branches and file_metadata are
  // there). The record is built only when it becomes its file's earliest. `rest_serial`
  // identifies `rest`'s content (equal serials, equal remainders; 0 none): a remainder added
  // recently for the same file adds no branch, and nothing is hashed (a file's chunks mostly
  // share their branch list).
  void AddTableRecord(const ChunkTable& table, size_t i, const v1::ChunkRecord& rest,
                      uint64_t rest_serial);
  std::optional<v1::BranchCoverage> Finish() const;

 private:
  // What the figures read of a file's earliest record with file_metadata: a copy of these
  // fields rather than of the record (or a pointer to it), which with a chunk or two per file
  // was ~110 bytes per chunk at Aggregate's peak (issue #25).
  struct FirstRecord {
    explicit FirstRecord(const v1::ChunkRecord& record);
    // Whether a record with these fields comes before this one.
    bool After(int64_t start_unix_ns, int64_t entry_start, uint32_t attempt,
               absl::string_view uuid) const;

    int64_t start_unix_ns, entry_start;
    uint32_t attempt;
    std::string uuid;
    double compression_ratio;
    int64_t total_branches, total_tree_bytes;
    double branches_read_percent, bytes_read_percent;
    int64_t accessed_bytes;
    int accessed_branches;  // accessed_branches_size()
  };
  struct File {
    std::optional<FirstRecord> first;
    absl::flat_hash_set<std::string> branches;
  };
  bool any_record_ = false;
  absl::flat_hash_set<std::string> all_branches_;
  std::map<std::string, File> files_;  // sorted by file
  // The last kRecent (remainder serial, file) pairs AddTableRecord added, round-robin.
  struct Added {
    uint64_t rest_serial = 0;  // 0: unused
    const ChunkTable* table = nullptr;
    uint32_t file_id = 0;
    File* file = nullptr;
  };
  static constexpr size_t kRecent = 8;
  std::array<Added, kRecent> recent_;
  size_t next_recent_ = 0;
};

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_BRANCH_COVERAGE_H_
