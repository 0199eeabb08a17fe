// ChunkTable::WriteRecordWireBytes: a record's bytes written from the columns are those of the
// materialized record serialized, for records of every shape the writer treats apart.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using google::protobuf::FieldDescriptor;

// Each record of `table`: its wire bytes are Record(i)'s serialized, within the bound.
void ExpectWireBytesOfEveryRecord(const ChunkTable& table) {
  for (size_t i = 0; i < table.size(); ++i) {
    std::string wire = "prefix";  // appended after what is there
    table.AppendRecordWireBytes(i, &wire);
    const std::string expected = table.Record(i).SerializeAsString();
    ASSERT_EQ(absl::string_view(wire).substr(6), expected) << "record " << i;
    EXPECT_LE(expected.size(), table.RecordWireBytesBound(i)) << "record " << i;
  }
}

int64_t RandomInt(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return 0;
    case 1:
      return std::numeric_limits<int64_t>::min();
    case 2:
      return -static_cast<int64_t>(rng() % 300);
    case 3:
      return static_cast<int64_t>(rng() % 200);
    default:
      return static_cast<int64_t>(rng());
  }
}

double RandomDouble(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;  // set: only +0.0 is the default
    case 2:
      return std::numeric_limits<double>::quiet_NaN();
    default:
      return static_cast<double>(rng() % 100000) / 7;
  }
}

std::string RandomText(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return "";
    case 1:
      return absl::StrCat("shared-", rng() % 3);
    case 2:
      return std::string(100 + rng() % 20000, 'x');  // a record over 16 KiB: a 3-byte length
    default:
      return absl::StrCat("\xC3\xA9-", rng());
  }
}

// A record with each field set or not, the column fields and those of the remainder, sections
// in the columns or (one with allocated_bytes) whole in the remainder, unknown fields, and
// enum values proto3 keeps unknown (negative ones take 10 bytes).
v1::ChunkRecord RandomRecord(std::mt19937_64& rng) {
  v1::ChunkRecord r;
  const google::protobuf::Reflection* reflection = r.GetReflection();
  const google::protobuf::Descriptor* descriptor = r.GetDescriptor();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const FieldDescriptor* field = descriptor->field(f);
    if (rng() % 2 == 0 || field->is_repeated() || field->message_type() != nullptr) continue;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT64:
        reflection->SetInt64(&r, field, RandomInt(rng));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        reflection->SetUInt32(&r, field, static_cast<uint32_t>(rng() % 3 == 0 ? 0 : rng()));
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        reflection->SetDouble(&r, field, RandomDouble(rng));
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        reflection->SetEnumValue(&r, field, static_cast<int>(rng() % 5) - 1);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        reflection->SetString(&r, field, RandomText(rng));
        break;
      default:
        ADD_FAILURE() << "a field of a type the test does not set: " << field->name();
    }
  }
  const int sections = static_cast<int>(rng() % 4);
  for (int s = 0; s < sections; ++s) {
    v1::SectionRecord& section = *r.add_sections();
    if (rng() % 4 != 0) section.set_name(RandomText(rng));
    section.set_kind(static_cast<v1::SectionRecord::Kind>(static_cast<int>(rng() % 6) - 1));
    section.set_entries(static_cast<uint32_t>(rng() % 3));
    section.set_duration_seconds(RandomDouble(rng));
    section.set_cpu_seconds(RandomDouble(rng));
    section.set_memory_delta_bytes(RandomInt(rng));
    section.set_bytes_read(RandomInt(rng));
    if (rng() % 8 == 0) section.set_allocated_bytes(RandomInt(rng));  // beyond the columns
  }
  if (rng() % 3 == 0) {
    for (int b = static_cast<int>(rng() % 4); b > 0; --b) r.add_accessed_branches(RandomText(rng));
  }
  if (rng() % 3 == 0) {
    r.mutable_file_metadata()->set_file(RandomText(rng));
    r.mutable_file_metadata()->set_compression_ratio(RandomDouble(rng));
  }
  if (rng() % 4 == 0) {
    v1::SectionSlice& slice = *r.add_slices();
    slice.set_name(RandomText(rng));
    slice.set_duration_ns(RandomInt(rng));
  }
  if (rng() % 4 == 0) r.add_retried_task_ids(RandomText(rng));
  if (rng() % 10 == 0) {
    reflection->MutableUnknownFields(&r)->AddVarint(1000 + static_cast<int>(rng() % 50), rng());
  }
  if (rng() % 10 == 0) {  // unknown inside a message the remainder holds: spliced as it is
    r.mutable_file_metadata()
        ->GetReflection()
        ->MutableUnknownFields(r.mutable_file_metadata())
        ->AddLengthDelimited(77, "newer");
  }
  return r;
}

