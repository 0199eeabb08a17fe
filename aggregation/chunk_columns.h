// The chunk records in compact columns (internal to //aggregation): one vector per number a
// figure reads, interned ids for files, datasets and processes, built in the one pass over the
// records. Every chunk figure after that pass (chunk statistics, chunk_info, read amplification,
// the CPU split, the run's chunk span) reads these columns, not the records: a million records
// are a million scattered heap objects with strings of their own, the columns a few contiguous
// arrays (issue #25).
#ifndef ROASTCOFFEA_AGGREGATION_CHUNK_COLUMNS_H_
#define ROASTCOFFEA_AGGREGATION_CHUNK_COLUMNS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "aggregation/branch_coverage.h"
#include "aggregation/section_stats.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

// Records of a table, each materialized on its first Get and kept while this object lives (so
// a reference stays valid): for the few records read whole (failed ones, ties). Thread-safe.
class TableRecords {
 public:
  explicit TableRecords(const ChunkTable* table) : table_(table) {}
  const v1::ChunkRecord& Get(size_t i) const;
  // How many records were built so far (a rule that reads every record whole builds them all).
  size_t built() const;

 private:
  const ChunkTable* table_;
  mutable absl::Mutex mu_;
  mutable absl::node_hash_map<size_t, v1::ChunkRecord> records_ ABSL_GUARDED_BY(mu_);
};

struct ChunkColumns {
  // Id of "no such name": a record without a file, or a failed record's dataset.
  static constexpr uint32_t kNone = UINT32_MAX;

  // Bits of `flags`.
  static constexpr uint8_t kFailed = 1;           // status CHUNK_STATUS_FAILED
  static constexpr uint8_t kMeasuredMemory = 2;   // memory before or after non-zero
  static constexpr uint8_t kHasPeakLive = 4;      // peak_live_bytes set
  static constexpr uint8_t kHasRunQueueWait = 8;  // run_queue_wait_seconds set
  static constexpr uint8_t kHasMachineLoad = 16;  // machine_load and machine_cpus both set

  size_t size() const { return duration_seconds.size(); }
  bool failed(size_t i) const { return (flags[i] & kFailed) != 0; }
  bool has(size_t i, uint8_t flag) const { return (flags[i] & flag) != 0; }

  // One entry per record, in the records' order.
  std::vector<int64_t> start_unix_ns, end_unix_ns, entry_start, entry_stop, events;
  std::vector<int64_t> compressed_bytes_read;
  std::vector<double> duration_seconds, cpu_seconds;
  // The optional values below are empty when no record has them (read them only under their
  // flag), else one per record: a million zeros cost 8 MB at Aggregate's peak (issue #25).
  std::vector<double> run_queue_wait_seconds;  // 0 where not kHasRunQueueWait
  // memory_after_bytes - memory_before_bytes in double (an int64 difference of arbitrary
  // inputs could overflow); 0 where not kMeasuredMemory.
  std::vector<double> memory_delta_bytes;
  std::vector<int64_t> peak_live_bytes;  // 0 where not kHasPeakLive
  std::vector<uint32_t> attempt;
  std::vector<uint8_t> flags;
  std::vector<uint32_t> file;     // index into file_names, kNone for no file
  std::vector<uint32_t> dataset;  // successful records: index into dataset_names; failed: kNone
  // The process a record ran in (its worker without a threadpool's "/thread-<k>" suffix), as
  // an id 0..num_processes-1.
  std::vector<uint32_t> process;
  // The record's worker (index into worker_names) and thread_index: its worker slot.
  std::vector<uint32_t> worker;
  std::vector<int64_t> thread_index;

  // Interned names, numbered in order of first appearance. A dataset "" is "unknown" (the
  // original's name), and only successful records name datasets.
  std::vector<std::string> file_names;
  // By file id: the largest size its records state (file_bytes, else
  // file_metadata.total_tree_bytes; 0 unknown), the one per-file figure read amplification needs
  // (a column per record cost 8 bytes per chunk).
  std::vector<int64_t> file_sizes;
  std::vector<std::string> dataset_names;
  std::vector<std::string> worker_names;
  size_t num_processes = 0;
  // The records the columns were built from, for the fields read only for a few records (the
  // failed ones' texts): `records`, or `table` (then `records` is null). Read them by record().
  const google::protobuf::RepeatedPtrField<v1::ChunkRecord>* records = nullptr;
  const ChunkTable* table = nullptr;
  std::shared_ptr<const TableRecords> table_records;  // of `table`

  // Record `i` of either source (valid while the columns and their source live).
  const v1::ChunkRecord& record(size_t i) const {
    return records != nullptr ? records->Get(static_cast<int>(i)) : table_records->Get(i);
  }
  // Whether the columns were built from `chunks` or from `chunk_table` (the non-null one).
  bool BuiltFrom(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>* chunks,
                 const ChunkTable* chunk_table) const {
    return chunks != nullptr ? records == chunks : chunk_table != nullptr && table == chunk_table;
  }
};

// The one pass over `chunks`: validates each record (ValidateChunkRecord: the first invalid
// record's error is returned), feeds `branches` with every record and `sections` with the
// sections of the successful ones, and fills the columns. `chunks` must outlive the result.
// With at least `parallel_min_records` records the pass is split by what it makes, not by
// records: the columns on the calling thread, validation, branches and sections on a helper
// thread (started and joined inside), each in record order, so the result is the same
// (Aggregate asks for it only for records in memory order, see RecordsMostlyInMemoryOrder).
// Cost: O(records + sections), one hash lookup per record and interned column (fewer when
// consecutive records share a name).
absl::StatusOr<ChunkColumns> BuildChunkColumns(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
    BranchCoverageAccumulator* branches, SectionAccumulator* sections,
    size_t parallel_min_records = SIZE_MAX);

// The same pass over the records of `table`, read from its columns without building records
// (only a record with fields outside them, HasRest, is materialized, one at a time): the same
// columns, names, accumulations and first error as BuildChunkColumns of the table's records,
// with the same split over two threads from `parallel_min_records` records (a table's columns
// are always in memory order). `table` must outlive the result. Cost: O(records + sections),
// a hash lookup per record only for an interned name that differs from the previous record's.
absl::StatusOr<ChunkColumns> BuildChunkColumns(const ChunkTable& table,
                                               BranchCoverageAccumulator* branches,
                                               SectionAccumulator* sections,
                                               size_t parallel_min_records = SIZE_MAX);

// The columns alone, without validation, branches or sections: for the findings of a caller
// without columns (ComputeFindings in tests). `chunks` must outlive the result. Cost: O(records).
ChunkColumns ColumnsOf(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);
ChunkColumns ColumnsOf(const ChunkTable& table);

// Whether most records follow each other in memory (each a little after the one before, as
// when they were added one by one), judged on the first few thousand. Only then does the
// two-thread pass pay: on records scattered in memory both threads fetch every record from
// RAM, and the split cost more CPU and wall time than it saved (issue #25: 10^6 shuffled
// records, +15 % CPU). Cost: O(1).
bool RecordsMostlyInMemoryOrder(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_CHUNK_COLUMNS_H_
