// What the HTML report's plots read of the chunk records, in compact columns (about 80 bytes a
// record): the timeline form (aggregation/timeline.h) and the few numbers of the chunk
// histograms, plus the whole records while there are few enough to draw one by one in the
// Gantt chart (tooltips, sections). Filled record by record, from a measurement's records or
// streamed from a saved one (store/measurement_io.h ForEachChunkRecord), so that a report of a
// million chunks never holds a million records (issue #25).
//
// Thread-safety: none (one writer). Cost: O(1) amortized per record.
#ifndef ROASTCOFFEA_EXPORT_REPORT_CHUNKS_H_
#define ROASTCOFFEA_EXPORT_REPORT_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "aggregation/timeline.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The Gantt chart draws each chunk up to this many; above, each lane is drawn in time bins.
inline constexpr size_t kMaxGanttChunks = 3000;

class ReportChunks {
 public:
  // Appends `record` (in the records' order).
  void Add(const v1::ChunkRecord& record);
  // The same from the record's serialized bytes (store/measurement_io.h
  // ForEachSerializedChunkRecord), reading only the fields above: the record is parsed whole
  // only when kept for the Gantt chart. A field given twice counts as protobuf merges it (the
  // last value; each accessed branch). False when the bytes are not a record's wire form (the
  // report then fails); the contents of fields not read (sections, file metadata, names other
  // than the worker and the dataset) are not checked.
  bool AddSerialized(absl::string_view bytes);
  // Room for `records` records (a hint, e.g. the metrics' chunk count): a million records
  // appended without it touched their columns' memory twice, growing them.
  void Reserve(size_t records);

  size_t size() const { return failed_.size(); }
  const TimelineChunks& timeline() const { return timeline_; }
  bool failed(size_t i) const { return failed_[i] != 0; }
  double duration_seconds(size_t i) const { return duration_seconds_[i]; }
  int64_t events(size_t i) const { return events_[i]; }
  int64_t compressed_bytes_read(size_t i) const {
    return timeline_.chunks()[i].compressed_bytes_read;
  }
  int64_t uncompressed_bytes_read(size_t i) const { return uncompressed_bytes_read_[i]; }
  int64_t accessed_bytes(size_t i) const { return accessed_bytes_[i]; }
  int accessed_branches(size_t i) const { return accessed_branches_[i]; }
  const std::string& dataset(size_t i) const {
    return timeline_.dataset_names()[timeline_.chunks()[i].dataset];
  }
  // Record `i` whole when it has times (ChunkHasTimes) and at most kMaxGanttChunks records
  // have; else nullptr.
  const v1::ChunkRecord* record(size_t i) const;

 private:
  TimelineChunks timeline_;
  std::vector<double> duration_seconds_;
  std::vector<int64_t> events_, uncompressed_bytes_read_, accessed_bytes_;
  std::vector<int32_t> accessed_branches_;
  std::vector<uint8_t> failed_;
  // The fields read of one record; the rest of Add's work.
  struct Fields {
    TimelineChunks::Chunk timeline;
    double duration_seconds = 0;
    int64_t events = 0, uncompressed_bytes_read = 0, accessed_bytes = 0;
    int32_t accessed_branches = 0;
    bool failed = false;
  };
  // `whole` gives the record when it is kept whole.
  template <typename WholeRecord>
  void AddFields(const Fields& fields, absl::string_view worker, absl::string_view dataset,
                 WholeRecord whole);
  // The records with times and their indices, while at most kMaxGanttChunks; then none.
  std::vector<v1::ChunkRecord> timed_records_;
  std::vector<size_t> timed_index_;
  size_t timed_count_ = 0;
};

// The report form of measurement.chunks().
ReportChunks ReportChunksOf(const v1::Measurement& measurement);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_REPORT_CHUNKS_H_
