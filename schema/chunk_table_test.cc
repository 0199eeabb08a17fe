#include "schema/chunk_table.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Equal as messages (NaN equal to NaN) and to the byte once serialized.
void ExpectSame(const v1::ChunkRecord& expected, const v1::ChunkRecord& actual) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  std::string difference;
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(expected, actual)) << difference;
  EXPECT_EQ(expected.SerializeAsString(), actual.SerializeAsString());
}

void ExpectRoundTrip(const std::vector<v1::ChunkRecord>& records) {
  ChunkTable table;
  for (const v1::ChunkRecord& record : records) table.Append(record);
  ASSERT_EQ(table.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("record ", i));
    ExpectSame(records[i], table.Record(i));
  }
  size_t visited = 0;
  table.ForEachRecord([&](const v1::ChunkRecord& record) {
    ExpectSame(records[visited], record);
    ++visited;
  });
  EXPECT_EQ(visited, records.size());
  // Appended after a record already there, which stays as it was.
  v1::Measurement measurement;
  measurement.add_chunks()->set_task_id("already-there");
  table.AppendRecordsTo(measurement.mutable_chunks());
  ASSERT_EQ(measurement.chunks_size(), static_cast<int>(records.size()) + 1);
  EXPECT_EQ(measurement.chunks(0).task_id(), "already-there");
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("appended record ", i));
    ExpectSame(records[i], measurement.chunks(static_cast<int>(i) + 1));
  }
}

// Strings that are valid UTF-8 (proto3 refuses others) but awkward: NUL, multibyte, long.
std::string EdgeString(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "";
    case 1:
      return std::string("a\0b", 3);
    case 2:
      return "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // é € 😀
    case 3:
      return std::string(100 + rng() % 300, 'x');
    case 4:
      return absl::StrCat("file_", rng() % 4);  // shared by many records
    default:
      return absl::StrCat("t", rng());
  }
}

int64_t EdgeInt(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return std::numeric_limits<int64_t>::min();
    case 1:
      return std::numeric_limits<int64_t>::max();
    case 2:
      return 0;
    case 3:
      return -static_cast<int64_t>(rng() % 1000);
    default:
      return static_cast<int64_t>(rng());
  }
}

double EdgeDouble(std::mt19937_64& rng) {
  switch (rng() % 7) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return std::numeric_limits<double>::infinity();
    case 2:
      return -std::numeric_limits<double>::infinity();
    case 3:
      return -0.0;
    case 4:
      return std::numeric_limits<double>::denorm_min();
    case 5:
      return 0.0;
    default:
      return std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 80) - 40);
  }
}

// Sets each field of `message` with probability `p` (every field when p >= 1) to an edge value,
// messages recursively, repeated fields with 0-3 elements, and adds unknown fields sometimes.
// Driven by the descriptor: a field added to the schema is filled too.
void Fill(Message* message, double p, std::mt19937_64& rng, int depth = 0) {
  const Reflection* reflection = message->GetReflection();
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  std::uniform_real_distribution<double> coin(0, 1);
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (p < 1 && coin(rng) >= p) continue;
    const int count = field->is_repeated() ? static_cast<int>(1 + rng() % 3) : 1;
    for (int n = 0; n < count; ++n) {
      const bool repeated = field->is_repeated();
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT64:
          repeated ? reflection->AddInt64(message, field, EdgeInt(rng))
                   : reflection->SetInt64(message, field, EdgeInt(rng));
          break;
        case FieldDescriptor::CPPTYPE_INT32:
          repeated ? reflection->AddInt32(message, field, static_cast<int32_t>(rng()))
                   : reflection->SetInt32(message, field, static_cast<int32_t>(rng()));
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          repeated ? reflection->AddUInt32(message, field, static_cast<uint32_t>(rng()))
                   : reflection->SetUInt32(message, field, static_cast<uint32_t>(rng()));
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          repeated ? reflection->AddUInt64(message, field, rng())
                   : reflection->SetUInt64(message, field, rng());
          break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
          repeated ? reflection->AddDouble(message, field, EdgeDouble(rng))
                   : reflection->SetDouble(message, field, EdgeDouble(rng));
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          repeated ? reflection->AddFloat(message, field, static_cast<float>(EdgeDouble(rng)))
                   : reflection->SetFloat(message, field, static_cast<float>(EdgeDouble(rng)));
          break;
        case FieldDescriptor::CPPTYPE_BOOL:
          repeated ? reflection->AddBool(message, field, rng() % 2)
                   : reflection->SetBool(message, field, rng() % 2);
          break;
        case FieldDescriptor::CPPTYPE_ENUM: {
          // Known values and unknown ones (proto3 keeps them).
          const int value =
              rng() % 4 == 0 ? 7 + static_cast<int>(rng() % 100) : static_cast<int>(rng() % 3);
          repeated ? reflection->AddEnumValue(message, field, value)
                   : reflection->SetEnumValue(message, field, value);
          break;
        }
        case FieldDescriptor::CPPTYPE_STRING:
          repeated ? reflection->AddString(message, field, EdgeString(rng))
                   : reflection->SetString(message, field, EdgeString(rng));
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
          if (depth < 3) {
            Fill(repeated ? reflection->AddMessage(message, field)
                          : reflection->MutableMessage(message, field),
                 p, rng, depth + 1);
          }
          break;
      }
    }
  }
  if (rng() % 8 == 0) {
    reflection->MutableUnknownFields(message)->AddVarint(1000 + static_cast<int>(rng() % 50),
                                                         rng());
    reflection->MutableUnknownFields(message)->AddLengthDelimited(2000, "unknown");
  }
}

