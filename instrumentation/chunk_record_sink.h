// ChunkRecordSink: where finished chunk records go. TrackChunksInto (chunk_tracking.h) hands
// each record to one; ChunkRecordCollector (chunk_record_collector.h) keeps them in memory, and
// MeasurementSession (//collector) records them for the run's measurement, so a tracked
// processor can feed either, or your own sink (a file, a queue), without changing.
//
//   roastcoffea::ChunkRecordCollector records;                  // or a MeasurementSession
//   auto tracked = roastcoffea::TrackChunksInto(MyProcessor{}, &records);
//
// Implementations: Add may be called from any thread at any time, once per chunk (never on
// the section-scope path).
#ifndef ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_SINK_H_
#define ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_SINK_H_

#include "schema/measurement.pb.h"

namespace roastcoffea {

class ChunkRecordSink {
 public:
  virtual ~ChunkRecordSink() = default;

  // One chunk ended (OK or FAILED). Thread-safe.
  virtual void Add(v1::ChunkRecord record) = 0;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_INSTRUMENTATION_CHUNK_RECORD_SINK_H_
