// Section scopes and byte accounting inside a tracked chunk: the C++ counterpart of the
// original tool's track_time / track_memory / track_bytes context managers.
//
// A chunk is tracked by TrackChunk (instrumentation/chunk_tracking.h), which makes it this
// thread's "current chunk" while the processor runs. The scopes below attach what they measure
// to the current chunk of the thread they run on, so no context has to be passed down:
//
//   roastcoffea::ScopedTimer timer("jet_selection");   // or ROASTCOFFEA_TIMED_SECTION("...")
//
// Semantics (fixing the original's "last value wins" and shared processor state):
//   * Outside a tracked chunk a scope does nothing: one thread_local load, no clock read.
//   * Scopes nest; each measures its own extent (an outer timer includes its inner ones).
//   * A name entered several times in one chunk sums its values and counts the entries.
//   * State is thread_local: threads tracking chunks at the same time never see each other's
//     sections. A scope must end on the thread that started it (RAII on the stack does that).
//   * `name` is a SectionName (section_name.h): a string literal, checked by the compiler,
//     stored as a pointer. Names made at run time do not compile (they would grow the record
//     with one section per distinct string).
//   * A chunk holds 64 distinct section keys; further keys are summed into a section named
//     "(overflow)" of the same kind instead of being dropped.
//   * A scope still open when its chunk ends (only possible if it is kept off the stack) is
//     counted in an "(unclosed)" section of that chunk and records nothing when it ends.
//
// Cost inside a chunk, per scope (enter + exit; bench/instrumentation_benchmark.cc):
//   * ScopedTimer: two TSC reads, a slot update and a thread-local append of one timeline
//     slice (bounded per chunk, overflow counted in ChunkRecord.dropped_slices): ~10-20 ns.
//     With CpuTime::kMeasured add two thread CPU clock reads (internal/thread_cpu_clock.h): ~2 x 12
//     ns from a perf page where the kernel allows it, else two system calls (~2 x 600 ns on a
//     kvm-clock virtual machine).
//   * ScopedMemory: two reads of /proc/self/statm (a few microseconds each; none when the
//     chunk's ChunkTrackingOptions::read_resident_memory is false), plus two counter reads
//     when //instrumentation:allocation_counting is linked. Meant for blocks of work.
//   * ScopedBytes: two thread_local loads.
//   * Outside a chunk, or while instrumentation is disabled (SetInstrumentationEnabled in
//     chunk_tracking.h): one thread_local load and a branch, about 1 ns.
// No locks, atomics or heap allocation on any scope path.
#ifndef ROASTCOFFEA_INSTRUMENTATION_SECTIONS_H_
#define ROASTCOFFEA_INSTRUMENTATION_SECTIONS_H_

#include <cstdint>

#include "instrumentation/section_name.h"