TEST(ChunkTableTest, NoneSet) { ExpectRoundTrip({v1::ChunkRecord(), v1::ChunkRecord()}); }

TEST(ChunkTableTest, EveryFieldSet) {
  std::mt19937_64 rng(1);
  std::vector<v1::ChunkRecord> records(50);
  for (v1::ChunkRecord& record : records) Fill(&record, 1.0, rng);
  // Every field of the schema is set in some of them (so a field added later is covered; an
  // edge value of 0 or "" leaves a proto3 field unset in one record).
  std::set<int> set_fields;
  for (const v1::ChunkRecord& record : records) {
    std::vector<const FieldDescriptor*> fields;
    record.GetReflection()->ListFields(record, &fields);
    for (const FieldDescriptor* field : fields) set_fields.insert(field->number());
  }
  EXPECT_EQ(static_cast<int>(set_fields.size()), v1::ChunkRecord::descriptor()->field_count());
  ExpectRoundTrip(records);
}

TEST(ChunkTableTest, ChunkTableOfAndRecordsOfKeepTheRecordsInOrder) {
  std::mt19937_64 rng(11);
  std::vector<v1::ChunkRecord> records(20);
  for (v1::ChunkRecord& record : records) Fill(&record, 0.5, rng);
  const ChunkTable table = ChunkTableOf(records);
  ASSERT_EQ(table.size(), records.size());
  const std::vector<v1::ChunkRecord> back = RecordsOf(table);
  ASSERT_EQ(back.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(back[i].SerializeAsString(), records[i].SerializeAsString()) << i;
  }
  const std::vector<v1::ChunkRecord> tail = RecordsOf(table, 15);
  ASSERT_EQ(tail.size(), 5u);
  EXPECT_EQ(tail[0].SerializeAsString(), records[15].SerializeAsString());
  EXPECT_TRUE(RecordsOf(table, 20).empty());
  EXPECT_TRUE(RecordsOf(table, 99).empty());
  EXPECT_EQ(ChunkTableOf({records[3], records[4]}).Record(1).SerializeAsString(),
            records[4].SerializeAsString());
}

TEST(ChunkTableTest, NonFiniteDoublesAndExtremeInts) {
  std::vector<v1::ChunkRecord> records(4);
  records[0].set_duration_seconds(std::numeric_limits<double>::quiet_NaN());
  records[0].set_cpu_seconds(std::numeric_limits<double>::infinity());
  records[0].set_machine_load(-std::numeric_limits<double>::infinity());
  records[1].set_duration_seconds(-0.0);  // not 0: its bits differ
  records[1].set_start_unix_ns(std::numeric_limits<int64_t>::min());
  records[1].set_end_unix_ns(std::numeric_limits<int64_t>::max());
  records[1].set_attempt(std::numeric_limits<uint32_t>::max());
  records[2].set_status(static_cast<v1::ChunkStatus>(12345));  // unknown, kept
  v1::SectionRecord* section = records[2].add_sections();
  section->set_duration_seconds(std::numeric_limits<double>::quiet_NaN());
  section->set_memory_delta_bytes(std::numeric_limits<int64_t>::min());
  section->set_entries(std::numeric_limits<uint32_t>::max());
  ExpectRoundTrip(records);
  ChunkTable table;
  for (const v1::ChunkRecord& record : records) table.Append(record);
  EXPECT_TRUE(std::signbit(table.duration_seconds(1)));
  EXPECT_EQ(table.status(2), 12345);
}

TEST(ChunkTableTest, EmptyOptionalIsNotAbsent) {
  std::vector<v1::ChunkRecord> records(3);
  records[0].set_allocated_bytes(0);
  records[0].set_run_queue_wait_seconds(0);
  records[1].set_ready_unix_ns(5);
  records[2].set_machine_cpus(0);
  ExpectRoundTrip(records);
  ChunkTable table;
  for (const v1::ChunkRecord& record : records) table.Append(record);
  EXPECT_TRUE(table.HasOptional(chunk_field::kAllocatedBytes, 0));
  EXPECT_TRUE(table.HasOptional(chunk_field::kRunQueueWaitSeconds, 0));
  EXPECT_FALSE(table.HasOptional(chunk_field::kMachineCpus, 0));
  EXPECT_FALSE(table.HasOptional(chunk_field::kAllocatedBytes, 1));
  EXPECT_TRUE(table.HasOptional(chunk_field::kMachineCpus, 2));
  // Empty sub-message and empty repeated field: present vs absent stays.
  v1::ChunkRecord with_metadata;
  with_metadata.mutable_file_metadata();
  ExpectRoundTrip({with_metadata, v1::ChunkRecord()});
}

