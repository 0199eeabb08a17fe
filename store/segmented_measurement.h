// measurement.pbs: a measurement too large for one protobuf message (libprotobuf neither writes
// nor parses a message over 2 GiB; a TaskVine log of 5.3 million tasks is one), written as parts.
//
// The file is a sequence of parts, each a varint byte count and then the bytes of a serialized
// v1::Measurement holding some of the fields: the first part everything but the chunk records,
// the next ones the chunk records (then the rejected ones) in batches. Parsing the parts one
// after the other into one message (MergeFrom) gives the measurement back: protobuf merges
// singular fields and appends repeated ones. Each part stays far below 2 GiB, so the file has
// no size ceiling; writing holds one part in memory, not the whole message.
//
// Thread-safety: no shared state. Cost: one pass over the message to write, one over the file
// to read.
#ifndef ROASTCOFFEA_STORE_SEGMENTED_MEASUREMENT_H_
#define ROASTCOFFEA_STORE_SEGMENTED_MEASUREMENT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "io/atomic_write.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "store/measurement_to_save.h"

namespace roastcoffea {
namespace store_internal {

// Chunk records per part: about 3 MB of records, never near the 2 GiB limit.
inline constexpr int kChunksPerPart = 10000;

// Measurements whose binary form is larger than this (64 MiB, about 10^5 chunk records) are
// saved as parts, without the JSON copy: the JSON is four to five times larger and its writing
// cost 90 % of a 10^6-chunk save (10 s CPU); the parts are written holding one part in memory
// and read back streaming. Tests lower it.
inline constexpr int64_t kDefaultSegmentThresholdBytes = int64_t{64} << 20;
int64_t SegmentThresholdBytes();
void SetSegmentThresholdBytesForTesting(int64_t bytes);

// Appends the parts of `measurement` to `out`. FailedPrecondition when the first part (all but
// the chunk records) alone is over 2 GiB. `records_sized`: measurement.ByteSizeLong() was called
// and the message not changed since, so the chunk records' sizes it cached are used as they are
// (computing them again was a third of a 10^6-chunk save's serialization).
absl::Status WriteMeasurementParts(const v1::Measurement& measurement, AtomicFileWriter& out,
                                   bool records_sized = false);
// The same for a measurement in pieces (store/measurement_to_save.h): the parts of the one
// message holding them all, a table's records read one at a time (to_save.chunks surveyed with
// kChunksPerPart). `records_sized` as above, for measurement->chunks().
absl::Status WriteMeasurementParts(const MeasurementToSave& to_save, AtomicFileWriter& out,
                                   bool records_sized = false);

// What a reader needs of a measurement; what it does not is skipped unparsed, so that a reader
// of the aggregated metrics neither parses nor holds a million records.
struct MeasurementParts {
  bool chunk_records = true;  // chunks, rejected_chunks
  bool chunk_info = true;     // metrics.chunks.chunk_info (one entry per record)
  // False: each tracking.workers series is cut to its ends (store/worker_series_ends.h) as it
  // is parsed, one at a time: the worker steps are never all held.
  bool whole_worker_series = true;
  // With whole_worker_series false: called with each series whole, in order, before it is cut,
  // and the measurement read so far (its metadata, saved before the tracking, included).
  const std::function<void(const v1::WorkerSeries&, const v1::Measurement&)>* visit_whole_series =
      nullptr;
  // With chunk_records: the records parts' chunk records appended here, one at a time, instead
  // of to the measurement's chunks().
  ChunkTable* chunk_table = nullptr;
};

// Reads a file written by WriteMeasurementParts into `measurement`, with only the `parts` asked
// for. DataLoss naming `path` when a part is cut short or does not parse; the OS's errors
// otherwise.
absl::Status ReadMeasurementParts(const std::string& path, v1::Measurement* measurement,
                                  const MeasurementParts& parts = {});

// The one walk over the parts of the file at `path` (a regular file, never followed through a
// link), for every reader of them: calls `read_part` with each part's index and `coded` limited
// to that part's bytes. `read_part` returns false when the part does not parse, or sets `*stop`
// to end the reading with that status. DataLoss naming `path` and the part when a part has no
// length, would end past the end of the file, does not parse or is not read to its end; the
// OS's errors otherwise.
absl::Status ForEachPart(
    const std::string& path,
    absl::FunctionRef<bool(int part, google::protobuf::io::CodedInputStream& coded,
                           absl::Status* stop)>
        read_part);

// Merges the serialized Measurement `coded` holds (up to its limit or end) into `measurement`,
// with only the `parts` asked for. False when the bytes do not parse.
bool MergeMeasurementFrom(google::protobuf::io::CodedInputStream& coded,
                          const MeasurementParts& parts, v1::Measurement* measurement);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_SEGMENTED_MEASUREMENT_H_
