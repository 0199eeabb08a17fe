// Timeline export in Perfetto's native protobuf trace format (trace/perfetto_trace.proto,
// Perfetto's own field numbers), for runs too large for Chrome JSON. The model is that of
// chrome_trace.h: each worker is a process track and each of its threads a thread track named
// as the tables name it ("host:pid/thread-k"); every chunk is a slice on the thread that ran it
// (name: its dataset; debug annotations: uuid, file, entry range, events, status, error text,
// dropped slices, CPU seconds, run-queue wait, bytes read, RSS and allocations when measured)
// and every ScopedTimer entry kept in ChunkRecord.slices is a slice nested inside it. From a
// whole measurement also: counter tracks (per-thread CPU %, process RSS, queued chunks) under
// their process, and a "run" process whose one slice spans the run with its metadata.
// Timestamps are absolute UTC nanoseconds on Perfetto's default trace clock; the UI shows
// them relative to the trace start.
//
// Each process and thread gets an id from one counter in order of first appearance (worker 1
// is pid 1, its first thread tid 2, ...): ids never collide, so trace_processor cannot mistake
// a thread of one worker for a reused thread id of another. The track uuid equals that id.
//
// All packets are on one sequence (trusted_packet_sequence_id 1): the first clears the
// incremental state, every track event needs it. Event names, categories and annotation names
// are interned on first use, so a repeated section name costs one varint.
//
// Thread-safety: pure functions. Cost: linear in chunks + slices; packets are streamed to the
// file through a 1 MiB buffer, so memory does not grow with the number of slices (only with
// the number of distinct names and threads). About 54 bytes and 0.5 us per slice, half of
// Chrome JSON's (bench/trace_benchmark.cc).
#ifndef ROASTCOFFEA_TRACE_PERFETTO_TRACE_H_
#define ROASTCOFFEA_TRACE_PERFETTO_TRACE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// Writes the trace of `chunks` to `path` atomically (a sibling temporary file, then rename),
// replacing it. No chunks: an empty file, which is a valid trace with no packets. Errors name
// the path.
absl::Status WritePerfettoTrace(const v1::Measurement& measurement, const std::string& path);
absl::Status WritePerfettoTrace(const google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks,
                                const std::string& path);
absl::Status WritePerfettoTrace(const std::vector<v1::ChunkRecord>& chunks,
                                const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TRACE_PERFETTO_TRACE_H_