TEST(ChunkTableTest, EdgeStrings) {
  v1::ChunkRecord record;
  record.set_file(std::string("a\0b", 3));
  record.set_dataset("\xC3\xA9\xE2\x82\xAC");
  record.set_task_id(std::string(100000, 't'));
  record.set_error_text(std::string("\0", 1));
  record.add_sections()->set_name(std::string("\0x", 2));
  v1::ChunkRecord shared = record;
  shared.set_task_id("");
  ExpectRoundTrip({record, shared, v1::ChunkRecord(), record});
}

TEST(ChunkTableTest, ManySections) {
  v1::ChunkRecord record;
  for (int i = 0; i < 100000; ++i) {
    v1::SectionRecord* section = record.add_sections();
    section->set_name(absl::StrCat("s", i % 1000));
    section->set_kind(v1::SectionRecord::KIND_TIME);
    section->set_entries(static_cast<uint32_t>(i));
    section->set_duration_seconds(i * 0.25);
  }
  v1::ChunkRecord other;
  other.add_sections()->set_name("one");
  ExpectRoundTrip({record, v1::ChunkRecord(), other});
  ChunkTable table;
  table.Append(record);
  table.Append(other);
  EXPECT_EQ(table.SectionsEnd(0), 100000u);
  EXPECT_EQ(table.Section(table.SectionsBegin(1)).name, "one");
  EXPECT_FALSE(table.HasRest(0));
}

TEST(ChunkTableTest, SectionsBeyondTheColumnsStayWhole) {
  v1::ChunkRecord record;
  record.add_sections()->set_name("plain");
  v1::SectionRecord* counted = record.add_sections();
  counted->set_name("counted");
  counted->set_allocated_bytes(0);
  record.add_sections()->set_name("after");
  ChunkTable table;
  table.Append(record);
  EXPECT_TRUE(table.HasRest(0));
  EXPECT_EQ(table.SectionsEnd(0), 0u);
  ExpectRoundTrip({record});
}

TEST(ChunkTableTest, RandomizedRecords) {
  std::mt19937_64 rng(25);
  std::vector<v1::ChunkRecord> records(3000);
  for (v1::ChunkRecord& record : records) Fill(&record, rng() % 2 ? 0.1 : 0.6, rng);
  ExpectRoundTrip(records);
}

TEST(ChunkTableTest, FilteredKeepsTheChosenRecordsWholeAndInOrder) {
  std::mt19937_64 rng(11);
  std::vector<v1::ChunkRecord> records(500);
  for (v1::ChunkRecord& record : records) Fill(&record, rng() % 2 ? 0.1 : 0.6, rng);
  const ChunkTable table = ChunkTableOf(records);
  const auto keep = [](size_t i) { return i % 3 != 1; };
  const ChunkTable kept = table.Filtered(keep);
  std::vector<v1::ChunkRecord> expected;
  for (size_t i = 0; i < records.size(); ++i) {
    if (keep(i)) expected.push_back(records[i]);
  }
  ASSERT_EQ(kept.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("kept record ", i));
    ExpectSame(expected[i], kept.Record(i));
  }
  // The table filtered is unchanged; keeping none or all.
  ASSERT_EQ(table.size(), records.size());
  ExpectSame(records[1], table.Record(1));
  EXPECT_TRUE(table.Filtered([](size_t) { return false; }).empty());
  const ChunkTable all = table.Filtered([](size_t) { return true; });
  ASSERT_EQ(all.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) ExpectSame(records[i], all.Record(i));
}

