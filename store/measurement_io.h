// Saving and loading a measurement directory.
//
// Layout of <parent_dir>/<name>/:
//   FORMAT            one line: "roastcoffea-measurement 1\n" (the schema version)
//   measurement.pb    the v1::Measurement, protobuf binary (the authoritative copy)
//   measurement.json  the same message as protobuf JSON, pretty-printed, with the field names
//                     of schema/measurement.proto (for people and for tools without protobuf)
// or, for a measurement over 64 MiB in binary (store/segmented_measurement.h), instead of both:
//   measurement.pbs   the message in parts (no size ceiling; no JSON copy at that size)
//
// A save is atomic: the files are written into a hidden sibling directory whose name contains
// ".roastcoffea-partial-", fsync'd, and then renamed into place. A crash leaves at most such a
// partial directory, which LoadMeasurement refuses; it never leaves <name> half-written.
//
// Thread-safety: the functions share no state; concurrent saves of the same name are safe (one
// wins, the others get AlreadyExists). Cost: one serialization to binary and one to JSON (only
// the binary, part by part, over 64 MiB), each written into its file in 1 MiB blocks, never
// held whole, plus four fsyncs per save; a load reads and parses one file, skipping what
// LoadOptions leaves out.
#ifndef ROASTCOFFEA_STORE_MEASUREMENT_IO_H_
#define ROASTCOFFEA_STORE_MEASUREMENT_IO_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {

// The schema version written to FORMAT and to metadata.schema_version.
inline constexpr uint32_t kSchemaVersion = 1;

// The longest name: the hidden partial directory "." + name + ".roastcoffea-partial-XXXXXX"
// must fit NAME_MAX (255 bytes).
inline constexpr size_t kMaxMeasurementNameBytes = 227;

// OK when `name` can name a measurement directory: non-empty, at most kMaxMeasurementNameBytes,
// not starting with '.', without '/', NUL, C0/DEL or C1 control characters. Else InvalidArgument
// naming it (escaped). SaveMeasurement checks it; collect checks --name with it before a run.
absl::Status ValidateMeasurementName(absl::string_view name);

// Writes <parent_dir>/<name>/ as described above and returns its path. Creates parent_dir (and
// its parents) if missing. A measurement whose metadata.schema_version is 0 is saved with
// kSchemaVersion filled in. Text fields that are not UTF-8 (a Latin-1 path, a byte from an
// engine's log) are saved with each bad byte as U+FFFD and a warning "invalid_utf8" in the
// saved copy: libprotobuf would write them but never read them back. The directory gets the
// permissions the umask allows (as any file the user creates), its files 0666 & ~umask.
// Partial directories of saves killed more than an hour ago in parent_dir are removed.
// measurement.json is written in pieces of at most a few hundred KB (store/json_stream_writer.h):
// its memory does not grow with the measurement, which is never held as one JSON tree.
// Errors, each naming the path (and the OS error text when the OS refused):
//   InvalidArgument  `name` fails ValidateMeasurementName;
//                    metadata.schema_version is neither 0 nor kSchemaVersion.
//   AlreadyExists    <parent_dir>/<name> exists (it is never overwritten).
//   Internal / the OS error's code   a directory or file could not be created, written or
//                    synced (e.g. parent_dir lies under a regular file, or the disk is full).
absl::StatusOr<std::string> SaveMeasurement(const v1::Measurement& measurement,
                                            absl::string_view parent_dir, absl::string_view name);

// SaveMeasurement, but when <parent_dir>/<name> exists the next free <name>-2, <name>-3, ... (up
// to -1000) is used, and metadata.name follows it when it was `name`: for default names (the
// start time to the second), so that two runs started in the same second both keep their
// measurement.
absl::StatusOr<std::string> SaveMeasurementUnderFreeName(const v1::Measurement& measurement,
                                                         absl::string_view parent_dir,
                                                         absl::string_view name);

// The same, for a measurement whose chunk records are held apart in `chunks` (MeasuredRun,
// aggregation/measure.h): saved exactly as `measurement` with those records in its chunks() would
// be, byte for byte, in every form. The records are read from the table one at a time into one
// reused message, once per file written (their text is checked from the columns; a measurement
// saved as one .pb is sized by reading them once more, unless their text alone puts it over the
// 64 MiB that chooses the parts), never held as messages; the measurement is not copied (only its
// metadata, when the schema version or a free name is filled in, and the whole only when text in it
// must be repaired to UTF-8). InvalidArgument naming `name` when measurement.chunks() is not empty.
absl::StatusOr<std::string> SaveMeasurement(const v1::Measurement& measurement,
                                            const ChunkTable& chunks, absl::string_view parent_dir,
                                            absl::string_view name);
absl::StatusOr<std::string> SaveMeasurementUnderFreeName(const v1::Measurement& measurement,
                                                         const ChunkTable& chunks,
                                                         absl::string_view parent_dir,
                                                         absl::string_view name);

