// Timeline export: chunk records as a Chrome trace-event JSON file, which ui.perfetto.dev and
// chrome://tracing open. Each worker is a process and each of its threads a track named as the
// tables and the Gantt chart name it ("host:pid/thread-k", aggregation/worker_names.h); every
// chunk is a slice on the thread that ran it (name: its dataset; arguments: uuid, file, entry
// range, events, status, error text, CPU seconds, run-queue wait, bytes read, RSS before/after/
// peak and allocated bytes when measured) and every ScopedTimer entry kept in
// ChunkRecord.slices is a slice nested inside it. From a whole measurement also: counter
// tracks beside the slices (per-thread CPU %, process RSS, queued chunks; trace_model.h), a
// "run" process with one slice over the run whose arguments are the run's metadata, and the
// same metadata in the file's "otherData". Times are microseconds since the earliest event.
//
// Thread-safety: pure functions. Cost: linear in chunks + slices; the JSON is built in memory
// (about 150 bytes per slice), so it suits runs up to some million slices.
#ifndef ROASTCOFFEA_TRACE_CHROME_TRACE_H_
#define ROASTCOFFEA_TRACE_CHROME_TRACE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The whole measurement: chunks, counters and metadata.
std::string ChromeTraceJson(const v1::Measurement& measurement);
// Chunk slices only.
std::string ChromeTraceJson(const std::vector<v1::ChunkRecord>& chunks);
std::string ChromeTraceJson(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);

// Writes ChromeTraceJson(...) to `path` (replacing it). An error names the path.
absl::Status WriteChromeTrace(const v1::Measurement& measurement, const std::string& path);
absl::Status WriteChromeTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                              const std::string& path);
absl::Status WriteChromeTrace(const std::vector<v1::ChunkRecord>& chunks, const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TRACE_CHROME_TRACE_H_
