// The output file of a Work Queue chunk task: the dijet output and chunk records of its chunks,
// as a TaskOutput protobuf (task_output.proto). Written by chunk_task on the worker, read by
// the manager.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_OUTPUT_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/dijet_processor.h"

namespace roastcoffea {
namespace workqueue {

using ChunkTaskOutput = TrackedOutput<sample_analysis::DijetOutput>;

// Serialized TaskOutput. Exact: histogram counts and durations round-trip unchanged.
std::string EncodeTaskOutput(const ChunkTaskOutput& output);

// DataLoss naming `what` (e.g. the file) when the bytes are not a TaskOutput or hold an
// impossible histogram (negative counts, bad binning).
absl::StatusOr<ChunkTaskOutput> DecodeTaskOutput(const std::string& bytes, const std::string& what);

// The file at `path` (written atomically: a temporary sibling, then rename).
absl::Status WriteTaskOutputFile(const ChunkTaskOutput& output, const std::string& path);
// NotFound when it is missing; DecodeTaskOutput's errors.
absl::StatusOr<ChunkTaskOutput> ReadTaskOutputFile(const std::string& path);

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_OUTPUT_H_
