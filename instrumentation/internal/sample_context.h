// What a sampling profiler (backends/threadpool/sampling_profiler.h) reads about the thread it
// interrupted. Internal to roastcoffea: not for analyses, which link //instrumentation's
// public headers only.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_SAMPLE_CONTEXT_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_SAMPLE_CONTEXT_H_

#include <cstdint>

namespace roastcoffea {
namespace instrumentation_internal {

struct ThreadSampleContext {
  // Name of the innermost ScopedTimer open in the thread's current chunk; null when none.
  const char* time_section = nullptr;
  bool in_chunk = false;  // a chunk is being tracked on this thread
  // The thread's ChunkRecord.thread_index; -1 until its first chunk record got one.
  int64_t thread_index = -1;
};

// The calling thread's context. Async-signal-safe (thread_local loads only; no allocation,
// locks or lazy initialisation): meant to be called from a signal handler on that thread.
ThreadSampleContext CurrentSampleContext();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_SAMPLE_CONTEXT_H_
