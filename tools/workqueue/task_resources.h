// What a chunk task asks its worker for. Work Queue gives a task that names only its cores the
// worker's whole memory and disk in proportion; a worker that re-measures a slightly smaller
// disk then gives back a task it had not started yet, which shows as a lost attempt. Explicit,
// modest memory and disk requests keep the tasks far below what any worker measures.
#ifndef ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_RESOURCES_H_
#define ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_RESOURCES_H_

#include <cstdint>

namespace roastcoffea {
namespace workqueue {

struct TaskResources {
  int64_t cores = 1;
  int64_t memory_mb = 0;
  int64_t disk_mb = 0;
};

// The rule, from the task's chunks:
// - memory: 32 MB (program, buffers) + 512 bytes per event of its chunks, rounded up to a MB.
//   chunk_task's peak RSS measured 11 MB for 25,000 events and 34 MB for 200,000 (about
//   8 MB + 130 bytes per event), so the request is 2 to 4 times what it uses.
// - disk: its inputs (the distinct files it reads and the chunk task program) + 16 MB for its
//   output and sandbox, rounded up to a MB.
// `events` and `input_bytes` below 0 count as 0.
TaskResources ChunkTaskResources(int64_t events, int64_t input_bytes);

}  // namespace workqueue
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TOOLS_WORKQUEUE_TASK_RESOURCES_H_
