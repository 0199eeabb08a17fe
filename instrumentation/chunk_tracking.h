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
// or, to keep the output type untouched, send the records to a sink (chunk_record_sink.h: a
// collector, a MeasurementSession, or your own):
//
//   roastcoffea::ChunkRecordCollector records;
//   auto tracked = roastcoffea::TrackChunksInto(MyProcessor{}, &records);  // Histos(metadata)
//   ...; std::vector<roastcoffea::v1::ChunkRecord> all = records.Take();
//
// Unlike the original: state lives with the calling thread, not on the processor, so several
// threads may track chunks at once (also with one shared processor, if it is itself
// thread-safe); every chunk yields a record, including failed ones (status FAILED, error_text);
// records travel with any output type, not only dicts.
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_

#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "instrumentation/chunk_record_collector.h"
#include "instrumentation/chunk_record_sink.h"
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
  // Size of `file` in bytes as stored, when known (> 0): ChunkRecord.file_bytes, the distinct
  // bytes read amplification is measured against.
  int64_t file_bytes = 0;
  // The executor's name for the work item that ran the chunk (ChunkRecord.task_id), when it
  // has one: how the session joins this record with the engine's record of the same task, and
  // how a chunk that reported no file is named. Empty: none.
  std::string task_id = {};  // (an initializer: -Wmissing-field-initializers on brace inits)
};

// What happens after a chunk's processor throws (its FAILED record is kept either way).
enum class FailurePolicy {
  // The failed chunk yields its record (and a default-constructed output); the run goes on.
  kContinue,
  // The record is produced, then ChunkFailedError (carrying it) is thrown to stop the run.
  kStop,
};

struct ChunkTrackingOptions {
  // Recorded in ChunkRecord.worker; empty -> "<hostname>:<pid>".
  std::string worker;
  FailurePolicy failure_policy = FailurePolicy::kContinue;
  // Timeline slices kept per chunk (ChunkRecord.slices), one per ScopedTimer entry; later
  // entries are only counted (ChunkRecord.dropped_slices). 0 keeps none. Bounds memory: the
  // thread's buffer holds this many 16-byte events. Values above 1 << 20 are clamped.
  uint32_t max_slices_per_chunk = 256;
  // false: no /proc/self/statm readings (the bulk of the per-chunk cost): memory_before/
  // after/peak_bytes stay 0 ("unknown") and ScopedMemory records no RSS delta. Pair with
  // //instrumentation:allocation_counting for exact per-thread memory at a lower cost.
  bool read_resident_memory = true;
  // false: no thread-CPU-clock readings (two per chunk: system calls unless the perf clock is
  // usable, see README "Thread CPU clock"); cpu_seconds stays 0.
  bool measure_cpu_time = true;
  // false: no /proc/thread-self/schedstat readings (a pread of about 0.6 us in a KVM guest,
  // see BM_ThreadSchedstatRead; with measure_cpu_time, a thread reuses its last reading while
  // it provably stayed on its CPU, so back-to-back short chunks read about once per
  // millisecond, see instrumentation/internal/run_queue_delay.h); run_queue_wait_seconds stays
  // absent.
  bool measure_run_queue_wait = true;
};

// Thrown by the tracking wrappers under FailurePolicy::kStop when a chunk's processor throws.
// Carries the chunk's FAILED record and the original exception.
class ChunkFailedError : public std::runtime_error {
 public:
  ChunkFailedError(v1::ChunkRecord record, std::exception_ptr cause);
  const v1::ChunkRecord& record() const { return record_; }
  // The exception the processor threw, for std::rethrow_exception.
  std::exception_ptr cause() const { return cause_; }

 private:
  v1::ChunkRecord record_;
  std::exception_ptr cause_;
};

// Turns measuring on or off for the whole process, at run time (default: on). While off,
// TrackChunk runs the processor with no current chunk, so section scopes cost one
// thread_local load; successful chunks are not recorded at all (TrackChunks and
// TrackChunksInto produce no record), failed chunks still give a FAILED record with metadata
// and error text but no measurements, so failures are never silent. Takes effect for chunks
// that start afterwards. Thread-safe (one relaxed atomic).
void SetInstrumentationEnabled(bool enabled);
bool InstrumentationEnabled();

