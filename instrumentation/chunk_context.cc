#include "instrumentation/chunk_context.h"

#include <atomic>

#include "instrumentation/sections.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

// Trivially constructible thread_locals: no TLS init guard, no allocation.
thread_local ChunkState* current_chunk = nullptr;
thread_local uint64_t next_chunk_serial = 1;
thread_local ThreadByteCounters thread_bytes;
thread_local int64_t thread_index = -1;

std::atomic<int64_t> next_thread_index{0};

}  // namespace

ChunkState* CurrentChunk() { return current_chunk; }

CurrentChunkGuard::CurrentChunkGuard(ChunkState* state) : state_(state) {
  state_->parent = current_chunk;
  state_->serial = next_chunk_serial++;
  current_chunk = state_;
}

CurrentChunkGuard::~CurrentChunkGuard() { current_chunk = state_->parent; }

ChunkState* FindLiveChunk(const ChunkState* chunk, uint64_t serial) {
  for (ChunkState* live = current_chunk; live != nullptr; live = live->parent) {
    if (live == chunk && live->serial == serial) return live;
  }
  return nullptr;
}

SectionSlot& SlotFor(ChunkState& chunk, const char* name, SectionKind kind) {
  // Keyed by pointer: names are string literals, and equal strings at different addresses are
  // merged when the record is built, off the hot path.
  for (int i = 0; i < chunk.used_slots; ++i) {
    SectionSlot& slot = chunk.slots[i];
    if (slot.name == name && slot.kind == kind) return slot;
  }
  if (chunk.used_slots < kMaxSectionsPerChunk) {
    SectionSlot& slot = chunk.slots[chunk.used_slots++];
    slot = SectionSlot{name, kind, 0, 0, 0, 0, 0};
    return slot;
  }
  SectionSlot& overflow = chunk.overflow[static_cast<int>(kind) - 1];
  overflow.name = kOverflowSectionName;
  overflow.kind = kind;
  return overflow;
}

ThreadByteCounters ThreadBytesRead() { return thread_bytes; }

int64_t ThreadIndex() {
  if (thread_index < 0) {
    thread_index = next_thread_index.fetch_add(1, std::memory_order_relaxed);
  }
  return thread_index;
}

}  // namespace instrumentation_internal

void RecordBytesRead(int64_t compressed_bytes, int64_t uncompressed_bytes) {
  // Negative counts cannot come from a read; ignoring them keeps every delta non-negative.
  if (compressed_bytes > 0) instrumentation_internal::thread_bytes.compressed += compressed_bytes;
  if (uncompressed_bytes > 0) {
    instrumentation_internal::thread_bytes.uncompressed += uncompressed_bytes;
  }
}

}  // namespace roastcoffea
