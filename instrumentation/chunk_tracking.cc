#include "instrumentation/chunk_tracking.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "instrumentation/internal/allocation_hooks.h"
#include "instrumentation/internal/chunk_context.h"
#include "instrumentation/internal/process_stats.h"
#include "instrumentation/internal/run_queue_delay.h"
#include "instrumentation/internal/thread_schedstat.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

constexpr const char* kUnclosedSectionName = "(unclosed)";
constexpr uint32_t kMaxSlicesPerChunk = 1u << 20;

std::atomic<bool> instrumentation_enabled{true};

// The timeline buffer of the outermost chunk on this thread, reused from chunk to chunk so
// that only a thread's first chunk (or a larger cap) allocates.
thread_local std::vector<SliceEvent> thread_slice_buffer;

// Converts tick deltas of one chunk to nanoseconds.
struct TickScale {
  double ns_per_tick = 0;
  int64_t Ns(uint64_t ticks) const { return static_cast<int64_t>(ticks * ns_per_tick + 0.5); }
};

v1::SectionRecord::Kind ToProtoKind(SectionKind kind) {
  switch (kind) {
    case SectionKind::kTime:
      return v1::SectionRecord::KIND_TIME;
    case SectionKind::kMemory:
      return v1::SectionRecord::KIND_MEMORY;
    case SectionKind::kBytes:
      return v1::SectionRecord::KIND_BYTES;
  }
  return v1::SectionRecord::KIND_UNSPECIFIED;
}

// Appends `slot` to the record, summing it into an earlier section with the same name and kind
// (equal literals may sit at different addresses, e.g. in different translation units).
void AddSection(const SectionSlot& slot, const TickScale& scale, v1::ChunkRecord& record) {
  const v1::SectionRecord::Kind kind = ToProtoKind(slot.kind);
  v1::SectionRecord* section = nullptr;
  for (v1::SectionRecord& existing : *record.mutable_sections()) {
    if (existing.kind() == kind && existing.name() == slot.name) {
      section = &existing;
      break;
    }
  }
  if (section == nullptr) {
    section = record.add_sections();
    section->set_name(slot.name);
    section->set_kind(kind);
  }
  section->set_entries(section->entries() + slot.entries);
  switch (slot.kind) {
    case SectionKind::kTime:
      section->set_duration_seconds(section->duration_seconds() + scale.Ns(slot.ticks) * 1e-9);
      section->set_cpu_seconds(section->cpu_seconds() + slot.cpu_ns * 1e-9);
      break;
    case SectionKind::kMemory:
      section->set_memory_delta_bytes(section->memory_delta_bytes() + slot.memory_delta_bytes);
      if (g_allocation_hooks.load(std::memory_order_acquire) != nullptr) {
        section->set_allocated_bytes(section->allocated_bytes() + slot.allocated_bytes);
        section->set_peak_live_bytes(section->peak_live_bytes() + slot.peak_live_bytes);
      }
      break;
    case SectionKind::kBytes:
      section->set_bytes_read(section->bytes_read() + slot.bytes_read);
      break;
  }
}

void AddSections(const ChunkState& state, const TickScale& scale, v1::ChunkRecord& record) {
  for (int i = 0; i < state.used_slots; ++i) {
    // A slot whose only scope never closed has no entries; it shows up as "(unclosed)".
    if (state.slots[i].entries > 0) AddSection(state.slots[i], scale, record);
  }
  for (const SectionSlot& overflow : state.overflow) {
    if (overflow.entries > 0) AddSection(overflow, scale, record);
  }
  if (state.open_scopes > 0) {
    v1::SectionRecord* unclosed = record.add_sections();
    unclosed->set_name(kUnclosedSectionName);
    unclosed->set_kind(v1::SectionRecord::KIND_UNSPECIFIED);
    unclosed->set_entries(state.open_scopes);
  }
}