// Thread indices for an executor's worker threads. A chunk record's thread_index is otherwise
// handed out in the order threads first track a chunk, which need not be the executor's worker
// order. ReserveThreadIndices(n) returns the first of n consecutive indices that no other
// thread will be handed; worker k calls AdoptThreadIndex(first + k) before its first chunk, so
// that its records and the executor's per-worker series and profiles ("host:pid/thread-<i>")
// name the same thread. AdoptThreadIndex does nothing on a thread that already has an index.
// Thread-safe.
int64_t ReserveThreadIndices(int count);
void AdoptThreadIndex(int64_t index);

namespace instrumentation_internal {
// The non-template body of TrackChunk (chunk_tracking.cc): calls invoke(callable) once.
// *recorded is false when instrumentation is disabled and the chunk succeeded. Under
// FailurePolicy::kStop a failure throws ChunkFailedError instead of returning.
v1::ChunkRecord TrackChunkErased(const ChunkMetadata& metadata, const ChunkTrackingOptions& options,
                                 void (*invoke)(void*), void* callable, bool* recorded);
}  // namespace instrumentation_internal

// Runs fn() once, as the processing of one chunk, on the calling thread and returns its record:
//   * dataset, file, uuid, entry_start, entry_stop, events: from `metadata`;
//   * start_unix_ns / end_unix_ns: wall clock, UTC; duration_seconds: steady clock;
//   * cpu_seconds: CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID) during fn;
//   * run_queue_wait_seconds: time the calling thread was runnable but waiting for a CPU
//     during fn (run_delay of /proc/thread-self/schedstat; exact to 2 us, and never more than
//     duration - cpu); absent when the kernel does not provide it. duration - cpu -
//     run_queue_wait = time blocked (I/O, locks, sleeping);
//   * memory_before/after_bytes: process RSS (/proc/self/statm) before and after;
//     memory_peak_bytes: the largest of those and of every ScopedMemory reading in the chunk
//     (0 means unknown); with //instrumentation:allocation_counting linked, also the exact
//     allocated_bytes and peak_live_bytes of this thread during fn;
//   * compressed/uncompressed_bytes_read: RecordBytesRead calls on this thread during fn;
//   * sections: what the scopes of sections.h recorded during fn, summed by name and kind, in
//     order of first entry;
//   * slices / dropped_slices: ScopedTimer entries as timeline slices (see the options);
//   * worker (options.worker or "<hostname>:<pid>"), thread_index (small, stable per thread);
//   * status CHUNK_STATUS_OK, or CHUNK_STATUS_FAILED with error_text = e.what() of the
//     std::exception fn threw ("unknown exception" for anything else); the exception is
//     swallowed under FailurePolicy::kContinue; under kStop, ChunkFailedError (with the record
//     and the original exception) is thrown after the measurement.
// While instrumentation is disabled the record has the metadata and status only.
// While fn runs, the chunk is this thread's current chunk for the scopes. Chunks may nest (a
// TrackChunk inside fn): the inner chunk gets its own sections; the outer one's times and bytes
// include the inner chunk. fn's return value, if any, is discarded.
//
// Thread-safety: any number of threads may call TrackChunk concurrently.
// Cost: two /proc/self/statm preads (about 0.9 us each in a KVM guest; see
// read_resident_memory), two thread-CPU-clock readings (a system call each, or ~10 ns where the
// perf clock is usable; see measure_cpu_time), the run-queue delay (mostly reused, see
// measure_run_queue_wait) and building the record (about 0.3 us): 2.9 us of CPU in all on a
// 2-core KVM guest; see bench/instrumentation_benchmark.cc, BM_TrackChunksEmptyProcessor.
template <typename Fn>
v1::ChunkRecord TrackChunk(const ChunkMetadata& metadata, Fn&& fn,
                           const ChunkTrackingOptions& options = {}) {
  static_assert(std::is_invocable_v<Fn&>, "TrackChunk needs a callable taking no arguments");
  using Callable = std::remove_reference_t<Fn>;
  bool recorded = false;
  return instrumentation_internal::TrackChunkErased(
      metadata, options, [](void* callable) { std::invoke(*static_cast<Callable*>(callable)); },
      const_cast<void*>(static_cast<const volatile void*>(std::addressof(fn))), &recorded);
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
    bool recorded = false;
    auto run = [&] { result.output = std::invoke(processor, metadata); };
    v1::ChunkRecord record = TrackChunkErased(
        metadata, options, [](void* callable) { (*static_cast<decltype(run)*>(callable))(); }, &run,
        &recorded);
    if (recorded) result.chunk_records.push_back(std::move(record));
    return result;
  }

  Processor processor_;
  ChunkTrackingOptions options_;
};

