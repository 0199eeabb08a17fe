#include "trace/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "aggregation/worker_names.h"
#include "io/atomic_write.h"
#include "io/json_escape.h"
#include "trace/trace_model.h"

namespace roastcoffea {
namespace {

// Microseconds with nanosecond precision, as the format's "ts" and "dur" expect.
std::string Micros(int64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1e3); }

void AppendEventHead(const std::string& name, const char* category, int pid, int64_t tid,
                     int64_t ts_ns, int64_t dur_ns, std::string& out) {
  out += "{\"ph\":\"X\",\"name\":";
  AppendJsonString(name, &out);
  absl::StrAppend(&out, ",\"cat\":\"", category, "\",\"pid\":", pid, ",\"tid\":", tid,
                  ",\"ts\":", Micros(ts_ns), ",\"dur\":", Micros(std::max<int64_t>(dur_ns, 0)));
}

void AppendDouble(double value, std::string& out) {
  // JSON has no NaN or infinity.
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  absl::StrAppendFormat(&out, "%.9g", value);
}

// The earliest time in the trace: every "ts" is relative to it.
int64_t TraceOrigin(const std::vector<const v1::ChunkRecord*>& chunks,
                    const std::vector<trace_internal::CounterTrack>& counters,
                    std::pair<int64_t, int64_t> run_window) {
  int64_t origin_ns = std::numeric_limits<int64_t>::max();
  for (const v1::ChunkRecord* chunk : chunks)
    origin_ns = std::min(origin_ns, chunk->start_unix_ns());
  for (const trace_internal::CounterTrack& track : counters) {
    for (int64_t time : track.times_unix_ns) origin_ns = std::min(origin_ns, time);
  }
  if (run_window.second > 0) origin_ns = std::min(origin_ns, run_window.first);
  return origin_ns;
}

// `{"key":"value",...}` of the run's metadata.
void AppendRunArguments(const v1::Measurement& measurement, std::string& out) {
  out += "{";
  bool first = true;
  for (const auto& [key, value] : trace_internal::RunArguments(measurement)) {
    if (!first) out += ",";
    first = false;
    AppendJsonString(key, &out);
    out += ":";
    AppendJsonString(value, &out);
  }
  out += "}";
}

// The "traceEvents" array: separates events, and numbers processes (workers) and names
// threads the first time each is used.
class TraceEvents {
 public:
  TraceEvents(int64_t origin_ns, std::string& out) : origin_ns_(origin_ns), out_(out) {}

  void AppendRunSlice(const v1::Measurement& measurement, std::pair<int64_t, int64_t> window) {
    const int pid = PidOf(trace_internal::kRunProcess);
    BeginEvent();
    absl::StrAppend(&out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid,
                    ",\"tid\":1,\"args\":{\"name\":\"run\"}}");
    BeginEvent();
    const std::string& name = measurement.metadata().name();
    AppendEventHead(name.empty() ? "run" : absl::StrCat("run ", name), "run", pid, 1,
                    window.first - origin_ns_, window.second - window.first, out_);
    out_ += ",\"args\":";
    AppendRunArguments(measurement, out_);
    out_ += "}";
  }

  // A viewer names each "<name> <unit>" after the argument's key.
  void AppendCounterTrack(const trace_internal::CounterTrack& track) {
    const int pid = PidOf(track.process);
    for (size_t i = 0; i < track.values.size(); ++i) {
      BeginEvent();
      out_ += "{\"ph\":\"C\",\"name\":";
      AppendJsonString(track.name, &out_);
      absl::StrAppend(&out_, ",\"pid\":", pid,
                      ",\"ts\":", Micros(track.times_unix_ns[i] - origin_ns_), ",\"args\":{");
      AppendJsonString(track.unit, &out_);
      out_ += ":";
      AppendDouble(track.values[i], out_);
      out_ += "}}";
    }
  }

  // The chunk's slice, then its sections' slices.
  void AppendChunk(const v1::ChunkRecord& chunk) {
    const int pid = PidOf(chunk.worker());
    const int64_t tid = chunk.thread_index() + 1;
    NameThread(pid, tid, chunk);
    const int64_t start_ns = chunk.start_unix_ns() - origin_ns_;
    BeginEvent();
    AppendEventHead(chunk.dataset().empty() ? "chunk" : chunk.dataset(), "chunk", pid, tid,
                    start_ns, chunk.end_unix_ns() - chunk.start_unix_ns(), out_);
    out_ += ",\"args\":";
    AppendChunkArguments(chunk, out_);
    out_ += "}";
    for (const v1::SectionSlice* slice : EnclosingSlicesFirst(chunk)) {
      BeginEvent();
      AppendEventHead(slice->name(), "section", pid, tid, start_ns + slice->start_offset_ns(),
                      slice->duration_ns(), out_);
      out_ += "}";
    }
  }

 private:
  void BeginEvent() {
    if (!first_) out_ += ",\n";
    first_ = false;
  }

  // Numbered in order of first appearance.
  int PidOf(const std::string& process) {
    auto [it, inserted] = pids_.emplace(process, static_cast<int>(pids_.size()) + 1);
    if (inserted) {
      BeginEvent();
      absl::StrAppend(&out_, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", it->second,
                      ",\"tid\":0,\"args\":{\"name\":");
      AppendJsonString(process.empty() ? "worker" : process, &out_);
      out_ += "}}";
    }
    return it->second;
  }

