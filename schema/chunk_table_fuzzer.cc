// Fuzzes ChunkTable's lossless contract: any input that parses as a v1::ChunkRecord, appended
// (twice, around an empty record, so that columns start both empty and filled) and
// materialized, serializes to the same bytes as the parsed record; also when appended again after
// enough records with distinct uuids that the uuid column moves to per-record strings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckSame(const roastcoffea::v1::ChunkRecord& expected,
               const roastcoffea::v1::ChunkRecord& actual) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  Check(differencer.Compare(expected, actual));
  Check(expected.SerializeAsString() == actual.SerializeAsString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  roastcoffea::v1::ChunkRecord record;
  if (!record.ParseFromArray(data, static_cast<int>(size))) return 0;
  roastcoffea::ChunkTable table;
  table.Append(record);
  table.Append(roastcoffea::v1::ChunkRecord());
  table.Append(record);
  Check(table.size() == 3);
  CheckSame(record, table.Record(0));
  CheckSame(roastcoffea::v1::ChunkRecord(), table.Record(1));
  CheckSame(record, table.Record(2));
  // Its wire bytes from the columns, within their bound (schema/chunk_record_wire.cc).
  std::string wire;
  table.AppendRecordWireBytes(2, &wire);
  Check(wire == record.SerializeAsString() && wire.size() <= table.RecordWireBytesBound(2));
  // Past the uuid column's decision with every uuid distinct (it moves to per-record strings),
  // for one input in 64 by its hash (the appends are most of an input's time).
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (std::hash<std::string_view>()(input) % 64 != 0) return 0;
  roastcoffea::ChunkRow filler;
  std::string uuid;
  for (size_t i = table.size(); i < roastcoffea::ChunkTable::kAdaptiveCheckRecords; ++i) {
    uuid = std::to_string(i);
    filler.strings[roastcoffea::chunk_field::kUuid] = uuid;
    table.Append(filler);
  }
  table.Append(record);
  CheckSame(record, table.Record(0));
  CheckSame(record, table.Record(table.size() - 1));
  return 0;
}
