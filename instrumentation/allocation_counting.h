// Exact allocation counting: link //instrumentation:allocation_counting into a binary (it
// replaces the global operator new and delete, every variant) and chunk records and
// ScopedMemory sections also get, for the thread that ran them:
//   * allocated_bytes: bytes requested through operator new during the chunk / section;
//   * peak_live_bytes: the highest (allocated - freed) on that thread during the chunk /
//     section, above its level at the start. Memory freed by another thread than the one that
//     allocated it lowers the freeing thread's live bytes.
// Unlike RSS deltas these are exact, per thread, and blind to other threads and to the
// allocator's caching. Memory obtained with malloc directly is not counted. Link it statically
// into the binary (the default for cc_binary): if another operator new wins (a sanitizer
// runtime, or this code in a shared library loaded after another allocator), the fields stay
// unset rather than wrong.
//
// Cost: every operator new / delete adds a 16-byte header to the block (alignment above 16
// adds up to the alignment) and updates three thread_local counters: a few nanoseconds per
// call (bench/allocation_counting_benchmark.cc, BM_NewDelete). No locks, no atomics.
// Thread-safety: counters are thread_local; the functions below read the calling thread's.
#ifndef ROASTCOFFEA_INSTRUMENTATION_ALLOCATION_COUNTING_H_
#define ROASTCOFFEA_INSTRUMENTATION_ALLOCATION_COUNTING_H_

#include <cstdint>

namespace roastcoffea {

struct AllocationCounters {
  int64_t allocated_bytes = 0;  // requested through operator new on this thread, ever
  int64_t freed_bytes = 0;      // released through operator delete on this thread, ever
  int64_t live_bytes = 0;       // allocated_bytes - freed_bytes
};

// The calling thread's counters since it started.
AllocationCounters ThreadAllocationCounters();

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_ALLOCATION_COUNTING_H_