// SectionsInRest says, without parsing, whether a record's sections are in its remainder: only
// when one section has fields beyond the columns, not for other remainder fields.
TEST(ChunkTableTest, SectionsInRestOnlyWhereASectionNeedsIt) {
  v1::ChunkRecord plain;
  plain.set_file("f.root");
  v1::SectionRecord* section = plain.add_sections();
  section->set_name("jets");
  section->set_kind(v1::SectionRecord::KIND_TIME);
  section->set_duration_seconds(0.2);
  v1::ChunkRecord branches = plain;  // a remainder, sections still in the columns
  branches.add_accessed_branches("Jet_pt");
  v1::ChunkRecord allocated = plain;  // a section with a field beyond the columns
  allocated.mutable_sections(0)->set_allocated_bytes(4096);
  v1::ChunkRecord none;  // no sections at all, but a remainder
  none.add_accessed_branches("nJet");
  const ChunkTable table = ChunkTableOf({plain, branches, allocated, none});
  EXPECT_FALSE(table.SectionsInRest(0));
  EXPECT_FALSE(table.SectionsInRest(1));
  EXPECT_TRUE(table.HasRest(1));
  EXPECT_TRUE(table.SectionsInRest(2));
  EXPECT_EQ(table.SectionsEnd(2) - table.SectionsBegin(2), 0u);
  EXPECT_FALSE(table.SectionsInRest(3));
  EXPECT_TRUE(table.HasRest(3));
  ExpectSame(allocated, table.Record(2));
  const ChunkTable kept = table.Filtered([](size_t i) { return i >= 2; });
  EXPECT_TRUE(kept.SectionsInRest(0));
  EXPECT_FALSE(kept.SectionsInRest(1));
}

// Random records crossing the uuid column's move (every uuid distinct): lossless before, across
// and after it.
TEST(ChunkTableTest, RandomizedRecordsWithUniqueUuids) {
  std::mt19937_64 rng(26);
  std::vector<v1::ChunkRecord> records(2 * ChunkTable::kAdaptiveCheckRecords + 100);
  for (size_t i = 0; i < records.size(); ++i) {
    Fill(&records[i], rng() % 2 ? 0.1 : 0.6, rng);
    records[i].set_uuid(absl::StrCat("taskvine-task-", i));
  }
  ExpectRoundTrip(records);
  EXPECT_FALSE(ChunkTableOf(records).UuidsInterned());
}

TEST(ChunkTableTest, MovedRecordsAndMovedTable) {
  std::mt19937_64 rng(7);
  std::vector<v1::ChunkRecord> records(20);
  for (v1::ChunkRecord& record : records) Fill(&record, 0.5, rng);
  ChunkTable table;
  for (v1::ChunkRecord record : records) table.Append(std::move(record));
  ChunkTable moved = std::move(table);
  for (size_t i = 0; i < records.size(); ++i) ExpectSame(records[i], moved.Record(i));
}

TEST(ChunkTableTest, HotColumnsAndInternedIds) {
  ChunkTable table;
  for (int i = 0; i < 4; ++i) {
    v1::ChunkRecord record;
    record.set_file(absl::StrCat("f", i % 2));
    record.set_worker("w");
    record.set_start_unix_ns(i);
    record.set_task_id(absl::StrCat(i));
    table.Append(record);
  }
  EXPECT_EQ(table.StringId(chunk_field::kFile, 0), table.StringId(chunk_field::kFile, 2));
  EXPECT_NE(table.StringId(chunk_field::kFile, 0), table.StringId(chunk_field::kFile, 1));
  EXPECT_EQ(table.InternedString(table.StringId(chunk_field::kFile, 1)), "f1");
  EXPECT_EQ(table.String(chunk_field::kTaskId, 3), "3");
  EXPECT_EQ(table.String(chunk_field::kErrorText, 3), "");
  EXPECT_EQ(table.StringId(chunk_field::kUuid, 3), 0u);
  EXPECT_EQ(table.start_unix_ns(3), 3);
}

// TaskVine's shape: a uuid per record. The uuids move once to the per-record arena; dataset,
// file, worker and section names stay interned, their ids consistent across the move.
TEST(ChunkTableTest, UniqueUuidsMoveToPerRecordStrings) {
  constexpr size_t kCheck = ChunkTable::kAdaptiveCheckRecords;
  std::vector<v1::ChunkRecord> records;
  ChunkTable table;
  for (size_t i = 0; i < 3 * kCheck + 5; ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    if (i % 7 != 0) record.set_uuid(absl::StrCat("taskvine-task-", i + 1));
    record.set_file(absl::StrCat("root://eos//store/file_", i / 10, ".root"));
    record.set_dataset(i % 2 ? "TTbar" : "WJets");
    record.set_worker(absl::StrCat("worker-", i % 13));
    record.add_sections()->set_name(absl::StrCat("section-", i % 3));
    if (i % 100 == 0) record.add_retried_task_ids(absl::StrCat(i));
    table.Append(record);
    EXPECT_EQ(table.UuidsInterned(), table.size() < kCheck) << i;
  }
  for (size_t i = 0; i < records.size(); ++i) {
    ExpectSame(records[i], table.Record(i));
    EXPECT_EQ(table.String(chunk_field::kUuid, i), records[i].uuid());
    EXPECT_EQ(table.InternedString(table.StringId(chunk_field::kFile, i)), records[i].file());
    EXPECT_EQ(table.InternedString(table.StringId(chunk_field::kWorker, i)), records[i].worker());
  }
  // Records of one file, one worker, on either side of the move: one id each.
  static_assert(kCheck % 10 != 0, "records kCheck - 1 and kCheck share a file");
  EXPECT_EQ(table.StringId(chunk_field::kFile, kCheck - 1),
            table.StringId(chunk_field::kFile, kCheck));
  EXPECT_EQ(table.StringId(chunk_field::kWorker, 5),
            table.StringId(chunk_field::kWorker, 5 + 13 * 400));
  EXPECT_NE(table.StringId(chunk_field::kWorker, 5), table.StringId(chunk_field::kWorker, 6));
  ChunkTable moved = std::move(table);
  ExpectSame(records.back(), moved.Record(records.size() - 1));
}