void AddSlices(const ChunkState& state, uint64_t chunk_start_ticks, const TickScale& scale,
               v1::ChunkRecord& record) {
  record.mutable_slices()->Reserve(static_cast<int>(state.slice_count));
  for (uint32_t i = 0; i < state.slice_count; ++i) {
    const SliceEvent& event = state.slices[i];
    const uint64_t index = event.packed & 0xff;
    const SectionSlot& slot = index < kMaxSectionsPerChunk
                                  ? state.slots[index]
                                  : state.overflow[index - kMaxSectionsPerChunk];
    v1::SectionSlice* slice = record.add_slices();
    slice->set_name(slot.name);
    slice->set_start_offset_ns(scale.Ns(event.start_ticks - chunk_start_ticks));
    slice->set_duration_ns(scale.Ns(event.packed >> 24));
    slice->set_depth(static_cast<uint32_t>((event.packed >> 8) & 0xffff));
  }
  record.set_dropped_slices(state.dropped_slices);
}

void CopyMetadata(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                  v1::ChunkRecord& record) {
  record.set_dataset(metadata.dataset);
  record.set_file(metadata.file);
  record.set_uuid(metadata.uuid);
  record.set_entry_start(metadata.entry_start);
  record.set_entry_stop(metadata.entry_stop);
  record.set_events(metadata.events);
  if (metadata.file_bytes > 0) record.set_file_bytes(metadata.file_bytes);
  if (!metadata.task_id.empty()) record.set_task_id(metadata.task_id);
  record.set_worker(options.worker.empty() ? DefaultWorkerName() : options.worker);
  record.set_thread_index(ThreadIndex());
  record.set_attempt(0);
}

// Runs the processor and fills status and error text; returns the exception to rethrow
// under FailurePolicy::kStop, else null.
std::exception_ptr InvokeCapturingFailure(void (*invoke)(void*), void* callable,
                                          const ChunkTrackingOptions& options,
                                          v1::ChunkRecord& record) {
  const bool stop = options.failure_policy == FailurePolicy::kStop;
  try {
    invoke(callable);
    record.set_status(v1::CHUNK_STATUS_OK);
  } catch (const std::exception& e) {
    record.set_status(v1::CHUNK_STATUS_FAILED);
    record.set_error_text(e.what());
    if (stop) return std::current_exception();
  } catch (...) {
    record.set_status(v1::CHUNK_STATUS_FAILED);
    record.set_error_text("unknown exception");
    if (stop) return std::current_exception();
  }
  return nullptr;
}

// The chunk while instrumentation is disabled: no current chunk, no measurement.
v1::ChunkRecord RunUnmeasured(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                              void (*invoke)(void*), void* callable, bool* recorded) {
  v1::ChunkRecord record;
  const std::exception_ptr failure = InvokeCapturingFailure(invoke, callable, options, record);
  *recorded = record.status() != v1::CHUNK_STATUS_OK;
  if (*recorded) CopyMetadata(metadata, options, record);
  if (failure) throw ChunkFailedError(std::move(record), failure);
  return record;
}

// The clock readings on one side of a chunk's processor.
struct ChunkReadings {
  int64_t steady_ns = 0;        // wall interval (the chunk's duration)
  int64_t scale_steady_ns = 0;  // tight pair around the ticks, for the tick scale
  uint64_t ticks = 0;
  int64_t cpu_ns = 0;
  RunDelayReading run_delay;
};

// `steady_before_cpu_ns` and `steady_after_cpu_ns` bracket the reading of `cpu_ns`.
RunDelayReading ReadRunDelay(const ChunkTrackingOptions& options, int64_t steady_before_cpu_ns,
                             int64_t cpu_ns, int64_t steady_after_cpu_ns) {
  if (!options.measure_run_queue_wait) return RunDelayReading{};
  if (!options.measure_cpu_time) {  // reusing a reading needs the CPU clock: always read
    const ThreadSchedstat stats = ReadThreadSchedstat();
    return RunDelayReading{stats.available, stats.run_delay_ns, true};
  }
  return RunDelayAt(steady_before_cpu_ns, cpu_ns, steady_after_cpu_ns);
}

