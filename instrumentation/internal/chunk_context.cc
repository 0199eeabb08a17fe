#include "instrumentation/internal/chunk_context.h"

#include <algorithm>
#include <atomic>

#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

thread_local uint64_t next_chunk_serial = 1;
thread_local int64_t thread_index = -1;

std::atomic<int64_t> next_thread_index{0};

}  // namespace

CurrentChunkGuard::CurrentChunkGuard(ChunkState* state) : state_(state) {
  state_->parent = tls_current_chunk;
  state_->serial = next_chunk_serial++;
  tls_current_chunk = state_;
}

CurrentChunkGuard::~CurrentChunkGuard() { tls_current_chunk = state_->parent; }

SectionSlot& SlotForSlow(ChunkState& chunk, const char* name, SectionKind kind) {
  // Keyed by pointer: names are string literals, and equal strings at different addresses are
  // merged when the record is built, off the hot path.
  for (int i = 0; i < chunk.used_slots; ++i) {
    SectionSlot& slot = chunk.slots[i];
    if (slot.name == name && slot.kind == kind) {
      chunk.last_slot = i;
      return slot;
    }
  }
  if (chunk.used_slots < kMaxSectionsPerChunk) {
    chunk.last_slot = chunk.used_slots;
    SectionSlot& slot = chunk.slots[chunk.used_slots++];
    slot = SectionSlot{name, kind, 0, 0, 0, 0, 0, 0, 0};
    return slot;
  }
  SectionSlot& overflow = chunk.overflow[static_cast<int>(kind) - 1];
  overflow.name = kOverflowSectionName;
  overflow.kind = kind;
  return overflow;
}

int64_t ThreadIndex() {
  if (thread_index < 0) {
    thread_index = next_thread_index.fetch_add(1, std::memory_order_relaxed);
  }
  return thread_index;
}

int64_t ThreadIndexIfAssigned() { return thread_index; }

}  // namespace instrumentation_internal

int64_t ReserveThreadIndices(int count) {
  return instrumentation_internal::next_thread_index.fetch_add(std::max(count, 0),
                                                               std::memory_order_relaxed);
}

void AdoptThreadIndex(int64_t index) {
  if (instrumentation_internal::thread_index < 0 && index >= 0) {
    instrumentation_internal::thread_index = index;
  }
}

void RecordBytesRead(int64_t compressed_bytes, int64_t uncompressed_bytes) {
  // Negative counts cannot come from a read; ignoring them keeps every delta non-negative.
  auto& counters = instrumentation_internal::tls_thread_bytes;
  if (compressed_bytes > 0) counters.compressed += compressed_bytes;
  if (uncompressed_bytes > 0) counters.uncompressed += uncompressed_bytes;
}

}  // namespace roastcoffea