// What TrackChunksInto returns: calls the processor inside TrackChunk, records to a sink.
template <typename Processor>
class ChunkCollectingProcessor {
 public:
  ChunkCollectingProcessor(Processor processor, ChunkRecordSink* sink, ChunkTrackingOptions options)
      : processor_(std::move(processor)), sink_(sink), options_(std::move(options)) {}

  template <typename P = Processor,
            typename = std::enable_if_t<std::is_invocable_v<const P&, const ChunkMetadata&>>>
  auto operator()(const ChunkMetadata& metadata) const {
    return Run(processor_, metadata, *sink_, options_);
  }

  template <typename P = Processor,
            typename = std::enable_if_t<!std::is_invocable_v<const P&, const ChunkMetadata&>>>
  auto operator()(const ChunkMetadata& metadata) {
    return Run(processor_, metadata, *sink_, options_);
  }

 private:
  template <typename P>
  static auto Run(P& processor, const ChunkMetadata& metadata, ChunkRecordSink& sink,
                  const ChunkTrackingOptions& options) {
    using Output = std::decay_t<std::invoke_result_t<P&, const ChunkMetadata&>>;
    static_assert(std::is_default_constructible_v<Output>,
                  "a failed chunk yields a default-constructed Output");
    Output output{};
    bool recorded = false;
    auto run = [&] { output = std::invoke(processor, metadata); };
    try {
      v1::ChunkRecord record = TrackChunkErased(
          metadata, options, [](void* callable) { (*static_cast<decltype(run)*>(callable))(); },
          &run, &recorded);
      if (recorded) sink.Add(std::move(record));
    } catch (const ChunkFailedError& failure) {
      sink.Add(failure.record());  // kStop: keep the record, then stop the run
      throw;
    }
    return output;
  }

  Processor processor_;
  ChunkRecordSink* sink_;
  ChunkTrackingOptions options_;
};

}  // namespace instrumentation_internal

// Wraps a processor `Output processor(const ChunkMetadata&)` (any callable) into a callable
// `TrackedOutput<Output>(const ChunkMetadata&)` that runs it inside TrackChunk with `options`.
// A failed chunk gives a default-constructed Output plus its FAILED record (or, under
// FailurePolicy::kStop, ChunkFailedError carrying the record). The wrapper is const-callable
// when the processor is, and thread-safe when the processor is.
template <typename Processor>
auto TrackChunks(Processor processor, ChunkTrackingOptions options = {}) {
  static_assert(std::is_invocable_v<Processor&, const ChunkMetadata&>,
                "TrackChunks needs a processor callable as processor(const ChunkMetadata&)");
  return instrumentation_internal::ChunkTrackingProcessor<Processor>(std::move(processor),
                                                                     std::move(options));
}

// Wraps a processor `Output processor(const ChunkMetadata&)` into a callable with the same
// signature whose chunk records go to `sink` (a ChunkRecordCollector, a MeasurementSession or
// your own ChunkRecordSink; it must outlive the wrapper) instead of into the output. A failed
// chunk adds its FAILED record and returns a default-constructed Output, or under
// FailurePolicy::kStop adds it and throws ChunkFailedError. Thread-safe when the processor is:
// records from all threads end up in the sink.
template <typename Processor>
auto TrackChunksInto(Processor processor, ChunkRecordSink* sink,
                     ChunkTrackingOptions options = {}) {
  static_assert(std::is_invocable_v<Processor&, const ChunkMetadata&>,
                "TrackChunksInto needs a processor callable as processor(const ChunkMetadata&)");
  return instrumentation_internal::ChunkCollectingProcessor<Processor>(std::move(processor), sink,
                                                                       std::move(options));
}

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHUNK_TRACKING_H_
