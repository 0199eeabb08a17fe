#include "instrumentation/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "io/atomic_write.h"
#include "io/json_escape.h"
#include "absl/strings/str_format.h"

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

std::string Build(const std::vector<const v1::ChunkRecord*>& chunks) {
  int64_t origin_ns = std::numeric_limits<int64_t>::max();
  for (const v1::ChunkRecord* chunk : chunks) origin_ns = std::min(origin_ns, chunk->start_unix_ns());
  std::map<std::string, int> pids;  // worker -> pid, numbered in order of first appearance
  std::map<std::pair<int, int64_t>, bool> named_threads;

  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const v1::ChunkRecord* chunk : chunks) {
    auto [it, inserted] = pids.emplace(chunk->worker(), static_cast<int>(pids.size()) + 1);
    const int pid = it->second;
    const int64_t tid = chunk->thread_index() + 1;
    if (inserted) {
      begin_event();
      absl::StrAppend(&out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                      ",\"tid\":0,\"args\":{\"name\":");
      AppendJsonString(chunk->worker().empty() ? "worker" : chunk->worker(), &out);
      out += "}}";
    }
    if (named_threads.emplace(std::make_pair(pid, tid), true).second) {
      begin_event();
      absl::StrAppend(&out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid,
                      ",\"tid\":", tid, ",\"args\":{\"name\":\"thread ", chunk->thread_index(),
                      "\"}}");
    }
    const int64_t start_ns = chunk->start_unix_ns() - origin_ns;
    begin_event();
    AppendEventHead(chunk->dataset().empty() ? "chunk" : chunk->dataset(), "chunk", pid, tid,
                    start_ns, chunk->end_unix_ns() - chunk->start_unix_ns(), out);
    out += ",\"args\":{\"uuid\":";
    AppendJsonString(chunk->uuid(), &out);
    out += ",\"file\":";
    AppendJsonString(chunk->file(), &out);
    absl::StrAppend(&out, ",\"entry_start\":", chunk->entry_start(),
                    ",\"entry_stop\":", chunk->entry_stop(), ",\"events\":", chunk->events(),
                    ",\"status\":\"", v1::ChunkStatus_Name(chunk->status()), "\"");
    if (!chunk->error_text().empty()) {
      out += ",\"error_text\":";
      AppendJsonString(chunk->error_text(), &out);
    }
    if (chunk->dropped_slices() > 0) {
      absl::StrAppend(&out, ",\"dropped_slices\":", chunk->dropped_slices());
    }
    out += "}}";

    // Enclosing slices first: by start, then longest first.
    std::vector<const v1::SectionSlice*> slices;
    slices.reserve(chunk->slices_size());
    for (const v1::SectionSlice& slice : chunk->slices()) slices.push_back(&slice);
    std::stable_sort(slices.begin(), slices.end(), [](const auto* a, const auto* b) {
      if (a->start_offset_ns() != b->start_offset_ns()) {
        return a->start_offset_ns() < b->start_offset_ns();
      }
      return a->duration_ns() > b->duration_ns();
    });
    for (const v1::SectionSlice* slice : slices) {
      begin_event();
      AppendEventHead(slice->name(), "section", pid, tid, start_ns + slice->start_offset_ns(),
                      slice->duration_ns(), out);
      out += "}";
    }
  }
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
  return Build(pointers);
}

std::string ChromeTraceJson(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks) {
  return Build(std::vector<const v1::ChunkRecord*>(chunks.pointer_begin(), chunks.pointer_end()));
}

absl::Status WriteChromeTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                              const std::string& path) {
  return WriteFile(ChromeTraceJson(chunks), path);
}

absl::Status WriteChromeTrace(const std::vector<v1::ChunkRecord>& chunks, const std::string& path) {
  return WriteFile(ChromeTraceJson(chunks), path);
}

}  // namespace roastcoffea
