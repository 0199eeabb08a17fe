#include "trace/perfetto_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "aggregation/worker_names.h"
#include "io/atomic_write.h"
#include "trace/perfetto_trace.pb.h"
#include "trace/trace_model.h"

namespace roastcoffea {
namespace {

namespace pf = ::roastcoffea::perfetto;

constexpr uint32_t kSequenceId = 1;
constexpr size_t kFlushBytes = size_t{1} << 20;

// Interning ids of one index (names, categories or annotation names); 0 means "not set" in
// Perfetto, so ids start at 1.
class Interner {
 public:
  // The id of `name` and whether it is new (then the caller emits its definition).
  std::pair<uint64_t, bool> Intern(const std::string& name) {
    auto [it, inserted] = ids_.try_emplace(name, ids_.size() + 1);
    return {it->second, inserted};
  }

 private:
  absl::flat_hash_map<std::string, uint64_t> ids_;
};

// Appends TracePackets to a file as Trace.packet records (tag 0x0A, varint length, bytes).
class PacketStream {
 public:
  explicit PacketStream(AtomicFileWriter& file) : file_(file) {
    buffer_.reserve(kFlushBytes + 4096);
  }

  void Write(const pf::TracePacket& packet) {
    const size_t size = packet.ByteSizeLong();
    buffer_.push_back('\x0A');  // field 1, wire type 2
    for (uint64_t rest = size;; rest >>= 7) {
      if (rest < 0x80) {
        buffer_.push_back(static_cast<char>(rest));
        break;
      }
      buffer_.push_back(static_cast<char>((rest & 0x7F) | 0x80));
    }
    const size_t offset = buffer_.size();
    buffer_.resize(offset + size);
    packet.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&buffer_[offset]));
    if (buffer_.size() >= kFlushBytes) Flush();
  }

  void Flush() {
    if (status_.ok()) status_ = file_.Append(buffer_);
    buffer_.clear();
  }
  // The first write error (a full disk): the trace is then never committed.
  const absl::Status& status() const { return status_; }

 private:
  AtomicFileWriter& file_;
  std::string buffer_;
  absl::Status status_;
};

// Turns chunks into packets: descriptors for new workers and threads, then each chunk's
// BEGIN/END pairs with its sections properly nested.
class TraceBuilder {
 public:
  explicit TraceBuilder(PacketStream& stream) : stream_(stream) {}

  void AddChunk(const v1::ChunkRecord& chunk) {
    const uint64_t track = ThreadTrack(chunk);
    const int64_t start = std::max<int64_t>(chunk.start_unix_ns(), 0);
    const int64_t end = std::max(chunk.end_unix_ns(), start);

    StartEventPacket(start);
    pf::TrackEvent& begin = *packet_.mutable_track_event();
    begin.set_type(pf::TrackEvent::TYPE_SLICE_BEGIN);
    begin.set_track_uuid(track);
    begin.add_category_iids(Category("chunk"));
    begin.set_name_iid(EventName(chunk.dataset().empty() ? "chunk" : chunk.dataset()));
    AddString(begin, "uuid", chunk.uuid());
    AddString(begin, "file", chunk.file());
    AddInt(begin, "entry_start", chunk.entry_start());
    AddInt(begin, "entry_stop", chunk.entry_stop());
    AddInt(begin, "events", chunk.events());
    AddString(begin, "status", v1::ChunkStatus_Name(chunk.status()));
    if (!chunk.error_text().empty()) AddString(begin, "error_text", chunk.error_text());
    if (chunk.dropped_slices() > 0) AddInt(begin, "dropped_slices", chunk.dropped_slices());
    const trace_internal::ChunkValues values = trace_internal::MeasuredValues(chunk);
    for (const auto& [name, value] : values.doubles) {
      Annotation(begin, name).set_double_value(value);
    }
    for (const auto& [name, value] : values.ints) AddInt(begin, name, value);
    stream_.Write(packet_);

    // Enclosing slices first: by start, then longest first (as in chrome_trace.cc).
    slices_.clear();
    for (const v1::SectionSlice& slice : chunk.slices()) slices_.push_back(&slice);
    std::stable_sort(slices_.begin(), slices_.end(), [](const auto* a, const auto* b) {
      if (a->start_offset_ns() != b->start_offset_ns()) {
        return a->start_offset_ns() < b->start_offset_ns();
      }
      return a->duration_ns() > b->duration_ns();
    });
    // Ends of the open slices, the chunk at the bottom. BEGIN/END must nest strictly, so a
    // section is clamped into the slice enclosing it (clock rounding can make it stick out).
    open_ends_.assign(1, end);
    for (const v1::SectionSlice* slice : slices_) {
      int64_t slice_start = start + std::max<int64_t>(slice->start_offset_ns(), 0);
      while (open_ends_.size() > 1 && open_ends_.back() <= slice_start) EndSlice(track);
      slice_start = std::min(slice_start, open_ends_.back());
      const int64_t slice_end = std::clamp(slice_start + std::max<int64_t>(slice->duration_ns(), 0),
                                           slice_start, open_ends_.back());
      StartEventPacket(slice_start);
      pf::TrackEvent& event = *packet_.mutable_track_event();
      event.set_type(pf::TrackEvent::TYPE_SLICE_BEGIN);
      event.set_track_uuid(track);
      event.add_category_iids(Category("section"));
      event.set_name_iid(EventName(slice->name()));
      stream_.Write(packet_);
      open_ends_.push_back(slice_end);
    }
    while (!open_ends_.empty()) EndSlice(track);
  }

