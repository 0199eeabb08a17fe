// Timeline export: chunk records as a Chrome trace-event JSON file, which ui.perfetto.dev and
// chrome://tracing open. Each worker is a process and each of its threads a track; every chunk
// is a slice on the thread that ran it (name: its dataset; arguments: uuid, file, entry range,
// events, status, error text) and every ScopedTimer entry kept in ChunkRecord.slices is a
// slice nested inside it. Times are microseconds since the earliest chunk start.
//
// Thread-safety: pure functions. Cost: linear in chunks + slices; the JSON is built in memory
// (about 150 bytes per slice), so it suits runs up to some million slices.
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHROME_TRACE_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHROME_TRACE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

std::string ChromeTraceJson(const std::vector<v1::ChunkRecord>& chunks);
std::string ChromeTraceJson(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks);

// Writes ChromeTraceJson(chunks) to `path` (replacing it). An error names the path.
absl::Status WriteChromeTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                              const std::string& path);
absl::Status WriteChromeTrace(const std::vector<v1::ChunkRecord>& chunks, const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHROME_TRACE_H_