// Instrumentation's shape: a file's chunks share its uuid (10 per file here, as 10^6 chunks over
// 10^5 files). The column stays interned.
TEST(ChunkTableTest, SharedUuidsStayInterned) {
  std::vector<v1::ChunkRecord> records;
  for (size_t i = 0; i < 2 * ChunkTable::kAdaptiveCheckRecords; ++i) {
    records.emplace_back().set_uuid(absl::StrCat("uuid-of-file-", i / 10));
  }
  const ChunkTable table = ChunkTableOf(records);
  EXPECT_TRUE(table.UuidsInterned());
  EXPECT_EQ(table.StringId(chunk_field::kUuid, 0), table.StringId(chunk_field::kUuid, 9));
  EXPECT_NE(table.StringId(chunk_field::kUuid, 0), table.StringId(chunk_field::kUuid, 10));
  ExpectRoundTrip(records);
}

// Remainders whose bytes repeat (a file's branches and metadata) stay shared, interleaved
// records of other files and records without one between them; each record reads back whole.
TEST(ChunkTableTest, RepeatingRemaindersStayShared) {
  std::vector<v1::ChunkRecord> records;
  for (size_t i = 0; i < 3 * ChunkTable::kAdaptiveCheckRecords; ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    record.set_task_id(absl::StrCat(i));
    if (i % 5 == 0) continue;
    record.add_accessed_branches("Jet_pt");
    record.mutable_file_metadata()->set_file(absl::StrCat("file_", i % 3, "_", i / 40));
  }
  const ChunkTable table = ChunkTableOf(records);
  EXPECT_TRUE(table.RestsShared());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_EQ(table.HasRest(i), i % 5 != 0) << i;
  ExpectRoundTrip(records);
}

// Rows that bring their rest serialized (ChunkRow::rest_bytes), as ingest's reader does: the
// table keeps those bytes, also when one buffer holds different rests one after another, and
// ToRecord reads them.
TEST(ChunkTableTest, RowsWithSerializedRests) {
  std::vector<v1::ChunkRecord> records;
  ChunkTable table;
  std::string reused;   // one address, other bytes each time
  std::string kept[5];  // the same bytes at the same address
  for (int i = 0; i < 300; ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    record.set_task_id(absl::StrCat(i));
    v1::ChunkRecord rest;
    rest.add_accessed_branches(absl::StrCat("branch_", i % 5));
    rest.mutable_file_metadata()->set_file(absl::StrCat("file_", i % 5, i % 2 ? "" : "_x"));
    std::string& bytes = i % 2 ? kept[i % 5] : reused;
    bytes = rest.SerializeAsString();
    ChunkRow row;
    row.FromRecord(record);
    record.MergeFrom(rest);
    row.has_rest = true;
    row.rest_bytes = bytes;
    table.Append(row);
    v1::ChunkRecord from_row;
    row.ToRecord(&from_row);
    ExpectSame(record, from_row);
  }
  for (size_t i = 0; i < records.size(); ++i) ExpectSame(records[i], table.Record(i));
  // A row read back from the table holds its rest as a message, not the bytes it was given.
  ChunkRow row;
  row.rest_bytes = reused;
  table.ReadRow(1, &row);
  EXPECT_TRUE(row.rest_bytes.empty());
  v1::ChunkRecord read_back;
  row.ToRecord(&read_back);
  ExpectSame(records[1], read_back);
}

// Remainders distinct per record (a retried task's ids) move once to the per-record arena, the
// records before the move included, once kAdaptiveCheckRecords records had one.
TEST(ChunkTableTest, DistinctRemaindersMoveToPerRecordBytes) {
  constexpr size_t kCheck = ChunkTable::kAdaptiveCheckRecords;
  std::vector<v1::ChunkRecord> records;
  ChunkTable table;
  size_t with_rest = 0;
  for (size_t i = 0; i < 3 * kCheck + 7; ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    record.set_file("f");
    // Every third record has none: the decision counts only the records with one.
    if (i % 3 != 0) {
      record.add_retried_task_ids(absl::StrCat("task-", i));
      ++with_rest;
    }
    table.Append(record);
    EXPECT_EQ(table.RestsShared(), with_rest < kCheck) << i;
  }
  EXPECT_FALSE(table.RestsShared());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(table.HasRest(i), i % 3 != 0) << i;
    ExpectSame(records[i], table.Record(i));
  }
  ChunkTable moved = std::move(table);
  ExpectSame(records.back(), moved.Record(records.size() - 1));
  ExpectSame(records[4], moved.Record(4));
}

