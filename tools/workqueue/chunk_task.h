// What one Work Queue chunk task does on its worker: process its chunks with the sample
// analysis' dijet processor, each tracked by //instrumentation (TrackChunks) exactly as the
// thread pool tracks them, and merge the outputs and records.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_CHUNK_TASK_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_CHUNK_TASK_H_

#include <vector>

#include "tools/workqueue/task_command.h"
#include "tools/workqueue/task_output.h"

namespace roastcoffea {
namespace workqueue {

// The chunk's identity as the thread pool gives it (dataset, recorded file, range, uuid).
ChunkMetadata ChunkTaskMetadata(const TaskChunk& chunk);

// Never fails as a whole: a chunk whose processor throws (missing or corrupt input) gives a
// FAILED record with the error and an empty output; the others go on.
ChunkTaskOutput RunChunkTask(const std::vector<TaskChunk>& chunks);

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_CHUNK_TASK_H_
