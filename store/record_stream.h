// Streaming the chunk records (or the worker series) of a measurement saved in parts
// (measurement.pbs, store/segmented_measurement.h): one record parsed at a time into one reused
// message, the file read in buffered pieces, so that a reader of a million records (the HTML
// report) holds neither the records nor the file.
//
// Thread-safety: no shared state. Cost: one pass over the file; the parts' other fields are
// skipped unparsed.
#ifndef ROASTCOFFEA_STORE_RECORD_STREAM_H_
#define ROASTCOFFEA_STORE_RECORD_STREAM_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {

// Calls `visit` with each record of Measurement.chunks in `path` (not the rejected ones), in
// the saved order. The record passed is valid only during the call. DataLoss naming `path` and
// the part when a part is cut short or does not parse; the OS's errors otherwise; an error of
// `visit` stops the reading and is returned.
absl::Status ForEachChunkRecordInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit);

// The same with each record's serialized bytes (a ChunkRecord's wire form), for readers of a few
// of its fields that parse only those (`collect report` of a million records): a record that
// lies whole in the read buffer is passed in place, another is copied into one reused buffer.
// The bytes are valid only during the call. Errors as ForEachChunkRecordInParts'; the records'
// contents are not checked here.
absl::Status ForEachSerializedChunkRecordInParts(
    const std::string& path, absl::FunctionRef<absl::Status(absl::string_view)> visit);

// Calls `visit` with each worker series of Measurement.tracking in `path`, in the saved order,
// one parsed at a time into one reused message (a reader of 10^4 workers x 360 samples, the
// HTML report, never holds them all). Parts of records are passed over with a seek. Errors as
// ForEachChunkRecordInParts'.
absl::Status ForEachWorkerSeriesInParts(
    const std::string& path, absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit);

// The same with each series holding only its instants, its kind and the double columns numbered
// in `double_columns` (WorkerSeries field numbers of repeated doubles; others are ignored);
// everything else is skipped unparsed.
absl::Status ForEachWorkerSeriesColumnsInParts(
    const std::string& path, const std::vector<int>& double_columns,
    absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_RECORD_STREAM_H_
