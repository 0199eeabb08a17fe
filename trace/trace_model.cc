#include "trace/trace_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "aggregation/worker_names.h"

namespace roastcoffea {
namespace trace_internal {
namespace {

// The finite points of one column that has a value per time; empty when it does not.
bool FillPoints(const google::protobuf::RepeatedField<int64_t>& times,
                const google::protobuf::RepeatedField<double>& values, CounterTrack& track) {
  if (values.empty() || values.size() != times.size()) return false;
  for (int i = 0; i < times.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    track.times_unix_ns.push_back(times[i]);
    track.values.push_back(values[i]);
  }
  return !track.values.empty();
}

// Nanoseconds since the epoch; -1 (unknown) outside what int64 nanoseconds hold, so that a
// hostile saved time cannot overflow.
int64_t Nanos(const google::protobuf::Timestamp& time) {
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (time.seconds() < 0 || time.seconds() > kMaxSeconds || time.nanos() < 0 ||
      time.nanos() >= 1000000000) {
    return -1;
  }
  return time.seconds() * 1000000000 + time.nanos();
}

}  // namespace

std::vector<CounterTrack> CounterTracks(const v1::Measurement& measurement) {
  std::vector<CounterTrack> tracks;
  if (!measurement.has_tracking()) return tracks;
  const v1::TrackingData& tracking = measurement.tracking();
  std::set<std::string> processes_with_memory;
  for (const v1::WorkerSeries& series : tracking.workers()) {
    const std::string process = WorkerProcessName(series.worker());
    CounterTrack cpu{process,
                     absl::StrCat(series.worker().empty() ? "worker" : series.worker(), " CPU"),
                     "%",
                     {},
                     {}};
    if (FillPoints(series.time_unix_ns(), series.cpu_percent(), cpu)) {
      tracks.push_back(std::move(cpu));
    }
    // Threads of one process share its memory: one track per process then.
    if (tracking.workers_share_process() && !processes_with_memory.insert(process).second) {
      continue;
    }
    CounterTrack memory{
        process,
        tracking.workers_share_process()
            ? std::string("RSS")
            : absl::StrCat(series.worker().empty() ? "worker" : series.worker(), " memory"),
        "bytes",
        {},
        {}};
    if (FillPoints(series.time_unix_ns(), series.memory_bytes(), memory)) {
      tracks.push_back(std::move(memory));
    }
  }
  if (!tracking.queued_chunks().empty() &&
      tracking.queued_chunks_size() == tracking.worker_count_time_unix_ns_size()) {
    CounterTrack queued{kRunProcess, "queued", "chunks", {}, {}};
    for (int i = 0; i < tracking.queued_chunks_size(); ++i) {
      queued.times_unix_ns.push_back(tracking.worker_count_time_unix_ns(i));
      queued.values.push_back(tracking.queued_chunks(i));
    }
    tracks.push_back(std::move(queued));
  }
  return tracks;
}

std::vector<std::pair<std::string, std::string>> RunArguments(const v1::Measurement& measurement) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  std::vector<std::pair<std::string, std::string>> arguments;
  const auto add = [&](const char* name, std::string value) {
    if (!value.empty()) arguments.emplace_back(name, std::move(value));
  };
  add("name", metadata.name());
  add("backend", metadata.backend());
  add("host", metadata.host());
  add("tool_version", metadata.tool_version());
  add("command_line", absl::StrJoin(metadata.command_line(), " "));
  if (metadata.elapsed_seconds() > 0) {
    add("elapsed_seconds", absl::StrFormat("%.3f", metadata.elapsed_seconds()));
  }
  if (metadata.interrupted()) add("interrupted", metadata.interruption());
  // Sorted by key: protobuf map order is unspecified.
  std::map<std::string, std::string> configuration(metadata.configuration().begin(),
                                                   metadata.configuration().end());
  for (const auto& [key, value] : configuration) {
    arguments.emplace_back(absl::StrCat("config.", key), value);
  }
  return arguments;
}

std::pair<int64_t, int64_t> RunWindow(const v1::Measurement& measurement) {
  const v1::MeasurementMetadata& metadata = measurement.metadata();
  if (metadata.has_start_time() && metadata.has_end_time()) {
    const int64_t start = Nanos(metadata.start_time());
    const int64_t end = Nanos(metadata.end_time());
    if (start > 0 && end >= start) return {start, end};
  }
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  for (const v1::ChunkRecord& chunk : measurement.chunks()) {
    start = std::min(start, chunk.start_unix_ns());
    end = std::max(end, chunk.end_unix_ns());
  }
  if (measurement.has_tracking()) {
    for (const v1::WorkerSeries& series : measurement.tracking().workers()) {
      for (int64_t time : series.time_unix_ns()) {
        start = std::min(start, time);
        end = std::max(end, time);
      }
    }
  }
  if (start > end) return {0, 0};
  return {start, end};
}

ChunkValues MeasuredValues(const v1::ChunkRecord& chunk) {
  ChunkValues values;
  values.doubles.emplace_back("cpu_seconds", chunk.cpu_seconds());
  if (chunk.has_run_queue_wait_seconds()) {
    values.doubles.emplace_back("run_queue_wait_seconds", chunk.run_queue_wait_seconds());
  }
  values.ints.emplace_back("compressed_bytes_read", chunk.compressed_bytes_read());
  values.ints.emplace_back("uncompressed_bytes_read", chunk.uncompressed_bytes_read());
  // An RSS of 0 is impossible: the value was not measured.
  if (chunk.memory_before_bytes() > 0) {
    values.ints.emplace_back("memory_before_bytes", chunk.memory_before_bytes());
  }
  if (chunk.memory_after_bytes() > 0) {
    values.ints.emplace_back("memory_after_bytes", chunk.memory_after_bytes());
  }
  if (chunk.memory_peak_bytes() > 0) {
    values.ints.emplace_back("memory_peak_bytes", chunk.memory_peak_bytes());
  }
  if (chunk.has_allocated_bytes()) {
    values.ints.emplace_back("allocated_bytes", chunk.allocated_bytes());
  }
  if (chunk.has_peak_live_bytes()) {
    values.ints.emplace_back("peak_live_bytes", chunk.peak_live_bytes());
  }
  return values;
}

}  // namespace trace_internal
}  // namespace roastcoffea
