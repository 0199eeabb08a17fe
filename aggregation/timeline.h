// Derived time series of a measurement for its plots (export/report_plots.h renders them): the
// run's time origin, the rate of bytes read by chunks, the number of chunks running, and the
// per-lane (worker thread) activity of the chunk Gantt chart, aggregated into time bins when
// there are too many chunks to draw one by one. Times are seconds since the origin.
//
// Thread-safety: pure functions. Cost: O(chunks log chunks + bins) each.
#ifndef ROASTCOFFEA_AGGREGATION_TIMELINE_H_
#define ROASTCOFFEA_AGGREGATION_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The chunk records as the timelines read them: per record a few numbers and two interned
// names (40 bytes), not the record, so that a report of a million chunks streamed from a
// saved measurement (export/report_chunks.h) never holds a million records.
class TimelineChunks {
 public:
  struct Chunk {
    int64_t start_unix_ns = 0;
    int64_t end_unix_ns = 0;
    int64_t compressed_bytes_read = 0;
    int64_t thread_index = 0;
    uint32_t worker = 0;   // index into worker_names()
    uint32_t dataset = 0;  // index into dataset_names()
  };
  // Appends `record` (in the records' order: indices are record indices).
  void Add(const v1::ChunkRecord& record);
  // The same from a record's fields read apart: `chunk`'s numbers, its worker and dataset named
  // (its indices are set here).
  void Add(Chunk chunk, absl::string_view worker, absl::string_view dataset);
  // Room for `records` chunks (a hint: the vector grows past it as ever).
  void Reserve(size_t records) { chunks_.reserve(records); }
  const std::vector<Chunk>& chunks() const { return chunks_; }
  const std::vector<std::string>& worker_names() const { return worker_names_; }
  const std::vector<std::string>& dataset_names() const { return dataset_names_; }

 private:
  std::vector<Chunk> chunks_;
  std::vector<std::string> worker_names_, dataset_names_;
  absl::flat_hash_map<std::string, uint32_t> worker_ids_, dataset_ids_;
  // Interned ids by a cheap hash of the name's end (UINT32_MAX: none): the records of a run
  // interleave its workers and datasets, whose names then cost one compare, not a hash-map
  // lookup.
  static constexpr size_t kRecentNames = 4096;  // a power of 2 (the hash's top 12 bits)
  std::vector<uint32_t> recent_workers_, recent_datasets_;
};

// Whether a chunk is on the timelines (and in a Gantt lane): it has a start, and an end not
// before it.
bool ChunkHasTimes(int64_t start_unix_ns, int64_t end_unix_ns);

// The timeline form of measurement.chunks().
TimelineChunks TimelineChunksOf(const v1::Measurement& measurement);

// The instant "time since start" counts from: the metadata's start time when set, else the
// earliest chunk start or tracking sample; 0 when the measurement has no time at all.
int64_t TimelineOriginUnixNs(const v1::Measurement& measurement);
// The same with the records given apart (`measurement`'s own chunks are not read).
int64_t TimelineOriginUnixNs(const v1::Measurement& measurement, const TimelineChunks& chunks);

// Seconds from `origin_unix_ns` to `unix_ns`.
double SecondsSince(int64_t origin_unix_ns, int64_t unix_ns);

// A step function: value[i] holds from time[i] to time[i + 1]; the last value ends the series
// (a closing point repeats the value before it).
struct StepTimeline {
  std::vector<double> time_seconds;
  std::vector<double> value;
};

// Bytes read by chunks per second, in `bins` equal bins over the chunks' span. Each successful
// or failed chunk with times spreads its compressed_bytes_read evenly over its duration (a
// zero-length chunk puts them in its bin). Without chunk records with times, the aggregated
// chunk_info (the original tool's) is read instead. Empty when nothing has times and bytes read.
// The result has bins + 1 points: the last closes the series at the end of the span.
StepTimeline ReadRateTimeline(const v1::Measurement& measurement, int64_t origin_unix_ns,
                              int bins = 200);
// The same with the records given apart (`measurement` is read for its chunk_info only).
StepTimeline ReadRateTimeline(const v1::Measurement& measurement, const TimelineChunks& chunks,
                              int64_t origin_unix_ns, int bins = 200);

// Chunks running at every instant (a change at every chunk start and end; an end at the same
// instant as a start is applied first). Empty without chunk times.
StepTimeline RunningChunksTimeline(const v1::Measurement& measurement, int64_t origin_unix_ns);
StepTimeline RunningChunksTimeline(const TimelineChunks& chunks, int64_t origin_unix_ns);

// The time-weighted mean of a step timeline in `bins` equal bins over its span (bins + 1
// points, the last closing the series), so that thousands of changes read as a level.
// A timeline with fewer than two points is returned as it is.
StepTimeline BinnedMean(const StepTimeline& series, int bins);

// One chunk as drawn in a lane.
struct LaneChunk {
  size_t record = 0;  // index into measurement.chunks()
  double start_seconds = 0;
  double end_seconds = 0;
};

// The chunks of one worker thread, in start order, none overlapping another.
struct Lane {
  std::string worker;
  int64_t thread_index = 0;
  // 0, or the lane's place among the lanes of one (worker, thread_index) whose chunks overlap
  // in time (engine tasks on a multi-core worker all report thread 0).
  int slot = 0;
  std::vector<LaneChunk> chunks;
  double busy_seconds = 0;  // union of its chunks' intervals
  // From the first chunk start of any lane to the last end of any lane, minus busy_seconds.
  double idle_seconds = 0;
};

// The lanes of a Gantt chart of chunks: one per (worker, thread_index) in name order, split
// into as many slots as its chunks overlap (each chunk in the first slot free at its start);
// chunks without a start time are left out. `datasets` lists the chunks' datasets in
// first-seen order (dataset_index below indexes it).
struct ChunkLanes {
  std::vector<Lane> lanes;
  std::vector<std::string> datasets;
  std::vector<size_t> dataset_index;  // per chunk record; only meaningful for chunks in lanes
  double first_start_seconds = 0;
  double last_end_seconds = 0;
  size_t chunk_count = 0;  // chunks in lanes
};
ChunkLanes BuildChunkLanes(const v1::Measurement& measurement, int64_t origin_unix_ns);
ChunkLanes BuildChunkLanes(const TimelineChunks& chunks, int64_t origin_unix_ns);

// A lane summarised in `bins` equal time bins over [first_start, last_end]: the fraction of each
// bin its chunks covered, and the dataset that covered most of it (SIZE_MAX when none).
struct LaneBins {
  std::vector<double> busy_fraction;
  std::vector<size_t> dominant_dataset;
};
std::vector<LaneBins> BinChunkLanes(const ChunkLanes& lanes, int bins);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_AGGREGATION_TIMELINE_H_