 private:
  struct Process {
    int32_t pid = 0;
    std::map<int64_t, int32_t> tids;  // thread_index -> tid
  };

  // The thread track of the chunk's (worker, thread), described on first use.
  uint64_t ThreadTrack(const v1::ChunkRecord& chunk) {
    const auto process = ProcessOf(chunk.worker());
    auto [thread, new_thread] = process->second.tids.try_emplace(chunk.thread_index());
    if (new_thread) {
      thread->second = ++last_id_;
      StartPacket();
      pf::TrackDescriptor& track = *packet_.mutable_track_descriptor();
      track.set_uuid(thread->second);
      track.set_parent_uuid(process->second.pid);
      pf::ThreadDescriptor& descriptor = *track.mutable_thread();
      descriptor.set_pid(process->second.pid);
      descriptor.set_tid(thread->second);
      // The name the tables and the Gantt chart use (aggregation/worker_names.h).
      descriptor.set_thread_name(WorkerThreadName(chunk.worker(), chunk.thread_index()));
      stream_.Write(packet_);
    }
    return thread->second;
  }

  // The process track of `name`, described on first use.
  std::map<std::string, Process>::iterator ProcessOf(const std::string& name) {
    auto [process, new_process] = processes_.try_emplace(name);
    if (new_process) {
      process->second.pid = ++last_id_;
      StartPacket();
      pf::TrackDescriptor& track = *packet_.mutable_track_descriptor();
      track.set_uuid(process->second.pid);
      track.mutable_process()->set_pid(process->second.pid);
      track.mutable_process()->set_process_name(name.empty() ? "worker" : name);
      stream_.Write(packet_);
    }
    return process;
  }

 public:
  // One counter track beside the process's threads, and its values.
  void AddCounterTrack(const trace_internal::CounterTrack& counter) {
    const auto process = ProcessOf(counter.process);
    const uint64_t uuid = static_cast<uint64_t>(++last_id_);
    StartPacket();
    pf::TrackDescriptor& track = *packet_.mutable_track_descriptor();
    track.set_uuid(uuid);
    track.set_parent_uuid(process->second.pid);
    track.set_name(absl::StrCat(counter.name, " ", counter.unit));
    track.mutable_counter()->set_unit_name(counter.unit);
    stream_.Write(packet_);
    for (size_t i = 0; i < counter.values.size(); ++i) {
      StartEventPacket(std::max<int64_t>(counter.times_unix_ns[i], 0));
      pf::TrackEvent& event = *packet_.mutable_track_event();
      event.set_type(pf::TrackEvent::TYPE_COUNTER);
      event.set_track_uuid(uuid);
      event.set_double_counter_value(counter.values[i]);
      stream_.Write(packet_);
    }
  }

  // The run: a slice over its window on the "run" process, its metadata as arguments.
  void AddRun(const v1::Measurement& measurement) {
    const std::pair<int64_t, int64_t> window = trace_internal::RunWindow(measurement);
    if (window.second <= 0) return;
    const auto process = ProcessOf(trace_internal::kRunProcess);
    const uint64_t uuid = static_cast<uint64_t>(++last_id_);
    StartPacket();
    pf::TrackDescriptor& track = *packet_.mutable_track_descriptor();
    track.set_uuid(uuid);
    track.set_parent_uuid(process->second.pid);
    pf::ThreadDescriptor& thread = *track.mutable_thread();
    thread.set_pid(process->second.pid);
    thread.set_tid(static_cast<int32_t>(uuid));
    thread.set_thread_name("run");
    stream_.Write(packet_);
    StartEventPacket(std::max<int64_t>(window.first, 0));
    pf::TrackEvent& begin = *packet_.mutable_track_event();
    begin.set_type(pf::TrackEvent::TYPE_SLICE_BEGIN);
    begin.set_track_uuid(uuid);
    begin.add_category_iids(Category("run"));
    const std::string& name = measurement.metadata().name();
    begin.set_name_iid(EventName(name.empty() ? "run" : absl::StrCat("run ", name)));
    for (const auto& [key, value] : trace_internal::RunArguments(measurement)) {
      AddString(begin, key, value);
    }
    stream_.Write(packet_);
    open_ends_.assign(1, std::max(window.second, window.first));
    EndSlice(uuid);
  }