// Integer columns hold their values narrow and widen as values need: each width's edges,
// negative values, a first value after many zeros and a change in place that needs a wider
// column read back exactly, the values before the widening included.
TEST(ChunkTableTest, IntegerColumnsWidenWithoutLosingValues) {
  const std::vector<int64_t> values = {0,
                                       1,
                                       127,
                                       128,
                                       -128,
                                       -129,
                                       32767,
                                       32768,
                                       -32769,
                                       65535,
                                       65536,
                                       2147483647,
                                       -2147483648LL,
                                       2147483648LL,
                                       -2147483649LL,
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min(),
                                       5,
                                       0};
  std::vector<v1::ChunkRecord> records(300);  // zeros first: the column allocates late
  for (size_t i = 0; i < values.size(); ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    record.set_entry_start(values[i]);
    record.set_events(values[values.size() - 1 - i]);
    record.set_attempt(static_cast<uint32_t>(values[i]));
    record.set_status(static_cast<v1::ChunkStatus>(static_cast<int32_t>(values[i])));
    v1::SectionRecord* section = record.add_sections();
    section->set_entries(static_cast<uint32_t>(values[i]));
    section->set_bytes_read(values[i]);
  }
  ExpectRoundTrip(records);
  ChunkTable table = ChunkTableOf(records);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(table.Int(chunk_field::kEntryStart, 300 + i), values[i]) << i;
  }
  // A narrow column set to a wide value in place.
  table.SetInt(chunk_field::kEntryStop, 7, std::numeric_limits<int64_t>::min());
  table.SetInt(chunk_field::kEntryStop, 8, 3);
  table.SetInt(chunk_field::kEntryStop, 9, -1);
  table.SetAttempt(10, 4000000000u);
  EXPECT_EQ(table.Int(chunk_field::kEntryStop, 7), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(table.Int(chunk_field::kEntryStop, 8), 3);
  EXPECT_EQ(table.Int(chunk_field::kEntryStop, 9), -1);
  EXPECT_EQ(table.Int(chunk_field::kEntryStop, 6), 0);
  EXPECT_EQ(table.attempt(10), 4000000000u);
  EXPECT_EQ(table.attempt(300 + 2), 127u);
}

// Changes in place give what the same changes to the records give.
// Strings that recur out of order go through the intern cache; texts that share their size and
// last 8 bytes (one cache slot) stay distinct.
TEST(ChunkTableTest, InternedStringsRecurringOutOfOrderKeepTheirIds) {
  std::vector<v1::ChunkRecord> records;
  for (int i = 0; i < 3000; ++i) {
    v1::ChunkRecord& record = records.emplace_back();
    record.set_worker(absl::StrCat("worker-", i % 1500));
    record.set_file(absl::StrCat(i % 2 == 0 ? "a" : "b", "/x/same-tail.root"));
    record.add_sections()->set_name(absl::StrCat(i % 3, "/section-tail"));
  }
  ExpectRoundTrip(records);
  const ChunkTable table = ChunkTableOf(records);
  EXPECT_NE(table.StringId(chunk_field::kFile, 0), table.StringId(chunk_field::kFile, 1));
  EXPECT_EQ(table.StringId(chunk_field::kFile, 0), table.StringId(chunk_field::kFile, 2));
  EXPECT_EQ(table.StringId(chunk_field::kWorker, 7), table.StringId(chunk_field::kWorker, 1507));
  EXPECT_EQ(table.InternedString(table.StringId(chunk_field::kFile, 1)), "b/x/same-tail.root");
}

TEST(ChunkTableTest, ChangesInPlace) {
  std::mt19937_64 rng(3);
  std::vector<v1::ChunkRecord> records(40);
  for (v1::ChunkRecord& record : records) Fill(&record, 0.3, rng);
  ChunkTable table;
  for (const v1::ChunkRecord& record : records) table.Append(record);
  absl::flat_hash_map<uint32_t, std::string> errors;
  for (size_t i = 0; i < records.size(); i += 3) {
    v1::ChunkRecord& r = records[i];
    r.set_cpu_seconds(1.5);
    table.SetDouble(chunk_field::kCpuSeconds, i, 1.5);
    r.set_machine_cpus(0);  // optional: present though 0
    table.SetDouble(chunk_field::kMachineCpus, i, 0);
    r.set_ready_unix_ns(-7);
    table.SetInt(chunk_field::kReadyUnixNs, i, -7);
    r.set_memory_peak_bytes(0);
    table.SetInt(chunk_field::kMemoryPeakBytes, i, 0);
    r.set_attempt(4);
    table.SetAttempt(i, 4);
    r.set_status(v1::CHUNK_STATUS_FAILED);
    table.SetStatus(i, v1::CHUNK_STATUS_FAILED);
    r.set_worker(absl::StrCat("w", i % 2));
    table.SetInternedString(chunk_field::kWorker, i, absl::StrCat("w", i % 2));
    if (i % 2 == 0) {
      r.set_error_text(absl::StrCat("error ", i));
      errors[static_cast<uint32_t>(i)] = absl::StrCat("error ", i);
    }
  }
  table.ReplaceStrings(chunk_field::kErrorText, errors);
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectSame(records[i], table.Record(i));
  }
}

