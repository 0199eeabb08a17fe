#include "instrumentation/internal/sample_context.h"

#include "instrumentation/internal/chunk_context.h"

namespace roastcoffea {
namespace instrumentation_internal {

ThreadSampleContext CurrentSampleContext() {
  ThreadSampleContext context;
  const ChunkState* chunk = CurrentChunk();
  if (chunk != nullptr) {
    context.in_chunk = true;
    context.time_section = chunk->time_section;
  }
  context.thread_index = ThreadIndexIfAssigned();
  return context;
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
