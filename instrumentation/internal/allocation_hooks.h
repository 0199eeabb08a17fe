// How the optional //instrumentation:allocation_counting target (which replaces the global
// operator new/delete) hands its per-thread counters to chunk tracking and ScopedMemory,
// without the core library depending on it. Internal to //instrumentation.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_ALLOCATION_HOOKS_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_ALLOCATION_HOOKS_H_

#include <atomic>
#include <cstdint>

namespace roastcoffea {
namespace instrumentation_internal {

// Counters of the calling thread since it started. live = allocated - freed on this thread
// (memory freed by another thread than the one that allocated it moves live between them).
struct ThreadAllocationCounters {
  int64_t allocated_bytes = 0;
  int64_t live_bytes = 0;
  int64_t peak_live_bytes = 0;  // highest live_bytes since the last ExchangePeak
};

struct AllocationHooks {
  ThreadAllocationCounters (*read)();
  // Sets the thread's peak to `peak_live_bytes` and returns the previous peak.
  int64_t (*exchange_peak)(int64_t peak_live_bytes);
};

// Null unless the allocation-counting target is linked (it sets this during static
// initialisation). Read with acquire ordering.
extern std::atomic<const AllocationHooks*> g_allocation_hooks;

// One scope's allocation measurement on the calling thread. Begin starts a fresh peak at the
// current live level; End restores the enclosing scope's peak, so scopes nest correctly.
struct AllocationMark {
  bool active = false;  // false when the counting target is not linked: nothing measured
  int64_t allocated_bytes = 0;
  int64_t live_bytes = 0;
  int64_t outer_peak_live_bytes = 0;
};

inline AllocationMark BeginAllocationMark() {
  AllocationMark mark;
  const AllocationHooks* hooks = g_allocation_hooks.load(std::memory_order_acquire);
  if (hooks == nullptr) return mark;
  const ThreadAllocationCounters now = hooks->read();
  mark.active = true;
  mark.allocated_bytes = now.allocated_bytes;
  mark.live_bytes = now.live_bytes;
  mark.outer_peak_live_bytes = hooks->exchange_peak(now.live_bytes);
  return mark;
}

// Bytes allocated since `mark` and the peak of live bytes above the level at `mark`.
// Requires mark.active.
inline void EndAllocationMark(const AllocationMark& mark, int64_t* allocated_bytes,
                              int64_t* peak_live_bytes) {
  const AllocationHooks* hooks = g_allocation_hooks.load(std::memory_order_acquire);
  const ThreadAllocationCounters now = hooks->read();
  *allocated_bytes = now.allocated_bytes - mark.allocated_bytes;
  const int64_t above = now.peak_live_bytes - mark.live_bytes;
  *peak_live_bytes = above > 0 ? above : 0;
  hooks->exchange_peak(now.peak_live_bytes > mark.outer_peak_live_bytes
                           ? now.peak_live_bytes
                           : mark.outer_peak_live_bytes);
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_ALLOCATION_HOOKS_H_