// SetStringId gives a record the string another record's StringId names, as the text would.
TEST(ChunkTableTest, SetStringIdTakesAnotherRecordsString) {
  std::vector<v1::ChunkRecord> records(3);
  records[0].set_worker("host-a");
  records[1].set_dataset("ttbar");
  ChunkTable table = ChunkTableOf(records);
  table.SetStringId(chunk_field::kWorker, 2, table.StringId(chunk_field::kWorker, 0));
  table.SetStringId(chunk_field::kDataset, 0, table.StringId(chunk_field::kDataset, 1));
  table.SetStringId(chunk_field::kWorker, 0, 0);  // 0 is ""
  records[2].set_worker("host-a");
  records[0].set_dataset("ttbar");
  records[0].clear_worker();
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectSame(records[i], table.Record(i));
  }
}

// A record as the original's instrumentation writes it, as bench/stage_benchmark makes them.
v1::ChunkRecord TypicalRecord(int i) {
  v1::ChunkRecord r;
  const int file = i / 10;
  r.set_task_id(absl::StrCat(i));
  r.set_dataset(file % 2 ? "TTbar" : "WJets");
  r.set_file(absl::StrCat("root://eos.example.org//store/file_", file, ".root"));
  r.set_uuid(absl::StrCat("u-", file));
  r.set_entry_start((i % 10) * 100000);
  r.set_entry_stop((i % 10 + 1) * 100000);
  r.set_events(100000);
  r.set_start_unix_ns(int64_t{1765000000} * 1000000000 + i);
  r.set_end_unix_ns(int64_t{1765000002} * 1000000000 + i);
  r.set_duration_seconds(2.0 + i * 1e-6);
  r.set_memory_before_bytes(int64_t{2000} << 20);
  r.set_memory_after_bytes(int64_t{2000 + i % 200} << 20);
  r.set_compressed_bytes_read(50000000);
  r.set_status(i % 100 == 99 ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
  if (i % 100 == 99) r.set_error_text("OSError: XRootD timeout");
  for (const char* name : {"load_columns", "jets"}) {
    v1::SectionRecord* s = r.add_sections();
    s->set_name(name);
    s->set_kind(v1::SectionRecord::KIND_TIME);
    s->set_entries(1);
    s->set_duration_seconds(0.5 + i * 1e-6);
  }
  return r;
}

// The figure the header states: bytes per typical record, the table reserved ahead.
TEST(ChunkTableTest, MemoryPerRecord) {
  constexpr int kRecords = 100000;
  ChunkTable table;
  table.Reserve(kRecords);
  for (int i = 0; i < kRecords; ++i) table.Append(TypicalRecord(i));
  const double per_record = static_cast<double>(table.MemoryBytes()) / kRecords;
  std::printf("ChunkTable: %.1f B per typical record\n", per_record);
  EXPECT_TRUE(table.UuidsInterned());
  EXPECT_LT(per_record, 150);  // 189 B before the integer columns were narrowed
  EXPECT_GT(per_record, 100);  // what the columns set must cost (a wrong count would be 0)
  ExpectSame(TypicalRecord(12345), table.Record(12345));
}

// The typical record with TaskVine's uuid, one per record ("taskvine-task-<id>").
v1::ChunkRecord RecordWithUniqueUuid(int i) {
  v1::ChunkRecord r = TypicalRecord(i);
  r.set_uuid(absl::StrCat("taskvine-task-", i + 1));
  return r;
}

TEST(ChunkTableTest, MemoryPerRecordWithUniqueUuids) {
  constexpr int kRecords = 100000;
  ChunkTable table;
  table.Reserve(kRecords);
  for (int i = 0; i < kRecords; ++i) table.Append(RecordWithUniqueUuid(i));
  const double per_record = static_cast<double>(table.MemoryBytes()) / kRecords;
  std::printf("ChunkTable: %.1f B per record with a unique uuid\n", per_record);
  EXPECT_FALSE(table.UuidsInterned());
  // 262 B with the uuids interned, 205 B before the integer columns were narrowed.
  EXPECT_LT(per_record, 170);
  EXPECT_GT(per_record, 100);
  ExpectSame(RecordWithUniqueUuid(12345), table.Record(12345));
}

// A rich record as the README's format has it, shaped like the scale test's generator
// (reliability/repro-2/gen.py `records N rich with_task_id`), e.g. its record 1:
//   {"t_start":1742250331.01,"t_end":1742250331.46,"duration":0.4500000476837158,
//    "num_events":25000,"dataset":"dataset_1","file":"root://eos.cms/store/dataset_1/file_0.root",
//    "uuid":"u-00000000","entry_start":25000,"entry_stop":50000,"mem_before_mb":513.0,
//    "mem_after_mb":531.25,"bytes_read":12345679,"accessed_branches":["Jet_pt","Jet_eta","nJet"],
//    "timing":{"jets":0.21,"muons":0.11},"memory":{"jets":2.0},"bytes":{"jets":100000},
//    "file_metadata":{"filename":"root://eos.cms/store/dataset_1/file_0.root",
//    "compression_ratio":0.4,"total_branches":1200},"task_id":2}
// as ingest/chunk_record_reader.h reads it: the branches and file metadata (the same for every
// chunk of a file) go to the remainder, the three dicts to four sections.
v1::ChunkRecord RichRecord(int i) {
  constexpr int64_t kMiB = 1024 * 1024;
  const std::string dataset = absl::StrCat("dataset_", i % 3);
  const std::string file =
      absl::StrCat("root://eos.cms/store/", dataset, "/file_", i / 40, ".root");
  const int64_t start_ns = int64_t{1742250331010000000} + int64_t{500000000} * (i / 100);
  v1::ChunkRecord r;
  r.set_status(v1::CHUNK_STATUS_OK);
  r.set_task_id(absl::StrCat(i + 1));
  r.set_dataset(dataset);
  r.set_file(file);
  r.set_uuid(absl::StrCat("u-", absl::Hex(i / 40, absl::kZeroPad8)));
  r.set_entry_start((i % 40) * 25000);
  r.set_entry_stop((i % 40) * 25000 + 25000);
  r.set_events(25000);
  r.set_start_unix_ns(start_ns);
  r.set_end_unix_ns(start_ns + 450000000);
  r.set_duration_seconds(0.4500000476837158);
  r.set_memory_before_bytes((512 + i % 7) * kMiB);
  r.set_memory_after_bytes(std::llround((530.25 + i % 11) * kMiB));
  r.set_compressed_bytes_read(12345678 + i % 1000);
  const auto add_section = [&r](const char* name, v1::SectionRecord::Kind kind) {
    v1::SectionRecord* section = r.add_sections();
    section->set_name(name);
    section->set_kind(kind);
    section->set_entries(1);
    return section;
  };
  add_section("jets", v1::SectionRecord::KIND_TIME)->set_duration_seconds(0.21);
  add_section("muons", v1::SectionRecord::KIND_TIME)->set_duration_seconds(0.11);
  add_section("jets", v1::SectionRecord::KIND_MEMORY)->set_memory_delta_bytes(2 * kMiB);
  add_section("jets", v1::SectionRecord::KIND_BYTES)->set_bytes_read(100000);
  for (const char* branch : {"Jet_pt", "Jet_eta", "nJet"}) r.add_accessed_branches(branch);
  r.mutable_file_metadata()->set_file(file);
  r.mutable_file_metadata()->set_compression_ratio(0.4);
  r.mutable_file_metadata()->set_total_branches(1200);
  return r;
}

// Read as the records' reader reads them, not reserved (their count is not known up front): the
// columns' growth leaves room unused, which ShrinkToFit gives back, the records unchanged.
TEST(ChunkTableTest, MemoryPerRichRecord) {
  constexpr int kRecords = 100000;
  ChunkTable table;
  for (int i = 0; i < kRecords; ++i) table.Append(RichRecord(i));
  const size_t grown = table.MemoryBytes();
  table.ShrinkToFit();
  const size_t shrunk = table.MemoryBytes();
  std::printf("ChunkTable: %.1f B per rich record grown, %.1f B shrunk\n",
              static_cast<double>(grown) / kRecords, static_cast<double>(shrunk) / kRecords);
  EXPECT_TRUE(table.RestsShared());
  // 484 B grown before the remainders were shared and the integers narrowed.
  EXPECT_LT(static_cast<double>(shrunk) / kRecords, 200);
  EXPECT_LT(static_cast<double>(grown) / kRecords, 250);
  EXPECT_GT(static_cast<double>(shrunk) / kRecords, 100);
  EXPECT_LT(shrunk * 5, grown * 4);  // 2^17 slots for 10^5 records: 1.31x
  for (int i : {0, 1, 39, 40, 12345, kRecords - 1}) ExpectSame(RichRecord(i), table.Record(i));
  table.Append(RichRecord(kRecords));  // and it still grows
  ExpectSame(RichRecord(kRecords), table.Record(kRecords));
  ExpectSame(RichRecord(7), table.Record(7));
}

}  // namespace
}  // namespace roastcoffea