 private:
  // packet_ cleared and on our sequence; the very first packet clears the incremental state.
  void StartPacket() {
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kSequenceId);
    if (first_packet_) {
      packet_.set_sequence_flags(pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      packet_.set_first_packet_on_sequence(true);
      first_packet_ = false;
    }
  }

  void StartEventPacket(int64_t timestamp_ns) {
    StartPacket();
    packet_.set_timestamp(static_cast<uint64_t>(timestamp_ns));
    packet_.set_sequence_flags(packet_.sequence_flags() |
                               pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  }

  void EndSlice(uint64_t track) {
    StartEventPacket(open_ends_.back());
    open_ends_.pop_back();
    pf::TrackEvent& event = *packet_.mutable_track_event();
    event.set_type(pf::TrackEvent::TYPE_SLICE_END);
    event.set_track_uuid(track);
    stream_.Write(packet_);
  }

  // Interning: new entries go into the packet being built, which is the first to use them.
  uint64_t EventName(const std::string& name) {
    auto [iid, is_new] = event_names_.Intern(name);
    if (is_new) {
      pf::EventName& entry = *packet_.mutable_interned_data()->add_event_names();
      entry.set_iid(iid);
      entry.set_name(name);
    }
    return iid;
  }
  uint64_t Category(const std::string& name) {
    auto [iid, is_new] = categories_.Intern(name);
    if (is_new) {
      pf::EventCategory& entry = *packet_.mutable_interned_data()->add_event_categories();
      entry.set_iid(iid);
      entry.set_name(name);
    }
    return iid;
  }
  pf::DebugAnnotation& Annotation(pf::TrackEvent& event, const std::string& name) {
    auto [iid, is_new] = annotation_names_.Intern(name);
    if (is_new) {
      pf::DebugAnnotationName& entry =
          *packet_.mutable_interned_data()->add_debug_annotation_names();
      entry.set_iid(iid);
      entry.set_name(name);
    }
    pf::DebugAnnotation& annotation = *event.add_debug_annotations();
    annotation.set_name_iid(iid);
    return annotation;
  }
  void AddString(pf::TrackEvent& event, const std::string& name, const std::string& value) {
    Annotation(event, name).set_string_value(value);
  }
  void AddInt(pf::TrackEvent& event, const std::string& name, int64_t value) {
    Annotation(event, name).set_int_value(value);
  }

  PacketStream& stream_;
  pf::TracePacket packet_;
  bool first_packet_ = true;
  int32_t last_id_ = 0;
  std::map<std::string, Process> processes_;
  Interner event_names_, categories_, annotation_names_;
  std::vector<const v1::SectionSlice*> slices_;
  std::vector<int64_t> open_ends_;
};

// `measurement` (may be null) adds the run slice and the counter tracks.
absl::Status Write(const std::vector<const v1::ChunkRecord*>& chunks,
                   const v1::Measurement* measurement, const std::string& path) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Create(path);
  if (!file.ok()) return file.status();
  PacketStream stream(**file);
  TraceBuilder builder(stream);
  if (measurement != nullptr) builder.AddRun(*measurement);
  for (const v1::ChunkRecord* chunk : chunks) builder.AddChunk(*chunk);
  if (measurement != nullptr) {
    for (const trace_internal::CounterTrack& counter :
         trace_internal::CounterTracks(*measurement)) {
      builder.AddCounterTrack(counter);
    }
  }
  stream.Flush();
  if (!stream.status().ok()) return stream.status();
  return (*file)->Commit();
}

}  // namespace

absl::Status WritePerfettoTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                                const std::string& path) {
  return Write(std::vector<const v1::ChunkRecord*>(chunks.pointer_begin(), chunks.pointer_end()),
               nullptr, path);
}

absl::Status WritePerfettoTrace(const v1::Measurement& measurement, const std::string& path) {
  return Write(std::vector<const v1::ChunkRecord*>(measurement.chunks().pointer_begin(),
                                                   measurement.chunks().pointer_end()),
               &measurement, path);
}

absl::Status WritePerfettoTrace(const std::vector<v1::ChunkRecord>& chunks,
                                const std::string& path) {
  std::vector<const v1::ChunkRecord*> pointers;
  pointers.reserve(chunks.size());
  for (const v1::ChunkRecord& chunk : chunks) pointers.push_back(&chunk);
  return Write(pointers, nullptr, path);
}

}  // namespace roastcoffea
