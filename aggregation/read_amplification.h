// Read amplification: how many times the chunks read the bytes their files hold (internal to
// //aggregation; Aggregate stores it in WorkflowMetrics.distinct_file_bytes and
// read_amplification).
//
// Per file (ChunkRecord.file; records without a file are left out), every record counts,
// failed and retried ones too (their bytes were read):
//   read      = the records' summed compressed_bytes_read;
//   distinct  = the file's size when a record knows it (ChunkRecord.file_bytes, else
//               file_metadata.total_tree_bytes); otherwise estimated from the entry ranges:
//               read x (entries covered once) / (entries summed over the records), which is
//               below `read` only when ranges of the file overlap (the same entries read twice).
// read_amplification = sum of read / sum of distinct over the files with read > 0.
// Without a file size, re-reading inside a file (small chunks cutting the same compressed
// blocks) cannot be seen: the estimate is then 1 for that file, never a false alarm.
//
// Thread-safety: pure. Cost: O(records log records).
#ifndef ROASTCOFFEA_AGGREGATION_READ_AMPLIFICATION_H_
#define ROASTCOFFEA_AGGREGATION_READ_AMPLIFICATION_H_

#include <cstdint>
#include <optional>

#include "aggregation/chunk_columns.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace aggregation_internal {

struct ReadAmplification {
  int64_t bytes_read = 0;      // summed over the files counted
  int64_t distinct_bytes = 0;  // summed over the files counted
  double ratio = 0;            // bytes_read / distinct_bytes
  int files = 0;               // files counted
  int files_with_size = 0;     // of which the size was recorded (not estimated)
};

// Empty when no record with a file read any byte. The sums over files are compensated (the
// result does not depend on the order of the files).
std::optional<ReadAmplification> ComputeReadAmplification(const ChunkColumns& chunks);

// Convenience for tests: the same from records (valid ones; empty for invalid records).
std::optional<ReadAmplification> ComputeReadAmplification(
    const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);

}  // namespace aggregation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_READ_AMPLIFICATION_H_