namespace roastcoffea {

namespace instrumentation_internal {
struct ChunkState;
struct SectionSlot;
// The innermost chunk tracked on this thread (null outside chunks and while disabled). Read
// inline by the scopes so that a scope outside a chunk costs one TLS load and no call.
inline thread_local ChunkState* tls_current_chunk = nullptr;
}  // namespace instrumentation_internal

// Called by I/O code on the thread that reads, for every read: adds to this thread's counters.
// `compressed_bytes` are the bytes requested from storage, `uncompressed_bytes` the bytes after
// decompression (0 when unknown). Negative values are ignored. The chunk record gets the
// counters' growth while its chunk ran; ScopedBytes gets the growth of the compressed counter.
// Lock-free and allocation-free (thread_local counters); safe to call outside any chunk.
void RecordBytesRead(int64_t compressed_bytes, int64_t uncompressed_bytes);

// Whether a ScopedTimer also measures the thread's CPU time (two system calls per scope).
enum class CpuTime { kNotMeasured, kMeasured };

// Wall time of a block (TSC, converted with the chunk's steady clock), recorded as a KIND_TIME
// section (duration_seconds) and as one timeline slice of the chunk. With CpuTime::kMeasured
// also the CPU time of the calling thread (SectionRecord.cpu_seconds sums only such entries).
class ScopedTimer {
 public:
  explicit ScopedTimer(SectionName name, CpuTime cpu_time = CpuTime::kNotMeasured) {
    if (instrumentation_internal::tls_current_chunk != nullptr) Enter(name.c_str(), cpu_time);
  }
  ~ScopedTimer() {
    if (chunk_ != nullptr) Exit();
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  void Enter(const char* name, CpuTime cpu_time);
  void Exit();

  instrumentation_internal::ChunkState* chunk_ = nullptr;  // null outside a chunk
  uint64_t chunk_serial_ = 0;
  instrumentation_internal::SectionSlot* slot_ = nullptr;  // reserved in the chunk at entry
  uint64_t start_ticks_ = 0;
  int64_t start_cpu_ns_ = -1;  // -1: CPU time not measured
  uint32_t depth_ = 0;
  uint32_t slot_index_ = 0;
  const char* outer_time_section_ = nullptr;  // restored as the chunk's time_section on exit
};

// Change of process resident memory (RSS) over a block, in bytes, recorded as a KIND_MEMORY
// section. RSS is process-wide: other threads' allocations during the block are included.
// Both readings also feed the chunk's memory_peak_bytes. When the program links
// //instrumentation:allocation_counting, the section also gets the exact bytes allocated on
// this thread during the block and the peak of its live bytes (allocated_bytes,
// peak_live_bytes).
class ScopedMemory {
 public:
  explicit ScopedMemory(SectionName name);
  ~ScopedMemory();
  ScopedMemory(const ScopedMemory&) = delete;
  ScopedMemory& operator=(const ScopedMemory&) = delete;

 private:
  instrumentation_internal::ChunkState* chunk_ = nullptr;
  uint64_t chunk_serial_ = 0;
  instrumentation_internal::SectionSlot* slot_ = nullptr;  // reserved in the chunk at entry
  int64_t start_rss_bytes_ = 0;
  // Allocation counters at entry (see allocation_counting.h); unused when not linked.
  bool counting_allocations_ = false;
  int64_t start_allocated_bytes_ = 0;
  int64_t start_live_bytes_ = 0;
  int64_t outer_peak_live_bytes_ = 0;
};

// Compressed bytes passed to RecordBytesRead on this thread during a block, recorded as a
// KIND_BYTES section.
class ScopedBytes {
 public:
  explicit ScopedBytes(SectionName name);
  ~ScopedBytes();
  ScopedBytes(const ScopedBytes&) = delete;
  ScopedBytes& operator=(const ScopedBytes&) = delete;

 private:
  instrumentation_internal::ChunkState* chunk_ = nullptr;
  uint64_t chunk_serial_ = 0;
  instrumentation_internal::SectionSlot* slot_ = nullptr;  // reserved in the chunk at entry
  int64_t start_bytes_ = 0;
};

}  // namespace roastcoffea

#define ROASTCOFFEA_INTERNAL_CONCAT_IMPL(a, b) a##b
#define ROASTCOFFEA_INTERNAL_CONCAT(a, b) ROASTCOFFEA_INTERNAL_CONCAT_IMPL(a, b)

// Scope the rest of the enclosing block as a section: ROASTCOFFEA_TIMED_SECTION("fill_histos");
#define ROASTCOFFEA_TIMED_SECTION(name) \
  ::roastcoffea::ScopedTimer ROASTCOFFEA_INTERNAL_CONCAT(roastcoffea_timed_section_, __LINE__)(name)
#define ROASTCOFFEA_MEMORY_SECTION(name)                                               \
  ::roastcoffea::ScopedMemory ROASTCOFFEA_INTERNAL_CONCAT(roastcoffea_memory_section_, \
                                                          __LINE__)(name)
#define ROASTCOFFEA_BYTES_SECTION(name) \
  ::roastcoffea::ScopedBytes ROASTCOFFEA_INTERNAL_CONCAT(roastcoffea_bytes_section_, __LINE__)(name)

#endif  // ROASTCOFFEA_INSTRUMENTATION_SECTIONS_H_
