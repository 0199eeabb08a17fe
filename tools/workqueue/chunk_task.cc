#include "tools/workqueue/chunk_task.h"

#include "instrumentation/chunk_tracking.h"
#include "sample_analysis/dijet_processor.h"

namespace roastcoffea {
namespace workqueue {

ChunkMetadata ChunkTaskMetadata(const TaskChunk& chunk) {
  return sample_analysis::WorkItemChunkMetadata(
      {chunk.dataset, chunk.file, chunk.entry_start, chunk.entry_stop});
}

ChunkTaskOutput RunChunkTask(const std::vector<TaskChunk>& chunks) {
  ChunkTrackingOptions options;
  options.failure_policy = FailurePolicy::kContinue;
  // One processor for the task: it keeps the open file between consecutive chunks of a file.
  const sample_analysis::DijetProcessor processor;
  ChunkTaskOutput total;
  for (const TaskChunk& chunk : chunks) {
    const std::string input = chunk.input;
    auto tracked = TrackChunks(
        [&processor, &input](const ChunkMetadata& metadata) {
          // Reads the sandbox's copy; the record names the manager's path (metadata.file).
          return processor(sample_analysis::WorkItem{metadata.dataset, input, metadata.entry_start,
                                                     metadata.entry_stop});
        },
        options);
    total += tracked(ChunkTaskMetadata(chunk));
  }
  return total;
}

}  // namespace workqueue
}  // namespace roastcoffea