// The readings nest: wall clock outside, then thread CPU and run-queue delay, then the tick
// pair that brackets fn tightly. So CPU and run-queue wait are measured inside the wall
// interval, and cpu + wait <= duration holds even when the thread is preempted right after a
// reading (a system call's return is a preemption point). The duration includes the readings
// themselves (about 2 us); the tick scale uses its own tight steady-clock pair. A steady-clock
// reading with no system call after it does double duty (vDSO reads cost ~20 ns each).
ChunkReadings BeginReadings(const ChunkTrackingOptions& options) {
  ChunkReadings before;
  before.steady_ns = SteadyTimeNs();
  before.cpu_ns = options.measure_cpu_time ? ThreadCpuTimeNs() : 0;
  const int64_t steady_after_cpu_ns = SteadyTimeNs();
  before.run_delay = ReadRunDelay(options, before.steady_ns, before.cpu_ns, steady_after_cpu_ns);
  before.scale_steady_ns = before.run_delay.pread ? SteadyTimeNs() : steady_after_cpu_ns;
  before.ticks = Ticks();
  return before;
}

ChunkReadings EndReadings(const ChunkTrackingOptions& options, const ChunkReadings& before) {
  ChunkReadings after;
  after.ticks = Ticks();
  after.scale_steady_ns = SteadyTimeNs();
  after.cpu_ns = options.measure_cpu_time ? ThreadCpuTimeNs() : 0;
  const int64_t steady_after_cpu_ns = SteadyTimeNs();
  if (before.run_delay.available) {
    after.run_delay =
        ReadRunDelay(options, after.scale_steady_ns, after.cpu_ns, steady_after_cpu_ns);
  }
  after.steady_ns = after.run_delay.pread ? SteadyTimeNs() : steady_after_cpu_ns;
  return after;
}

// Duration, end, CPU time and run-queue wait of the chunk; returns the chunk's tick scale.
TickScale SetTimes(const ChunkReadings& before, const ChunkReadings& after,
                   v1::ChunkRecord& record) {
  const int64_t duration_ns = after.steady_ns - before.steady_ns;
  const int64_t cpu_ns = after.cpu_ns - before.cpu_ns;
  // The end is the start plus the monotonic duration: a wall-clock step during the chunk (NTP,
  // an administrator) must not make it end before it started, or last an hour in 30 ms.
  record.set_end_unix_ns(record.start_unix_ns() + duration_ns);
  record.set_duration_seconds(duration_ns * 1e-9);
  record.set_cpu_seconds(cpu_ns * 1e-9);
  // Left absent, not 0, when either reading is unavailable (0 would claim "never waited").
  const RunDelayReading& start = before.run_delay;
  const RunDelayReading& end = after.run_delay;
  if (end.available && end.run_delay_ns >= start.run_delay_ns) {
    // A reused start reading may be behind by kRunDelayToleranceNs; the wait cannot exceed
    // the chunk's time off its CPU.
    const int64_t off_cpu_ns = std::max<int64_t>(0, duration_ns - cpu_ns);
    record.set_run_queue_wait_seconds(std::min(end.run_delay_ns - start.run_delay_ns, off_cpu_ns) *
                                      1e-9);
  }
  // The chunk's own steady-clock / tick ratio converts its sections' ticks: no global
  // calibration, and a section can never come out longer than its chunk.
  TickScale scale;
  if (after.ticks > before.ticks && after.scale_steady_ns > before.scale_steady_ns) {
    scale.ns_per_tick = static_cast<double>(after.scale_steady_ns - before.scale_steady_ns) /
                        static_cast<double>(after.ticks - before.ticks);
  }
  return scale;
}

