// Internal to //trace: what both trace writers (chrome_trace.h, perfetto_trace.h)
// show besides the chunk and section slices: counter tracks from the measurement's tracking
// series, the run's metadata, a chunk's measured values, and the thread names.
//
// Thread-safety: pure functions. Cost: linear in the series and chunks.
#ifndef ROASTCOFFEA_TRACE_TRACE_MODEL_H_
#define ROASTCOFFEA_TRACE_TRACE_MODEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace trace_internal {

// The process track every run-wide track (the run slice, queued chunks) belongs to.
inline constexpr char kRunProcess[] = "run";

// One counter track: `process` is the chunk records' worker it sits beside ("host:pid" for
// the threadpool, a Dask worker's address), or kRunProcess.
struct CounterTrack {
  std::string process;
  std::string name;  // e.g. "vm:635/thread-0 CPU", "RSS", "queued"
  std::string unit;  // e.g. "%", "bytes", "chunks"
  std::vector<int64_t> times_unix_ns;
  std::vector<double> values;  // finite only; parallel to times_unix_ns
};

// Per worker series: its CPU percent ("<worker> CPU", "%"; the threadpool's per-thread CPU)
// and memory ("RSS", "bytes": once per process when the workers share it, else
// "<worker> memory"); the queued chunks of the run ("queued", "chunks"). Series whose columns
// do not match their times, and non-finite values, are left out. In series order.
std::vector<CounterTrack> CounterTracks(const v1::Measurement& measurement);

// The run's metadata as (name, value) pairs: name, backend, host, tool version, command line,
// elapsed seconds, whether interrupted, and each configuration entry ("config.<key>"), for the
// arguments of the run slice. Empty values are left out.
std::vector<std::pair<std::string, std::string>> RunArguments(const v1::Measurement& measurement);

// [start, end] of the run slice: the metadata's start and end times when set, else the span
// of the chunks and series; {0, 0} when nothing is known.
std::pair<int64_t, int64_t> RunWindow(const v1::Measurement& measurement);

// The measured values of a chunk for its slice's arguments, as (name, value): CPU seconds,
// run-queue wait, bytes read (compressed, uncompressed), RSS before, after and peak (left out
// when 0: not measured), allocated and peak live bytes (when counted). Doubles are seconds.
struct ChunkValues {
  std::vector<std::pair<const char*, int64_t>> ints;
  std::vector<std::pair<const char*, double>> doubles;
};
ChunkValues MeasuredValues(const v1::ChunkRecord& chunk);

}  // namespace trace_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_TRACE_TRACE_MODEL_H_