TEST(ChunkRecordWireTest, RandomRecordsAreTheirSerializedBytes) {
  for (const uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    ChunkTable table;
    for (int i = 0; i < 3000; ++i) table.Append(RandomRecord(rng));
    ExpectWireBytesOfEveryRecord(table);
  }
}

TEST(ChunkRecordWireTest, RandomRecordsWithUuidsPerRecord) {
  std::mt19937_64 rng(4);
  ChunkTable table;
  for (size_t i = 0; i < ChunkTable::kAdaptiveCheckRecords + 500; ++i) {
    v1::ChunkRecord record = RandomRecord(rng);
    record.set_uuid(absl::StrCat("task-", i));
    table.Append(record);
  }
  ASSERT_FALSE(table.UuidsInterned());
  ExpectWireBytesOfEveryRecord(table);
}

TEST(ChunkRecordWireTest, EmptyAndTinyRecords) {
  ChunkTable table;
  table.Append(v1::ChunkRecord());
  v1::ChunkRecord tiny;
  tiny.set_events(1);
  table.Append(tiny);
  v1::ChunkRecord optional_zero;
  optional_zero.set_allocated_bytes(0);  // present although zero: written
  optional_zero.set_machine_load(0);
  table.Append(optional_zero);
  ExpectWireBytesOfEveryRecord(table);
  std::string wire;
  table.AppendRecordWireBytes(0, &wire);
  EXPECT_TRUE(wire.empty());
}

TEST(ChunkRecordWireTest, ChangesInPlaceAreWritten) {
  std::mt19937_64 rng(5);
  ChunkTable table;
  for (int i = 0; i < 200; ++i) table.Append(RandomRecord(rng));
  for (size_t i = 0; i < table.size(); i += 3) {
    table.SetInt(chunk_field::kReadyUnixNs, i, -5);
    table.SetDouble(chunk_field::kMachineCpus, i, 0.0);
    table.SetStatus(i, 2);
    table.SetInternedString(chunk_field::kWorker, i, "joined-worker");
  }
  ExpectWireBytesOfEveryRecord(table);
}

// The remainder's strings, from its bytes: every one is handed to the check, and a failing
// check fails the record.
TEST(ChunkRecordWireTest, RestStringsAllSeesEveryStringOfTheRemainder) {
  v1::ChunkRecord r;
  r.set_file("columns only, not seen");
  r.add_accessed_branches("Jet_pt");
  r.add_accessed_branches("nJet");
  r.mutable_file_metadata()->set_file("f.root");
  r.mutable_file_metadata()->set_total_branches(1200);
  r.add_slices()->set_name("slice");
  r.add_retried_task_ids("7");
  v1::SectionRecord& section = *r.add_sections();
  section.set_name("jets");
  section.set_allocated_bytes(5);  // the sections go to the remainder
  ChunkTable table;
  table.Append(r);
  table.Append(v1::ChunkRecord());
  std::vector<std::string> seen;
  EXPECT_TRUE(table.RestStringsAll(0, [&](absl::string_view text) {
    seen.emplace_back(text);
    return true;
  }));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"7", "Jet_pt", "f.root", "jets", "nJet", "slice"}));
  EXPECT_FALSE(table.RestStringsAll(0, [](absl::string_view text) { return text != "slice"; }));
  EXPECT_TRUE(table.RestStringsAll(1, [](absl::string_view) { return false; }));  // none
}

// What the writer and RestStringsAll assume of the schema: a field added to it fails here
// (then chunk_record_wire.cc learns it) rather than being written out of place.
TEST(ChunkRecordWireTest, SchemaIsTheOneTheWriterKnows) {
  const google::protobuf::Descriptor* record = v1::ChunkRecord::descriptor();
  EXPECT_EQ(record->field_count(), 38);
  for (int number = 1; number <= 38; ++number) {
    EXPECT_NE(record->FindFieldByNumber(number), nullptr) << number;
  }
  // The messages a remainder holds have one string, field 1.
  for (const google::protobuf::Descriptor* message :
       {v1::FileMetadata::descriptor(), v1::SectionSlice::descriptor(),
        v1::SectionRecord::descriptor()}) {
    for (int f = 0; f < message->field_count(); ++f) {
      const FieldDescriptor* field = message->field(f);
      EXPECT_EQ(field->cpp_type() == FieldDescriptor::CPPTYPE_STRING, field->number() == 1)
          << field->full_name();
      EXPECT_NE(field->cpp_type(), FieldDescriptor::CPPTYPE_MESSAGE) << field->full_name();
    }
  }
}

}  // namespace
}  // namespace roastcoffea