// Points `state` at a timeline buffer: the thread's reusable one for an outermost chunk,
// `nested_buffer` for a chunk nested in another (the outer chunk still writes into the
// thread's buffer).
void AttachSliceBuffer(const ChunkTrackingOptions& options, std::vector<SliceEvent>& nested_buffer,
                       ChunkState& state) {
  const uint32_t slice_capacity = std::min(options.max_slices_per_chunk, kMaxSlicesPerChunk);
  std::vector<SliceEvent>& buffer = CurrentChunk() == nullptr ? thread_slice_buffer : nested_buffer;
  if (buffer.size() < slice_capacity) buffer.resize(slice_capacity);
  state.slices = buffer.data();
  state.slice_capacity = slice_capacity;
}

void SetAllocations(const AllocationMark& mark, v1::ChunkRecord& record) {
  if (!mark.active) return;
  int64_t allocated_bytes = 0;
  int64_t peak_live_bytes = 0;
  EndAllocationMark(mark, &allocated_bytes, &peak_live_bytes);
  record.set_allocated_bytes(allocated_bytes);
  record.set_peak_live_bytes(peak_live_bytes);
}

}  // namespace

v1::ChunkRecord TrackChunkErased(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                                 void (*invoke)(void*), void* callable, bool* recorded) {
  if (!instrumentation_enabled.load(std::memory_order_relaxed)) {
    return RunUnmeasured(metadata, options, invoke, callable, recorded);
  }
  *recorded = true;
  v1::ChunkRecord record;
  CopyMetadata(metadata, options, record);
  ChunkState state;
  state.read_resident_memory = options.read_resident_memory;
  std::vector<SliceEvent> nested_buffer;
  AttachSliceBuffer(options, nested_buffer, state);

  const int64_t rss_before = options.read_resident_memory ? ResidentMemoryBytesOrZero() : 0;
  state.peak_rss_bytes = rss_before;
  const ThreadByteCounters bytes_before = ThreadBytesRead();
  record.set_start_unix_ns(UnixTimeNs());
  const AllocationMark allocation_mark = BeginAllocationMark();
  const ChunkReadings before = BeginReadings(options);
  std::exception_ptr failure;
  {
    CurrentChunkGuard current(&state);
    failure = InvokeCapturingFailure(invoke, callable, options, record);
  }
  const ChunkReadings after = EndReadings(options, before);
  SetAllocations(allocation_mark, record);
  const ThreadByteCounters bytes_after = ThreadBytesRead();
  const int64_t rss_after = options.read_resident_memory ? ResidentMemoryBytesOrZero() : 0;

  const TickScale scale = SetTimes(before, after, record);
  record.set_memory_before_bytes(rss_before);
  record.set_memory_after_bytes(rss_after);
  record.set_memory_peak_bytes(std::max(state.peak_rss_bytes, rss_after));
  record.set_compressed_bytes_read(bytes_after.compressed - bytes_before.compressed);
  record.set_uncompressed_bytes_read(bytes_after.uncompressed - bytes_before.uncompressed);
  AddSections(state, scale, record);
  AddSlices(state, before.ticks, scale, record);

  if (failure) throw ChunkFailedError(std::move(record), failure);
  return record;
}

}  // namespace instrumentation_internal

ChunkFailedError::ChunkFailedError(v1::ChunkRecord record, std::exception_ptr cause)
    : std::runtime_error(absl::StrCat("chunk ", record.uuid(), " (", record.file(), " entries [",
                                      record.entry_start(), ", ", record.entry_stop(),
                                      ")) failed: ", record.error_text())),
      record_(std::move(record)),
      cause_(std::move(cause)) {}

void SetInstrumentationEnabled(bool enabled) {
  instrumentation_internal::instrumentation_enabled.store(enabled, std::memory_order_relaxed);
}

bool InstrumentationEnabled() {
  return instrumentation_internal::instrumentation_enabled.load(std::memory_order_relaxed);
}

}  // namespace roastcoffea
