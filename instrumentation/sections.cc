#include "instrumentation/sections.h"

#include <algorithm>

#include "instrumentation/chunk_context.h"
#include "instrumentation/process_stats.h"

namespace roastcoffea {
namespace {

using instrumentation_internal::ChunkState;
using instrumentation_internal::SectionKind;
using instrumentation_internal::SectionSlot;

constexpr const char* kUnnamedSection = "(unnamed)";

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
ChunkState* CloseScope(const ChunkState* chunk, uint64_t serial) {
  ChunkState* live = instrumentation_internal::FindLiveChunk(chunk, serial);
  if (live != nullptr) --live->open_scopes;
  return live;
}

const char* NameOrUnnamed(const char* name) { return name != nullptr ? name : kUnnamedSection; }

}  // namespace

ScopedTimer::ScopedTimer(const char* name) {
  chunk_ = OpenScope(chunk_serial_);
  if (chunk_ == nullptr) return;
  slot_ = &instrumentation_internal::SlotFor(*chunk_, NameOrUnnamed(name), SectionKind::kTime);
  start_wall_ns_ = instrumentation_internal::SteadyTimeNs();
  start_cpu_ns_ = instrumentation_internal::ThreadCpuTimeNs();
}

ScopedTimer::~ScopedTimer() {
  if (chunk_ == nullptr) return;
  const int64_t end_cpu_ns = instrumentation_internal::ThreadCpuTimeNs();
  const int64_t end_wall_ns = instrumentation_internal::SteadyTimeNs();
  ChunkState* chunk = CloseScope(chunk_, chunk_serial_);
  if (chunk == nullptr) return;
  SectionSlot& slot = *slot_;  // valid: its chunk is live
  ++slot.entries;
  slot.wall_ns += end_wall_ns - start_wall_ns_;
  slot.cpu_ns += end_cpu_ns - start_cpu_ns_;
}

ScopedMemory::ScopedMemory(const char* name) {
  chunk_ = OpenScope(chunk_serial_);
  if (chunk_ == nullptr) return;
  slot_ = &instrumentation_internal::SlotFor(*chunk_, NameOrUnnamed(name), SectionKind::kMemory);
  start_rss_bytes_ = instrumentation_internal::ResidentMemoryBytesOrZero();
  chunk_->peak_rss_bytes = std::max(chunk_->peak_rss_bytes, start_rss_bytes_);
}

ScopedMemory::~ScopedMemory() {
  if (chunk_ == nullptr) return;
  const int64_t end_rss_bytes = instrumentation_internal::ResidentMemoryBytesOrZero();
  ChunkState* chunk = CloseScope(chunk_, chunk_serial_);
  if (chunk == nullptr) return;
  chunk->peak_rss_bytes = std::max(chunk->peak_rss_bytes, end_rss_bytes);
  SectionSlot& slot = *slot_;  // valid: its chunk is live
  ++slot.entries;
  // A failed reading (0) on either side would give a meaningless delta: count the entry only.
  if (start_rss_bytes_ > 0 && end_rss_bytes > 0) {
    slot.memory_delta_bytes += end_rss_bytes - start_rss_bytes_;
  }
}

ScopedBytes::ScopedBytes(const char* name) {
  chunk_ = OpenScope(chunk_serial_);
  if (chunk_ == nullptr) return;
  slot_ = &instrumentation_internal::SlotFor(*chunk_, NameOrUnnamed(name), SectionKind::kBytes);
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