// Loads a directory written by SaveMeasurement: from measurement.pb, or from measurement.json
// when the .pb file is missing, or corrupt (then with a warning "measurement_pb_corrupt"). Unknown
// fields (from a newer v1 writer) are accepted. Only directories of ours: one of the original
// Python tool (metrics.json and start_end_time.txt, no FORMAT) is NotFound here;
// ingest/any_measurement.h reads both kinds. Errors, each naming the path:
//   NotFound            the directory, its FORMAT file, or both measurement files are missing.
//   DataLoss            FORMAT or a measurement file is corrupt, or the message's
//                       metadata.schema_version disagrees with FORMAT.
//   FailedPrecondition  FORMAT names a schema version other than kSchemaVersion, or the
//                       directory is an unfinished save (a ".roastcoffea-partial-" directory).
//   other               the OS refused to read (e.g. PermissionDenied).
struct LoadOptions {
  // False: the chunk records (chunks, rejected_chunks) are skipped unparsed, for readers that
  // need only the aggregated metrics (`collect show`): a 10^6-chunk measurement then costs
  // 0.4 s and 0.5 GB, not 1.3 s and 1.6 GB. Damage inside skipped fields (in a .pbs, whole records
  // parts, passed over with a seek) goes unnoticed; a file cut short does not.
  bool chunk_records = true;
  // False: metrics.chunks.chunk_info_columns and .chunk_info (the original's per-record list,
  // in either form; only the flat metrics and the report's plots read it) are skipped too.
  bool chunk_info = true;
  // False: each worker series of the tracking is cut to its ends while read
  // (store/worker_series_ends.h), for readers of how workers left with tasks and nothing else
  // of the series (`collect show`'s tables, the "Workers That Left" table included: exact on the
  // cut series, one read): a log-only TaskVine measurement of 10^6 tasks then peaks at 15 MiB,
  // not 342 MiB (the whole steps).
  bool whole_worker_series = true;
  // With whole_worker_series false, for a measurement saved in parts or as measurement.pb: called
  // with each worker series whole, in order, before it is cut, and the measurement read so far
  // (its metadata included: it is saved before the tracking). Not called for one read from
  // measurement.json. `collect report` surveys its worker charts' series with it.
  std::function<void(const v1::WorkerSeries&, const v1::Measurement&)> visit_whole_worker_series;
  // When set (and chunk_records true), the chunk records (chunks, not the rejected ones) are
  // appended to this table and the measurement's chunks() stay empty: a MeasuredRun's form
  // (aggregation/measure.h), which SaveMeasurement(measurement, table, ...) saves back byte for
  // byte. From measurement.pbs or .pb one record at a time, never held as messages (10^6
  // records: ~190 B each instead of ~1 KB); from measurement.json (the .pb missing or corrupt)
  // moved into the table after the load.
  ChunkTable* chunk_table = nullptr;
};
absl::StatusOr<v1::Measurement> LoadMeasurement(absl::string_view directory,
                                                const LoadOptions& options = {});

// Calls `visit` with each chunk record (Measurement.chunks, not the rejected ones) of the
// measurement in `directory`, in the saved order, for readers that must see every record but
// not hold them (`collect report` of a million chunks): a measurement saved in parts is read
// one record at a time (store/record_stream.h); a measurement.pb or .json (at most 64 MiB in
// binary) is loaded whole first. The record passed is valid only during the call. Errors as
// LoadMeasurement's; an error of `visit` stops the reading and is returned.
absl::Status ForEachChunkRecord(absl::string_view directory,
                                absl::FunctionRef<absl::Status(const v1::ChunkRecord&)> visit);

// The same with each record's serialized bytes (its ChunkRecord wire form), for readers that
// parse only the few fields they use (`collect report`: 10^6 records parsed whole were 0.4 s of
// its CPU): from a measurement saved in parts, in place in the read buffer when they lie in it;
// from a measurement.pb or .json, each record of the loaded message serialized. The bytes are
// valid only during the call; nothing in them is checked here. Errors as ForEachChunkRecord's.
absl::Status ForEachSerializedChunkRecord(absl::string_view directory,
                                          absl::FunctionRef<absl::Status(absl::string_view)> visit);

// Whether the measurement in `directory` is saved in parts (measurement.pbs: over 64 MiB in
// binary), the form whose readers should stream what they can (ForEachChunkRecord,
// ForEachWorkerSeries) rather than load it; false for anything else, a missing directory too.
bool SavedInParts(absl::string_view directory);

// Calls `visit` with each worker series of the measurement's tracking in `directory`, in the
// saved order, for readers that must see every sample but not hold them (`collect report`'s
// worker charts, export/report_worker_lines.h): a measurement saved in parts is read one series
// at a time, its records passed over; a measurement.pb or .json (at most 64 MiB in binary) is
// loaded whole (without its records) first. The series passed is valid only during the call.
// Errors as LoadMeasurement's; an error of `visit` stops the reading and is returned.
absl::Status ForEachWorkerSeries(absl::string_view directory,
                                 absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit);

// The same for a reader of a few columns (`collect report`'s lines): from a measurement saved in
// parts each series holds only its instants, its kind and the double columns numbered in
// `double_columns` (WorkerSeries field numbers), the rest skipped unparsed (at 10^6 TaskVine
// tasks, 4 of the 6 step columns); from a .pb or .json the series come whole.
absl::Status ForEachWorkerSeriesColumns(
    absl::string_view directory, const std::vector<int>& double_columns,
    absl::FunctionRef<absl::Status(const v1::WorkerSeries&)> visit);

// A directory name for a run started at `start`: "2026-11-22T08-15-03Z" (UTC, second
// resolution, no ':' so it is safe on every filesystem; sorts by time for years 0-9999).
// The infinite past and future give "infinite-past" and "infinite-future".
std::string MeasurementDirectoryName(absl::Time start);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_MEASUREMENT_IO_H_
