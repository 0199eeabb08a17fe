// The per-thread state behind TrackChunk and the section scopes. Internal to //instrumentation.
//
// Every chunk being tracked owns a ChunkState (on TrackChunk's stack). The thread's chain of
// live chunks (innermost first, linked by `parent`) is thread_local, so scopes need no context
// and threads never share state: nothing on the scope path is locked, atomic or allocated.
#ifndef ROASTCOFFEA_INSTRUMENTATION_INTERNAL_CHUNK_CONTEXT_H_
#define ROASTCOFFEA_INSTRUMENTATION_INTERNAL_CHUNK_CONTEXT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "instrumentation/sections.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace roastcoffea {
namespace instrumentation_internal {

// Mirrors v1::SectionRecord::Kind without pulling the proto into the scope code.
enum class SectionKind : int { kTime = 1, kMemory = 2, kBytes = 3 };

// One accumulator per (name pointer, kind) in a chunk. Values are sums over entries.
struct SectionSlot {
  const char* name;
  SectionKind kind;
  uint32_t entries;
  uint64_t ticks;  // kTime: summed Ticks() deltas, converted to ns when the chunk ends
  int64_t cpu_ns;  // kTime with CPU time requested
  int64_t memory_delta_bytes;
  int64_t bytes_read;
  int64_t allocated_bytes;  // kMemory, with allocation counting linked
  int64_t peak_live_bytes;
};

// One closed time scope, for the timeline: 16 bytes, so that appending stays cheap.
// packed = duration ticks << 24 | min(depth, 0xffff) << 8 | slot index (slots, then the three
// overflow slots). Durations saturate at 2^40 ticks (about 7 minutes of TSC); the section's
// summed duration is exact regardless.
struct SliceEvent {
  uint64_t start_ticks;
  uint64_t packed;
};
inline constexpr uint64_t kMaxSliceDurationTicks = (uint64_t{1} << 40) - 1;

// Distinct (name pointer, kind) keys a chunk can hold; further keys go to the "(overflow)" slot
// of their kind, so their values are summed there rather than lost.
inline constexpr int kMaxSectionsPerChunk = 64;
inline constexpr const char* kOverflowSectionName = "(overflow)";

struct ChunkState {
  ChunkState* parent = nullptr;  // the enclosing chunk on this thread, if nested
  uint64_t serial = 0;           // unique per thread: tells a live chunk from a reused address
  int64_t peak_rss_bytes = 0;
  bool read_resident_memory = true;  // ChunkTrackingOptions::read_resident_memory
  // Scopes opened in this chunk and not yet closed; nonzero at the end means misuse (a scope
  // kept alive past its chunk), reported as an "(unclosed)" section. Also the slice depth.
  uint32_t open_scopes = 0;
  // Name of the innermost open ScopedTimer (null when none), for the sampling profiler's
  // signal handler: one store on scope entry, one restore on exit.
  const char* time_section = nullptr;
  int used_slots = 0;
  int last_slot = 0;  // lookup cache: a loop usually re-enters the section it just left
  // Timeline buffer (owned by TrackChunk): `slice_capacity` events, `slice_count` used.
  SliceEvent* slices = nullptr;
  uint32_t slice_capacity = 0;
  uint32_t slice_count = 0;
  int64_t dropped_slices = 0;
  // Not initialised: only the first used_slots are ever read (saves zeroing 4 KiB per chunk).
  SectionSlot slots[kMaxSectionsPerChunk];
  SectionSlot overflow[3] = {};  // indexed by kind - 1, right after slots (slot index 64..66)
};

static_assert(offsetof(ChunkState, overflow) ==
                  offsetof(ChunkState, slots) + kMaxSectionsPerChunk * sizeof(SectionSlot),
              "slice events index the overflow slots as slots 64..66");

// tls_current_chunk (declared in sections.h) is the innermost chunk tracked on this thread,
// or null outside any chunk. An inline variable with constant initialisation: reading it is
// one TLS load, with no init guard or call.
inline ChunkState* CurrentChunk() { return tls_current_chunk; }

// Makes `state` the innermost chunk of this thread (setting its parent and serial) for the
// lifetime of the guard.
class CurrentChunkGuard {
 public:
  explicit CurrentChunkGuard(ChunkState* state);
  ~CurrentChunkGuard();
  CurrentChunkGuard(const CurrentChunkGuard&) = delete;
  CurrentChunkGuard& operator=(const CurrentChunkGuard&) = delete;

 private:
  ChunkState* state_;
};

// `chunk` if it (with that serial) is still live on this thread, else null. The innermost
// chunk is checked first; the chain is walked only for nested chunks.
inline ChunkState* FindLiveChunk(ChunkState* chunk, uint64_t serial) {
  ChunkState* live = tls_current_chunk;
  if (live == chunk && live->serial == serial) return live;
  for (; live != nullptr; live = live->parent) {
    if (live == chunk && live->serial == serial) return live;
  }
  return nullptr;
}

// The accumulator for (name, kind) in `chunk`, created on first use; stays at its address for
// the chunk's lifetime. The cached last slot is tried first.
SectionSlot& SlotForSlow(ChunkState& chunk, const char* name, SectionKind kind);
inline SectionSlot& SlotFor(ChunkState& chunk, const char* name, SectionKind kind) {
  SectionSlot& cached = chunk.slots[chunk.last_slot];
  if (chunk.used_slots > 0 && cached.name == name && cached.kind == kind) return cached;
  return SlotForSlow(chunk, name, kind);
}

// A cheap monotonic tick counter for time scopes: the TSC on x86 (invariant and synchronised
// across cores on every CPU this targets), else steady_clock nanoseconds. Ticks are converted
// to nanoseconds per chunk, with the ratio of the chunk's own steady-clock and tick deltas.
inline uint64_t Ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
#endif
}

// Totals of RecordBytesRead on the calling thread since it started.
struct ThreadByteCounters {
  int64_t compressed = 0;
  int64_t uncompressed = 0;
};
inline thread_local ThreadByteCounters tls_thread_bytes;
inline ThreadByteCounters ThreadBytesRead() { return tls_thread_bytes; }

// A small number that identifies the calling thread for the life of the process: 0 for the
// first thread that asks, then 1, 2, ...
int64_t ThreadIndex();
// The calling thread's index if ThreadIndex() already gave it one, else -1. Never assigns:
// async-signal-safe (one thread_local load).
int64_t ThreadIndexIfAssigned();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_INTERNAL_CHUNK_CONTEXT_H_
