// Per-chunk metrics: the C++ counterpart of the original tool's @track_metrics decorator.
//
//   roastcoffea::ChunkMetadata metadata{"ttbar", "root://.../f.root", "uuid", 0, 100000, 100000};
//   roastcoffea::v1::ChunkRecord record =
//       roastcoffea::TrackChunk(metadata, [&] { output = processor(metadata); });
//
// or, for executors that merge outputs, wrap the processor once and merge what it returns:
//
//   auto tracked = roastcoffea::TrackChunks(MyProcessor{});   // TrackedOutput<Histos>(metadata)
//   roastcoffea::TrackedOutput<Histos> total;
//   for (const auto& chunk : chunks) total += tracked(chunk);  // outputs added, records appended
//
// Unlike the original: state lives with the calling thread, not on the processor, so several
// threads may track chunks at once (also with one shared processor, if it is itself
// thread-safe); every chunk yields a record, including failed ones (status FAILED, error_text);
// records travel with any output type, not only dicts.
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "instrumentation/sections.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// What the executor knows about a chunk; copied into its ChunkRecord.
struct ChunkMetadata {
  std::string dataset;
  std::string file;
  std::string uuid;
  int64_t entry_start = 0;
  int64_t entry_stop = 0;
  int64_t events = 0;
};

struct ChunkTrackingOptions {
  // Recorded in ChunkRecord.worker; empty -> "<hostname>:<pid>".
  std::string worker;
  // false: a throwing processor gives a FAILED record and the run goes on.
  // true: the exception propagates out of TrackChunk after the measurement.
  bool rethrow_failures = false;
};

namespace instrumentation_internal {
// The non-template body of TrackChunk (chunk_tracking.cc): calls invoke(callable) once.
v1::ChunkRecord TrackChunkErased(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                                 void (*invoke)(void*), void* callable);
}  // namespace instrumentation_internal

// Runs fn() once, as the processing of one chunk, on the calling thread and returns its record:
//   * dataset, file, uuid, entry_start, entry_stop, events: from `metadata`;
//   * start_unix_ns / end_unix_ns: wall clock, UTC; duration_seconds: steady clock;
//   * cpu_seconds: CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) during fn;
//   * memory_before/after_bytes: process RSS (/proc/self/statm) before and after;
//     memory_peak_bytes: the largest of those and of every ScopedMemory reading in the chunk
//     (0 means unknown);
//   * compressed/uncompressed_bytes_read: RecordBytesRead calls on this thread during fn;
//   * sections: what the scopes of sections.h recorded during fn, summed by name and kind, in
//     order of first entry;
//   * worker (options.worker or "<hostname>:<pid>"), thread_index (small, stable per thread);
//   * status CHUNK_STATUS_OK, or CHUNK_STATUS_FAILED with error_text = e.what() of the
//     std::exception fn threw ("unknown exception" for anything else); the exception is
//     swallowed unless options.rethrow_failures, in which case it propagates unchanged after
//     the measurement (and the record is not returned).
// While fn runs, the chunk is this thread's current chunk for the scopes. Chunks may nest (a
// TrackChunk inside fn): the inner chunk gets its own sections; the outer one's times and bytes
// include the inner chunk. fn's return value, if any, is discarded.
//
// Thread-safety: any number of threads may call TrackChunk concurrently.
// Cost: a few system calls and /proc reads per chunk (microseconds), one record.
template <typename Fn>
v1::ChunkRecord TrackChunk(const ChunkMetadata& metadata, Fn&& fn,
                           const ChunkTrackingOptions& options = {}) {
  static_assert(std::is_invocable_v<Fn&>, "TrackChunk needs a callable taking no arguments");
  using Callable = std::remove_reference_t<Fn>;
  return instrumentation_internal::TrackChunkErased(
      metadata, options, [](void* callable) { std::invoke(*static_cast<Callable*>(callable)); },
      const_cast<void*>(static_cast<const volatile void*>(std::addressof(fn))));
}

// The list-accumulator idea of the original: an output that carries its chunk records, so that
// merging two outputs (operator+=) merges the user outputs AND concatenates the records.
// Output must be default-constructible and support `output += other_output`.
template <typename Output>
struct TrackedOutput {
  Output output{};
  std::vector<v1::ChunkRecord> chunk_records;

  // output += std::move(other.output); then other's records are appended (moved).
  TrackedOutput& operator+=(TrackedOutput&& other) {
    if (&other == this) return *this += static_cast<const TrackedOutput&>(other);
    output += std::move(other.output);
    chunk_records.insert(chunk_records.end(), std::make_move_iterator(other.chunk_records.begin()),
                         std::make_move_iterator(other.chunk_records.end()));
    return *this;
  }

  // output += other.output; then copies of other's records are appended.
  TrackedOutput& operator+=(const TrackedOutput& other) {
    output += other.output;
    // Index loop: `other` may be *this, and inserting a vector's own range into it is undefined.
    const size_t count = other.chunk_records.size();
    chunk_records.reserve(chunk_records.size() + count);
    for (size_t i = 0; i < count; ++i) chunk_records.push_back(other.chunk_records[i]);
    return *this;
  }
};

namespace instrumentation_internal {

// What TrackChunks returns: calls the processor inside TrackChunk.
template <typename Processor>
class ChunkTrackingProcessor {
 public:
  ChunkTrackingProcessor(Processor processor, ChunkTrackingOptions options)
      : processor_(std::move(processor)), options_(std::move(options)) {}

  template <typename P = Processor,
            typename = std::enable_if_t<std::is_invocable_v<const P&, const ChunkMetadata&>>>
  auto operator()(const ChunkMetadata& metadata) const {
    return Run(processor_, metadata, options_);
  }

  // For processors whose call operator is not const.
  template <typename P = Processor,
            typename = std::enable_if_t<!std::is_invocable_v<const P&, const ChunkMetadata&>>>
  auto operator()(const ChunkMetadata& metadata) {
    return Run(processor_, metadata, options_);
  }

 private:
  template <typename P>
  static auto Run(P& processor, const ChunkMetadata& metadata,
                  const ChunkTrackingOptions& options) {
    using Output = std::decay_t<std::invoke_result_t<P&, const ChunkMetadata&>>;
    static_assert(
        !std::is_void_v<Output>,
        "TrackChunks needs a processor that returns an output (Output(const ChunkMetadata&))");
    static_assert(std::is_default_constructible_v<Output>,
                  "a failed chunk yields a default-constructed Output");
    TrackedOutput<Output> result;
    v1::ChunkRecord record = TrackChunk(
        metadata, [&] { result.output = std::invoke(processor, metadata); }, options);
    result.chunk_records.push_back(std::move(record));
    return result;
  }

  Processor processor_;
  ChunkTrackingOptions options_;
};

}  // namespace instrumentation_internal

// Wraps a processor `Output processor(const ChunkMetadata&)` (any callable) into a callable
// `TrackedOutput<Output>(const ChunkMetadata&)` that runs it inside TrackChunk with `options`.
// A failed chunk gives a default-constructed Output plus its FAILED record (or, with
// options.rethrow_failures, the exception). The wrapper is const-callable when the processor
// is, and thread-safe when the processor is.
template <typename Processor>
auto TrackChunks(Processor processor, ChunkTrackingOptions options = {}) {
  static_assert(std::is_invocable_v<Processor&, const ChunkMetadata&>,
                "TrackChunks needs a processor callable as processor(const ChunkMetadata&)");
  return instrumentation_internal::ChunkTrackingProcessor<Processor>(std::move(processor),
                                                                     std::move(options));
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_
