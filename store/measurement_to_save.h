// A measurement as a save writes it, in pieces (internal to //store): the message, and what is
// held apart from it: its chunk records in a ChunkTable (MeasuredRun, aggregation/measure.h), an
// edited copy of its metadata (the schema version filled in, a free name), a warning appended.
// The writers (measurement.pb here, measurement.pbs in segmented_measurement.h, measurement.json
// in measurement_io.cc) put each piece in its field's place, so that the bytes are those of the
// one message holding them all, and nothing is copied but the metadata: a table's records are
// written as wire bytes from its columns (ChunkTable::WriteRecordWireBytes), or, when some of
// their text must be repaired, materialized one at a time into one reused message (as is every
// record for measurement.json).
//
// Thread-safety: none (TableRecords reuses one message). Cost: each binary writer writes every
// record's bytes once, without a message; TableRecords::Survey reads only the columns' text and
// the remainders' bytes (a record is materialized there only when its remainder cannot be read
// that way or it has text to repair), and BytesOver writes records only when the columns' text
// does not already bound their bytes above the limit.
#ifndef ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_
#define ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "io/atomic_write.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace store_internal {

// Bytes written at a pointer, appended: grown by doubling, never zero-filled per write.
class WireBuffer {
 public:
  // Room for `bytes` more at the returned pointer; Commit(end) keeps what was written up to end.
  uint8_t* Reserve(size_t bytes) {
    if (bytes_.size() < used_ + bytes) bytes_.resize(std::max(2 * bytes_.size(), used_ + bytes));
    return reinterpret_cast<uint8_t*>(&bytes_[used_]);
  }
  void Commit(const uint8_t* end) { used_ = end - reinterpret_cast<const uint8_t*>(bytes_.data()); }
  absl::string_view view() const { return absl::string_view(bytes_.data(), used_); }
  size_t size() const { return used_; }
  void clear() { used_ = 0; }  // the capacity stays

 private:
  std::string bytes_;
  size_t used_ = 0;
};

// The records of a ChunkTable as the chunks (field 4) of the measurement saved, read one at a
// time, with each string that is not UTF-8 repaired as RepairStringsUtf8 repairs the records of
// a whole measurement (store/utf8_repair.h).
class TableRecords {
 public:
  explicit TableRecords(const ChunkTable& table) : table_(table) {}
  TableRecords(const TableRecords&) = delete;
  TableRecords& operator=(const TableRecords&) = delete;

  size_t size() const { return table_.size(); }

  // Checks every record's text for UTF-8 from the columns (a record is materialized only when
  // it has fields outside them, or text to repair: then repaired as RepairStringsUtf8 counts),
  // and bounds the records' bytes from below. Call before the getters below, BytesOver and Read.
  void Survey();
  // Whether the bytes of all the records as fields `chunks` of a Measurement exceed `limit`:
  // from Survey's bound when that does, else summed from the records read (ByteSizeLong) until
  // the sum does. The segmented writer sizes each part from the bytes it serializes.
  bool BytesOver(uint64_t limit);
  // Strings repaired, and the path of the first ("chunks[3].worker"), or 0 and "".
  int repaired() const { return repaired_; }
  const std::string& first_repaired_path() const { return first_repaired_path_; }

  // Record `i`, repaired, its size cached (ByteSizeLong called): valid until the next call.
  const v1::ChunkRecord& Read(size_t i);
  // Record `i` as field `chunks` of the measurement (tag, length, bytes) appended to `out`: the
  // bytes WireFormatLite::WriteMessage writes for Read(i), from the table's columns without a
  // message (ChunkTable::WriteRecordWireBytes) when Survey found no text to repair. Returns the
  // record's own bytes (without tag and length).
  size_t AppendChunkField(size_t i, WireBuffer* out);

 private:
  const ChunkTable& table_;
  v1::ChunkRecord record_;
  // No record holds fewer bytes than this bound (their column text, tags and lengths).
  uint64_t bytes_at_least_ = 0;
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
  // (TableRecords::Survey).
  TableRecords* chunks = nullptr;

  const v1::MeasurementMetadata& Metadata() const {
    return metadata != nullptr ? *metadata : measurement->metadata();
  }
  bool has_metadata() const { return metadata != nullptr || measurement->has_metadata(); }
  // Whether the pieces are the message alone (nothing held apart).
  bool whole() const {
    return metadata == nullptr && appended_warning == nullptr && chunks == nullptr;
  }

  // Whether the wire bytes of the one message holding every piece (its ByteSizeLong) exceed
  // `limit`, caching the sizes of the pieces' messages for the writers (a table's records are
  // sized as they are written).
  bool BytesOver(uint64_t limit) const;
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
// unknown fields last). BytesOver must have been called since the pieces last changed (the
// caller checks with it that the message is under the 2 GiB libprotobuf reads). InvalidArgument
// when the measurement has chunk records of its own and a table; the writer's errors otherwise.
absl::Status WriteMeasurementBinary(const MeasurementToSave& to_save, AtomicFileWriter& out);

}  // namespace store_internal
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_MEASUREMENT_TO_SAVE_H_
