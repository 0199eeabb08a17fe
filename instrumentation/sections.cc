#include "instrumentation/sections.h"

#include <algorithm>

#include "instrumentation/internal/allocation_hooks.h"
#include "instrumentation/internal/chunk_context.h"
#include "instrumentation/internal/process_stats.h"

namespace roastcoffea {
namespace {

using instrumentation_internal::ChunkState;
using instrumentation_internal::SectionKind;
using instrumentation_internal::SectionSlot;

// Registers a scope opening in the current chunk; returns that chunk (null outside chunks).
ChunkState* OpenScope(uint64_t& serial) {
  ChunkState* chunk = instrumentation_internal::CurrentChunk();
  if (chunk != nullptr) {
    serial = chunk->serial;
    ++chunk->open_scopes;
  }
  return chunk;
}

// The chunk a scope opened in, if it is still live; then the scope counts as closed.
ChunkState* CloseScope(ChunkState* chunk, uint64_t serial) {
  ChunkState* live = instrumentation_internal::FindLiveChunk(chunk, serial);
  if (live != nullptr) --live->open_scopes;
  return live;
}

}  // namespace

void ScopedTimer::Enter(const char* name, CpuTime cpu_time) {
  ChunkState* chunk = instrumentation_internal::CurrentChunk();
  chunk_ = chunk;
  chunk_serial_ = chunk->serial;
  depth_ = chunk->open_scopes++;
  slot_ = &instrumentation_internal::SlotFor(*chunk, name, SectionKind::kTime);
  // Integer arithmetic: the overflow slots follow `slots` in ChunkState (a static_assert there).
  slot_index_ = static_cast<uint32_t>(
      (reinterpret_cast<uintptr_t>(slot_) - reinterpret_cast<uintptr_t>(chunk->slots)) /
      sizeof(SectionSlot));
  outer_time_section_ = chunk->time_section;
  chunk->time_section = slot_->name;
  if (cpu_time == CpuTime::kMeasured) start_cpu_ns_ = instrumentation_internal::ThreadCpuTimeNs();
  start_ticks_ = instrumentation_internal::Ticks();  // last: brackets the block tightly
}

void ScopedTimer::Exit() {
  const uint64_t end_ticks = instrumentation_internal::Ticks();
  ChunkState* chunk = CloseScope(chunk_, chunk_serial_);
  if (chunk == nullptr) return;
  chunk->time_section = outer_time_section_;
  SectionSlot& slot = *slot_;  // valid: its chunk is live
  ++slot.entries;
  slot.ticks += end_ticks - start_ticks_;
  if (start_cpu_ns_ >= 0) {
    slot.cpu_ns += instrumentation_internal::ThreadCpuTimeNs() - start_cpu_ns_;
  }
  if (chunk->slice_count < chunk->slice_capacity) {
    uint64_t duration = end_ticks - start_ticks_;
    if (duration > instrumentation_internal::kMaxSliceDurationTicks) {
      duration = instrumentation_internal::kMaxSliceDurationTicks;
    }
    const uint64_t index = slot_index_;
    const uint64_t depth = depth_ < 0xffff ? depth_ : 0xffff;
    chunk->slices[chunk->slice_count++] =
        instrumentation_internal::SliceEvent{start_ticks_, duration << 24 | depth << 8 | index};
  } else {
    ++chunk->dropped_slices;
  }
}

ScopedMemory::ScopedMemory(SectionName name) {
  chunk_ = OpenScope(chunk_serial_);
  if (chunk_ == nullptr) return;
  slot_ = &instrumentation_internal::SlotFor(*chunk_, name.c_str(), SectionKind::kMemory);
  if (chunk_->read_resident_memory) {
    start_rss_bytes_ = instrumentation_internal::ResidentMemoryBytesOrZero();
  }
  chunk_->peak_rss_bytes = std::max(chunk_->peak_rss_bytes, start_rss_bytes_);
  const instrumentation_internal::AllocationMark mark =
      instrumentation_internal::BeginAllocationMark();
  counting_allocations_ = mark.active;
  start_allocated_bytes_ = mark.allocated_bytes;
  start_live_bytes_ = mark.live_bytes;
  outer_peak_live_bytes_ = mark.outer_peak_live_bytes;
}

ScopedMemory::~ScopedMemory() {
  if (chunk_ == nullptr) return;
  int64_t allocated_bytes = 0;
  int64_t peak_live_bytes = 0;
  if (counting_allocations_) {
    instrumentation_internal::AllocationMark mark;
    mark.active = true;
    mark.allocated_bytes = start_allocated_bytes_;
    mark.live_bytes = start_live_bytes_;
    mark.outer_peak_live_bytes = outer_peak_live_bytes_;
    instrumentation_internal::EndAllocationMark(mark, &allocated_bytes, &peak_live_bytes);
  }
  ChunkState* chunk = CloseScope(chunk_, chunk_serial_);
  if (chunk == nullptr) return;
  const int64_t end_rss_bytes =
      chunk->read_resident_memory ? instrumentation_internal::ResidentMemoryBytesOrZero() : 0;
  chunk->peak_rss_bytes = std::max(chunk->peak_rss_bytes, end_rss_bytes);
  SectionSlot& slot = *slot_;  // valid: its chunk is live
  ++slot.entries;
  // A failed reading (0) on either side would give a meaningless delta: count the entry only.
  if (start_rss_bytes_ > 0 && end_rss_bytes > 0) {
    slot.memory_delta_bytes += end_rss_bytes - start_rss_bytes_;
  }
  slot.allocated_bytes += allocated_bytes;
  slot.peak_live_bytes += peak_live_bytes;
}

ScopedBytes::ScopedBytes(SectionName name) {
  chunk_ = OpenScope(chunk_serial_);
  if (chunk_ == nullptr) return;
  slot_ = &instrumentation_internal::SlotFor(*chunk_, name.c_str(), SectionKind::kBytes);
  start_bytes_ = instrumentation_internal::ThreadBytesRead().compressed;
}

ScopedBytes::~ScopedBytes() {
  if (chunk_ == nullptr) return;
  const int64_t end_bytes = instrumentation_internal::ThreadBytesRead().compressed;
  ChunkState* chunk = CloseScope(chunk_, chunk_serial_);
  if (chunk == nullptr) return;
  SectionSlot& slot = *slot_;  // valid: its chunk is live
  ++slot.entries;
  slot.bytes_read += end_bytes - start_bytes_;
}

}  // namespace roastcoffea