  void NameThread(int pid, int64_t tid, const v1::ChunkRecord& chunk) {
    if (!named_threads_.emplace(pid, tid).second) return;
    BeginEvent();
    absl::StrAppend(&out_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid, ",\"tid\":", tid,
                    ",\"args\":{\"name\":");
    // The name the tables and the Gantt chart use (aggregation/worker_names.h).
    AppendJsonString(WorkerThreadName(chunk.worker(), chunk.thread_index()), &out_);
    out_ += "}}";
  }

  static void AppendChunkArguments(const v1::ChunkRecord& chunk, std::string& out) {
    out += "{\"uuid\":";
    AppendJsonString(chunk.uuid(), &out);
    out += ",\"file\":";
    AppendJsonString(chunk.file(), &out);
    absl::StrAppend(&out, ",\"entry_start\":", chunk.entry_start(),
                    ",\"entry_stop\":", chunk.entry_stop(), ",\"events\":", chunk.events(),
                    ",\"status\":\"", v1::ChunkStatus_Name(chunk.status()), "\"");
    if (!chunk.error_text().empty()) {
      out += ",\"error_text\":";
      AppendJsonString(chunk.error_text(), &out);
    }
    if (chunk.dropped_slices() > 0) {
      absl::StrAppend(&out, ",\"dropped_slices\":", chunk.dropped_slices());
    }
    const trace_internal::ChunkValues values = trace_internal::MeasuredValues(chunk);
    for (const auto& [name, value] : values.doubles) {
      absl::StrAppend(&out, ",\"", name, "\":");
      AppendDouble(value, out);
    }
    for (const auto& [name, value] : values.ints) absl::StrAppend(&out, ",\"", name, "\":", value);
    out += "}";
  }

  // By start, then longest first, so a viewer nests them.
  static std::vector<const v1::SectionSlice*> EnclosingSlicesFirst(const v1::ChunkRecord& chunk) {
    std::vector<const v1::SectionSlice*> slices;
    slices.reserve(chunk.slices_size());
    for (const v1::SectionSlice& slice : chunk.slices()) slices.push_back(&slice);
    std::stable_sort(slices.begin(), slices.end(), [](const auto* a, const auto* b) {
      if (a->start_offset_ns() != b->start_offset_ns()) {
        return a->start_offset_ns() < b->start_offset_ns();
      }
      return a->duration_ns() > b->duration_ns();
    });
    return slices;
  }

  const int64_t origin_ns_;
  std::string& out_;
  bool first_ = true;
  std::map<std::string, int> pids_;  // worker -> pid
  std::set<std::pair<int, int64_t>> named_threads_;
};

// `measurement` (may be null) adds the run slice, counter tracks and metadata.
std::string Build(const std::vector<const v1::ChunkRecord*>& chunks,
                  const v1::Measurement* measurement) {
  std::vector<trace_internal::CounterTrack> counters;
  std::pair<int64_t, int64_t> run_window = {0, 0};
  if (measurement != nullptr) {
    counters = trace_internal::CounterTracks(*measurement);
    run_window = trace_internal::RunWindow(*measurement);
  }
  std::string out = "{\"displayTimeUnit\":\"ns\",";
  if (measurement != nullptr) {
    // The run's metadata, where trace viewers keep it.
    out += "\"otherData\":";
    AppendRunArguments(*measurement, out);
    out += ",";
  }
  out += "\"traceEvents\":[";
  TraceEvents events(TraceOrigin(chunks, counters, run_window), out);
  if (measurement != nullptr && run_window.second > 0) {
    events.AppendRunSlice(*measurement, run_window);
  }
  for (const trace_internal::CounterTrack& track : counters) events.AppendCounterTrack(track);
  for (const v1::ChunkRecord* chunk : chunks) events.AppendChunk(*chunk);
  out += "]}\n";
  return out;
}

// Whole or not at all: a full disk leaves no truncated trace (io/atomic_write.h).
absl::Status WriteFile(const std::string& json, const std::string& path) {
  return WriteFileAtomically(path, json);
}

}  // namespace

std::string ChromeTraceJson(const std::vector<v1::ChunkRecord>& chunks) {
  std::vector<const v1::ChunkRecord*> pointers;
  pointers.reserve(chunks.size());
  for (const v1::ChunkRecord& chunk : chunks) pointers.push_back(&chunk);
  return Build(pointers, nullptr);
}

std::string ChromeTraceJson(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  return Build(std::vector<const v1::ChunkRecord*>(chunks.pointer_begin(), chunks.pointer_end()),
               nullptr);
}

std::string ChromeTraceJson(const v1::Measurement& measurement) {
  return Build(std::vector<const v1::ChunkRecord*>(measurement.chunks().pointer_begin(),
                                                   measurement.chunks().pointer_end()),
               &measurement);
}

absl::Status WriteChromeTrace(const v1::Measurement& measurement, const std::string& path) {
  return WriteFile(ChromeTraceJson(measurement), path);
}

absl::Status WriteChromeTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                              const std::string& path) {
  return WriteFile(ChromeTraceJson(chunks), path);
}

absl::Status WriteChromeTrace(const std::vector<v1::ChunkRecord>& chunks, const std::string& path) {
  return WriteFile(ChromeTraceJson(chunks), path);
}

}  // namespace roastcoffea
