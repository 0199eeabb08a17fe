// The per-thread state behind TrackChunk and the section scopes. Internal to //instrumentation.
//
// Every chunk being tracked owns a ChunkState (on TrackChunk's stack). The thread's chain of
// live chunks (innermost first, linked by `parent`) is thread_local, so scopes need no context
// and threads never share state: nothing here is locked or allocated.
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHUNK_CONTEXT_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHUNK_CONTEXT_H_

#include <cstdint>

namespace roastcoffea {
namespace instrumentation_internal {

// Mirrors v1::SectionRecord::Kind without pulling the proto into the scope code.
enum class SectionKind : int { kTime = 1, kMemory = 2, kBytes = 3 };

// One accumulator per (name pointer, kind) in a chunk. Values are sums over entries.
struct SectionSlot {
  const char* name;
  SectionKind kind;
  uint32_t entries;
  int64_t wall_ns;
  int64_t cpu_ns;
  int64_t memory_delta_bytes;
  int64_t bytes_read;
};

// Distinct (name pointer, kind) keys a chunk can hold; further keys go to the "(overflow)" slot
// of their kind, so their values are summed there rather than lost.
inline constexpr int kMaxSectionsPerChunk = 64;
inline constexpr const char* kOverflowSectionName = "(overflow)";

struct ChunkState {
  ChunkState* parent = nullptr;  // the enclosing chunk on this thread, if nested
  uint64_t serial = 0;           // unique per thread: tells a live chunk from a reused address
  int64_t peak_rss_bytes = 0;
  // Scopes opened in this chunk and not yet closed; nonzero at the end means misuse (a scope
  // kept alive past its chunk), reported as an "(unclosed)" section.
  uint32_t open_scopes = 0;
  int used_slots = 0;
  SectionSlot slots[kMaxSectionsPerChunk];
  SectionSlot overflow[3];  // indexed by kind - 1
};

// The innermost chunk tracked on this thread, or null outside any chunk.
ChunkState* CurrentChunk();

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

// `chunk` if it (with that serial) is still live on this thread, else null. Walks the chain of
// live chunks, which is one link deep unless chunks are nested.
ChunkState* FindLiveChunk(const ChunkState* chunk, uint64_t serial);

// The accumulator for (name, kind) in `chunk`, created on first use; stays at its address for
// the chunk's lifetime.
SectionSlot& SlotFor(ChunkState& chunk, const char* name, SectionKind kind);

// Totals of RecordBytesRead on the calling thread since it started.
struct ThreadByteCounters {
  int64_t compressed = 0;
  int64_t uncompressed = 0;
};
ThreadByteCounters ThreadBytesRead();

// A small number that identifies the calling thread for the life of the process: 0 for the
// first thread that asks, then 1, 2, ...
int64_t ThreadIndex();

}  // namespace instrumentation_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHUNK_CONTEXT_H_
