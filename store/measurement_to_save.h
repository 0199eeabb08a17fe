// A measurement as a save writes it, in pieces (internal to //store): the message, and what is
// held apart from it: its chunk records in a ChunkTable (MeasuredRun, aggregation/measure.h), an
// edited copy of its metadata (the schema version filled in, a free name), a warning appended.
// The writers (measurement.pb here, measurement.pbs in segmented_measurement.h, measurement.json
// in measurement_io.cc) put each piece in its field's place, so that the bytes are those of the
// one message holding them all, and nothing is copied but the metadata: a table's records are
// materialized one at a time into one reused message.
//
// Thread-safety: none (TableRecords reuses one message). Cost: TableRecords::Survey reads every
// record once, each writer once more.
#ifndef ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_
#define ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "io/atomic_write.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {

// The records of a ChunkTable as the chunks (field 4) of the measurement saved, read one at a
// time, with each string that is not UTF-8 repaired as RepairStringsUtf8 repairs the records of
// a whole measurement (store/utf8_repair.h).
class TableRecords {
 public:
  explicit TableRecords(const ChunkTable& table) : table_(table) {}
  TableRecords(const TableRecords&) = delete;
  TableRecords& operator=(const TableRecords&) = delete;

  size_t size() const { return table_.size(); }

  // Reads every record once: their wire bytes in all and per part of `records_per_part`
  // records, and their strings that need a repair. Call before the getters below and Read.
  void Survey(int records_per_part);
  // The bytes of all the records as fields `chunks` of a Measurement.
  uint64_t bytes() const { return bytes_; }
  // The same, for the records [p * records_per_part, (p + 1) * records_per_part).
  const std::vector<uint64_t>& part_bytes() const { return part_bytes_; }
  // Strings repaired, and the path of the first ("chunks[3].worker"), or 0 and "".
  int repaired() const { return repaired_; }
  const std::string& first_repaired_path() const { return first_repaired_path_; }

  // Record `i`, repaired, its size cached (ByteSizeLong called): valid until the next call.
  const v1::ChunkRecord& Read(size_t i);

 private:
  const ChunkTable& table_;
  v1::ChunkRecord record_;
  uint64_t bytes_ = 0;
  std::vector<uint64_t> part_bytes_;
  int repaired_ = 0;
  std::string first_repaired_path_;
};

// The pieces of the measurement saved. `measurement` is the rest: everything the others do not
// replace or extend.
struct MeasurementToSave {
  const v1::Measurement* measurement = nullptr;
  // Saved instead of measurement->metadata(), when set.
  const v1::MeasurementMetadata* metadata = nullptr;
  // Saved after measurement->warnings(), when set.
  const v1::Warning* appended_warning = nullptr;
  // Saved as the chunk records, when set: measurement->chunks() must then be empty. Surveyed
  // (TableRecords::Survey with kChunksPerPart).
  TableRecords* chunks = nullptr;

  const v1::MeasurementMetadata& Metadata() const {
    return metadata != nullptr ? *metadata : measurement->metadata();
  }
  bool has_metadata() const { return metadata != nullptr || measurement->has_metadata(); }
  // Whether the pieces are the message alone (nothing held apart).
  bool whole() const {
    return metadata == nullptr && appended_warning == nullptr && chunks == nullptr;
  }

  // The wire bytes of the one message holding every piece (its ByteSizeLong), caching the sizes
  // of the pieces' messages for the writers.
  uint64_t ByteSize() const;
};

// The bytes a CodedOutputStream writes, appended to an AtomicFileWriter: a message is serialized
// straight into the file, never first into a string of its own.
class AtomicFileOutput : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit AtomicFileOutput(AtomicFileWriter& out) : out_(out) {}
  bool Write(const void* buffer, int size) override;
  const absl::Status& status() const { return status_; }

 private:
  AtomicFileWriter& out_;
  absl::Status status_;
};

// measurement.pb: appends to `out` exactly the bytes SerializeToString gives for the one message
// holding every piece of `to_save` (fields in number order, the table's records in chunks' place,
// unknown fields last). ByteSize() must have been called since the pieces last changed (the
// caller checks the 2 GiB that libprotobuf reads with it). InvalidArgument when the measurement
// has chunk records of its own and a table; the writer's errors otherwise.
absl::Status WriteMeasurementBinary(const MeasurementToSave& to_save, AtomicFileWriter& out);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_
