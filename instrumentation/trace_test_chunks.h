// Test helper for the timeline writers (Chrome JSON, Perfetto): chunk records with slices.
#ifndef ROASTCOFFEA_INSTRUMENTATION_TRACE_TEST_CHUNKS_H_
#define ROASTCOFFEA_INSTRUMENTATION_TRACE_TEST_CHUNKS_H_

#include <cstdint>
#include <string>

#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace testing_instrumentation {

// An OK chunk of dataset "ttbar" (file root://eos/f.root, entries [0, 1000), uuid
// "u-<start_ns>") that ran on `worker`'s thread `thread` from start_ns to end_ns.
inline v1::ChunkRecord TraceChunk(const std::string& worker, int64_t thread, int64_t start_ns,
                                  int64_t end_ns) {
  v1::ChunkRecord chunk;
  chunk.set_dataset("ttbar");
  chunk.set_file("root://eos/f.root");
  chunk.set_uuid("u-" + std::to_string(start_ns));
  chunk.set_entry_start(0);
  chunk.set_entry_stop(1000);
  chunk.set_events(1000);
  chunk.set_worker(worker);
  chunk.set_thread_index(thread);
  chunk.set_start_unix_ns(start_ns);
  chunk.set_end_unix_ns(end_ns);
  chunk.set_status(v1::CHUNK_STATUS_OK);
  return chunk;
}

}  // namespace testing_instrumentation
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_TRACE_TEST_CHUNKS_H_
