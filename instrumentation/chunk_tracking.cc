#include "instrumentation/chunk_tracking.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "instrumentation/chunk_context.h"
#include "instrumentation/process_stats.h"

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

constexpr const char* kUnclosedSectionName = "(unclosed)";

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
void AddSection(const SectionSlot& slot, v1::ChunkRecord& record) {
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
      section->set_duration_seconds(section->duration_seconds() + slot.wall_ns * 1e-9);
      section->set_cpu_seconds(section->cpu_seconds() + slot.cpu_ns * 1e-9);
      break;
    case SectionKind::kMemory:
      section->set_memory_delta_bytes(section->memory_delta_bytes() + slot.memory_delta_bytes);
      break;
    case SectionKind::kBytes:
      section->set_bytes_read(section->bytes_read() + slot.bytes_read);
      break;
  }
}

void AddSections(const ChunkState& state, v1::ChunkRecord& record) {
  for (int i = 0; i < state.used_slots; ++i) {
    // A slot whose only scope never closed has no entries; it shows up as "(unclosed)".
    if (state.slots[i].entries > 0) AddSection(state.slots[i], record);
  }
  for (const SectionSlot& overflow : state.overflow) {
    if (overflow.entries > 0) AddSection(overflow, record);
  }
  if (state.open_scopes > 0) {
    v1::SectionRecord* unclosed = record.add_sections();
    unclosed->set_name(kUnclosedSectionName);
    unclosed->set_kind(v1::SectionRecord::KIND_UNSPECIFIED);
    unclosed->set_entries(state.open_scopes);
  }
}

}  // namespace

v1::ChunkRecord TrackChunkErased(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                                 void (*invoke)(void*), void* callable) {
  v1::ChunkRecord record;
  record.set_dataset(metadata.dataset);
  record.set_file(metadata.file);
  record.set_uuid(metadata.uuid);
  record.set_entry_start(metadata.entry_start);
  record.set_entry_stop(metadata.entry_stop);
  record.set_events(metadata.events);
  record.set_worker(options.worker.empty() ? DefaultWorkerName() : options.worker);
  record.set_thread_index(ThreadIndex());
  record.set_attempt(0);

  ChunkState state{};
  const int64_t rss_before = ResidentMemoryBytesOrZero();
  state.peak_rss_bytes = rss_before;
  const ThreadByteCounters bytes_before = ThreadBytesRead();
  // Cheapest readings last before the call and first after it, so they bracket fn tightly.
  record.set_start_unix_ns(UnixTimeNs());
  const int64_t cpu_before = ThreadCpuTimeNs();
  const int64_t steady_before = SteadyTimeNs();

  std::exception_ptr failure;
  {
    CurrentChunkGuard current(&state);
    try {
      invoke(callable);
      record.set_status(v1::CHUNK_STATUS_OK);
    } catch (const std::exception& e) {
      record.set_status(v1::CHUNK_STATUS_FAILED);
      record.set_error_text(e.what());
      if (options.rethrow_failures) failure = std::current_exception();
    } catch (...) {
      record.set_status(v1::CHUNK_STATUS_FAILED);
      record.set_error_text("unknown exception");
      if (options.rethrow_failures) failure = std::current_exception();
    }
  }

  const int64_t steady_after = SteadyTimeNs();
  const int64_t cpu_after = ThreadCpuTimeNs();
  record.set_end_unix_ns(UnixTimeNs());
  const ThreadByteCounters bytes_after = ThreadBytesRead();
  const int64_t rss_after = ResidentMemoryBytesOrZero();

  record.set_duration_seconds((steady_after - steady_before) * 1e-9);
  record.set_cpu_seconds((cpu_after - cpu_before) * 1e-9);
  record.set_memory_before_bytes(rss_before);
  record.set_memory_after_bytes(rss_after);
  record.set_memory_peak_bytes(std::max(state.peak_rss_bytes, rss_after));
  record.set_compressed_bytes_read(bytes_after.compressed - bytes_before.compressed);
  record.set_uncompressed_bytes_read(bytes_after.uncompressed - bytes_before.uncompressed);
  AddSections(state, record);

  if (failure) std::rethrow_exception(failure);
  return record;
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
