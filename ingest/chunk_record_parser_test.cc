#include "ingest/chunk_record_parser.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ingest/coffea_json.h"
#include "ingest/coffea_json_internal.h"
#include "ingest/ingest_warnings.h"

namespace roastcoffea {
namespace ingest_internal {
namespace {

// ParseChunkRecordsAsTable gives what ParseChunkRecords gives: the same records to the bit (once
// materialized), the same warnings, or the same error.
void ExpectTableSameAsRecords(const std::string& input) {
  const std::string shown = input.substr(0, 300);
  const absl::StatusOr<ChunkRecordsRead> records = ParseChunkRecords(input, "r.json");
  const absl::StatusOr<ChunkTableRead> table = ParseChunkRecordsAsTable(input, "r.json");
  ASSERT_EQ(records.ok(), table.ok()) << shown;
  if (!records.ok()) {
    EXPECT_EQ(records.status(), table.status()) << shown;
    return;
  }
  EXPECT_EQ(records->warnings, table->warnings) << shown;
  EXPECT_EQ(records->cancelled, table->cancelled) << shown;
  ASSERT_EQ(records->records.size(), table->table.size()) << shown;
  for (size_t i = 0; i < records->records.size(); ++i) {
    const v1::ChunkRecord materialized = table->table.Record(i);
    ASSERT_EQ(records->records[i].SerializeAsString(), materialized.SerializeAsString())
        << shown << "\nrecord " << i << ":\n"
        << materialized.DebugString() << "against\n"
        << records->records[i].DebugString();
  }
}

// ParseChunkRecords (the direct parser, JsonTree for what it declines) gives what JsonTree alone
// gives: the same records to the bit, the same warnings, or the same error; and so does
// ParseChunkRecordsAsTable.
void ExpectSameAsTree(const std::string& input) {
  ExpectTableSameAsRecords(input);
  const std::string shown = input.substr(0, 300);  // a long input is not echoed whole
  const absl::StatusOr<ChunkRecordsRead> direct = ParseChunkRecords(input, "r.json");
  const absl::StatusOr<ChunkRecordsRead> tree = ParseChunkRecordsThroughTree(input, "r.json");
  ASSERT_EQ(direct.ok(), tree.ok()) << shown;
  if (!tree.ok()) {
    EXPECT_EQ(direct.status(), tree.status()) << shown;
    return;
  }
  EXPECT_EQ(direct->warnings, tree->warnings) << shown;
  ASSERT_EQ(direct->records.size(), tree->records.size()) << shown;
  for (size_t i = 0; i < tree->records.size(); ++i) {
    ASSERT_EQ(direct->records[i].SerializeAsString(), tree->records[i].SerializeAsString())
        << shown << "\nrecord " << i << ":\n"
        << direct->records[i].DebugString() << "against\n"
        << tree->records[i].DebugString();
  }
}

// The length the direct parser reads of `record` (0: declined).
size_t Parsed(absl::string_view record) {
  DirectRecordParser parser;
  RecordMembers members;
  return parser.Parse(record, &members);
}

// As stage_benchmark and the original's instrumentation write records.
constexpr char kFullRecord[] =
    R"({"task_id": 7, "t_start": 1.765e+09, "t_end": 1765000002.34, "duration": 2.34,)"
    R"( "mem_before_mb": 2000, "mem_after_mb": 2071, "bytes_read": 50000000,)"
    R"( "num_events": 100000, "dataset": "TTbar", "file": "root://eos.example.org//store/f.root",)"
    R"( "uuid": "u-1", "entry_start": 0, "entry_stop": 100000,)"
    R"( "timing": {"load_columns": 0.702, "jets": 1.17}, "memory": {"jets": 12.5},)"
    R"( "bytes": {"jets": 4096}, "accessed_branches": ["Jet_pt", "nJet"],)"
    R"( "accessed_bytes": 1234, "accessed_uncompressed_bytes": 4321,)"
    R"( "branches_read_percent": 12.5, "bytes_read_percent": 3.25,)"
    R"( "file_metadata": {"filename": "f.root", "compression_ratio": 2.5, "total_branches": 9,)"
    R"( "total_tree_bytes": 1000000}, "error": "OSError: XRootD timeout", "other": [1, [true]]})";
constexpr char kMinRecord[] =
    "{\"t_start\":1742250331.01,\"t_end\":1742250331.46,\"num_events\":25000,\"dataset\":"
    "\"dataset_0\",\"file\":\"root://eos.cms/store/dataset_0/file_0.root\",\"entry_start\":0,"
    "\"entry_stop\":25000}";

TEST(DirectRecordParserTest, ReadsTheRecordsTheOriginalWritesWhole) {
  EXPECT_EQ(Parsed(kFullRecord), std::strlen(kFullRecord));
  EXPECT_EQ(Parsed(kMinRecord), std::strlen(kMinRecord));
  // Python's repr of time.time() (17 significant digits, not a product of exact doubles) and
  // UTF-8 in a string.
  const std::string precise = "{\"t_start\": 1742250330.8763459, \"file\": \"caf\xc3\xa9.root\"}";
  EXPECT_EQ(Parsed(precise), precise.size());
  // Followed by the rest of the input: the length of the record only.
  EXPECT_EQ(Parsed(absl::StrCat(kMinRecord, ", {\"t_start\": 1}]")), std::strlen(kMinRecord));
  RecordMembers members;
  DirectRecordParser parser;
  ASSERT_GT(parser.Parse(kFullRecord, &members), 0u);
  EXPECT_EQ(members.fields[kDataset].text, "TTbar");
  EXPECT_EQ(members.fields[kTStart].number, 1.765e9);
  ASSERT_EQ(members.sections[0].size(), 2u);
  EXPECT_EQ(members.sections[0][1].name, "jets");
  EXPECT_EQ(members.sections[0][1].value.number, 1.17);
  EXPECT_EQ(members.branches.size(), 2u);
  EXPECT_EQ(members.file_metadata.size(), 4u);
}

// What only JsonTree reads (leniencies, escapes, errors) is declined, for JsonTree to read.
TEST(DirectRecordParserTest, DeclinesWhatJsonTreeReadsOrRefuses) {
  for (const char* record : {
           R"({"dataset": "a\"b"})",         // an escape
           R"({'dataset': "a"})",            // single quotes
           R"({dataset: "a"})",              // a bare key
           R"({"t_start": NaN})",            // Python's NaN
           R"({"t_start": -Infinity})",      //
           R"({"a": 1,})",                   // a trailing comma
           R"({"a": [1,]})",                 //
           R"({"timing": {"j": 1,}})",       //
           R"({"a": 1, "a": 2})",            // a repeated key
           R"({"file": "x", "file": "y"})",  //
           R"({"timing": {"j": 1, "j": 2}})",
           R"({"num_events": 01})",      // octal
           R"({"num_events": 1.})",      // strtod's numbers
           R"({"num_events": .5})",      //
           R"({"num_events": 0x10})",    //
           R"({"num_events": 1e400})",   // beyond double
           R"({"num_events": 1e-400})",  // below: JsonTree reads 0 through strtod
           R"({"a": {"b": 1}})",         // an object not read
           R"({"timing": {"j": {}}})",   //
           "{\"a\":\v1}",                // protobuf's spaces
           "{\"file\": \"\xff\"}",       // not UTF-8
           "{\"file\": \"\xed\xa0\x80\"}",
           R"({"a": tru})",
           R"({"a": 1)",  // the text ends
           R"({"a": "b)",
           R"({"a": 12)",
       }) {
    EXPECT_EQ(Parsed(record), 0u) << record;
  }
  std::string deep = "{\"a\": ";
  for (int i = 0; i < 10; ++i) deep += "[";
  for (int i = 0; i < 10; ++i) deep += "]";
  EXPECT_EQ(Parsed(deep + "}"), 0u);
}

TEST(DirectRecordParserTest, SameAsJsonTreeOnTheTestData) {
  for (const char* path :
       {"ingest/testdata/chunk_records.json", "ingest/testdata/chunk_records_odd.json",
        "ingest/testdata/chunk_records_plain.json"}) {
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    ExpectSameAsTree(text.str());
  }
}

TEST(DirectRecordParserTest, SameAsJsonTreeOnEdgeCases) {
  for (const std::string& record : {
           std::string(kFullRecord),
           std::string(kMinRecord),
           std::string(R"({})"),
           std::string(R"({"task_id": "dask-key-1", "num_events": -0, "entry_start": -0.0})"),
           std::string(R"({"task_id": 1e300, "num_events": 1e19, "mem_before_mb": 1e13})"),
           std::string(
               R"({"t_start": 9e9, "t_end": 9.0000001e9, "duration": 1.7976931348623157e308})"),
           std::string(
               R"({"t_start": "x", "dataset": 3, "timing": [1], "accessed_branches": "b"})"),
           std::string(R"({"timing": {"a": "x", "b": null, "c": [1]}, "memory": {"m": 1e300}})"),
           std::string(R"({"accessed_branches": [1, null, ["x"], "ok"], "error": 3})"),
           std::string(
               R"({"error": null, "file_metadata": {"filename": 3, "total_branches": 1.5}})"),
           std::string(
               R"({"num_events": 12345678901234567, "duration": 0.1000000000000000055511})"),
           std::string(R"({"duration": 123456789012345678901234567890e-20, "t_start": 5e-324})"),
           std::string(
               R"({"duration": 4.9406564584124654e-324, "t_end": 2.2250738585072011e-308})"),
           std::string(R"({"duration": 9007199254740993, "t_start": 9007199254740993.0})"),
           std::string(
               R"({"duration": 1E+2, "t_start": 1e-22, "t_end": 1e22, "bytes_read": 1e23})"),
           std::string(R"( {"dataset": "caf)") + "\xc3\xa9\xf0\x9f\x98\x80" + R"("} )",
           std::string("{\"dataset\": \"tab\there\"}"),
       }) {
    ExpectSameAsTree("[" + record + "]");
    ExpectSameAsTree("[" + record + "," + record + "]");
    // Cut short while written (the first record kept), and after a byte order mark.
    ExpectSameAsTree("[" + record + "," + record.substr(0, record.size() / 2));
    ExpectSameAsTree("\xEF\xBB\xBF[" + record + "]");
  }
}

// The parser expects each record's keys where the last record had them: another key there (a
// longer one with the same start, one repeated, one not read) is still read as JsonTree reads it.
TEST(DirectRecordParserTest, SameAsJsonTreeWhenTheKeysChangePlaces) {
  ExpectSameAsTree(
      R"([{"file": "a", "t_end": 1, "x": 1}, {"file_metadata": {}, "t_end": 2, "x": 2},)"
      R"( {"t_end": 3, "file": "b", "y": 3}, {"t_end": 4, "t_end": 5}, {"t_end": 6, "fil": 7},)"
      R"( {"t_end": 8, "file": "c", "x": 9, "x": 10}, {"t_end": 11, "file": "d", "x": 12}])");
}

// A key of the length of the one the last record had at its place, differing from it in its
// first, middle or last bytes (the comparison is by words), is not taken for it.
TEST(DirectRecordParserTest, SameAsJsonTreeForKeysOfTheRememberedLength) {
  for (const std::string& key :
       {std::string("file"), std::string("t_end"), std::string("mem_before_mb"),
        std::string("accessed_uncompressed_bytes")}) {
    for (size_t at : {size_t{0}, key.size() / 2, key.size() - 1}) {
      std::string other = key;
      other[at] = other[at] == 'x' ? 'y' : 'x';
      ExpectSameAsTree(absl::StrCat(R"([{")", key, R"(": 1, "num_events": 2}, {")", other,
                                    R"(": 3, "num_events": 4}, {")", key, R"(": 5}])"));
    }
  }
}

// The rest's file metadata and branches, reused from record to record in the table's row, carry
// nothing over: records with and without them, in every order.
TEST(DirectRecordParserTest, SameAsJsonTreeForRestsThatComeAndGo) {
  ExpectSameAsTree(
      R"([{"file_metadata": {"filename": "a-long-file-name-beyond-the-short-string.root",)"
      R"( "compression_ratio": 2.5, "total_branches": 9, "total_tree_bytes": 100},)"
      R"( "accessed_branches": ["x", "y"]},)"
      R"( {"file": "f"}, {"file_metadata": {"total_branches": 3}}, {"file_metadata": {}},)"
      R"( {"file_metadata": {"filename": "b"}, "accessed_branches": []},)"
      R"( {"accessed_branches": ["z"]}, {"file_metadata": {"filename": "c"}}])");
}

// A file's chunks repeat its branches and metadata: the parser gives a text it met recently the
// same id (and the same members, viewing its own copy), a new text a new one.
TEST(DirectRecordParserTest, RemembersRepeatedBranchesAndMetadata) {
  DirectRecordParser parser;
  RecordMembers first;
  RecordMembers again;
  ASSERT_GT(parser.Parse(kFullRecord, &first), 0u);
  {
    const std::string copy = kFullRecord;  // other bytes, the same text
    ASSERT_EQ(parser.Parse(copy, &again), copy.size());
  }
  EXPECT_NE(first.branches_id, 0u);
  EXPECT_NE(first.file_metadata_id, 0u);
  EXPECT_EQ(again.branches_id, first.branches_id);
  EXPECT_EQ(again.file_metadata_id, first.file_metadata_id);
  ASSERT_EQ(again.branches.size(), 2u);
  EXPECT_EQ(again.branches[1].text, "nJet");
  ASSERT_EQ(again.file_metadata.size(), 4u);
  EXPECT_EQ(again.file_metadata[0].name, "filename");
  EXPECT_EQ(again.file_metadata[0].value.text, "f.root");
  EXPECT_EQ(again.file_metadata[3].value.number, 1000000);
  // Another metadata text: another id; the branches' stays.
  RecordMembers other;
  const std::string changed =
      R"({"accessed_branches": ["Jet_pt", "nJet"], "file_metadata": {"filename": "g.root"}})";
  ASSERT_EQ(parser.Parse(changed, &other), changed.size());
  EXPECT_EQ(other.branches_id, first.branches_id);
  EXPECT_NE(other.file_metadata_id, first.file_metadata_id);
  EXPECT_NE(other.file_metadata_id, 0u);
  // No ids for what is not a list or an object, nor for a record without them.
  ASSERT_GT(parser.Parse(R"({"accessed_branches": "b", "file_metadata": null})", &other), 0u);
  EXPECT_EQ(other.branches_id, 0u);
  EXPECT_EQ(other.file_metadata_id, 0u);
}

// ChunkRowReader builds and serializes a rest once per distinct text: the next record with the
// same branches and metadata gets the same bytes, without a rest message built.
TEST(ChunkRowReaderTest, SerializesARepeatedRestOnce) {
  DirectRecordParser parser;
  ChunkRowReader reader;
  std::vector<std::string> warnings_out;
  Warnings warnings(&warnings_out);
  RecordMembers members;
  ChunkRow row;
  ASSERT_GT(parser.Parse(kFullRecord, &members), 0u);
  reader.Read(members, "r.json", 0, &warnings, &row);
  ASSERT_TRUE(row.has_rest);
  EXPECT_EQ(row.rest.file_metadata().file(), "f.root");
  const std::string serialized = row.rest.SerializeAsString();
  EXPECT_EQ(row.rest_bytes, serialized);
  ASSERT_GT(parser.Parse(kFullRecord, &members), 0u);
  reader.Read(members, "r.json", 1, &warnings, &row);
  ASSERT_TRUE(row.has_rest);
  EXPECT_EQ(row.rest_bytes, serialized);
  EXPECT_FALSE(row.rest.has_file_metadata());  // not built again
  EXPECT_EQ(row.rest.accessed_branches_size(), 0);
  // A branch that is not a string warns for each record: never cached.
  const std::string odd = R"({"accessed_branches": ["x", 1]})";
  for (size_t index : {2, 3}) {
    ASSERT_GT(parser.Parse(odd, &members), 0u);
    reader.Read(members, "r.json", index, &warnings, &row);
    EXPECT_TRUE(row.rest_bytes.empty());
    EXPECT_EQ(row.rest.accessed_branches_size(), 1);
  }
  EXPECT_EQ(warnings_out.size(), 2u);
}

// Many files' rests, interleaved beyond what the parser and the reader remember, with warnings
// and empty ones among them: the same records and warnings as JsonTree's.
TEST(DirectRecordParserTest, SameAsJsonTreeForInterleavedRests) {
  std::string json = "[";
  for (int i = 0; i < 400; ++i) {
    const int file = (i * 7) % (i < 200 ? 5 : 37);
    absl::StrAppend(&json, i ? ",\n" : "", R"({"file": "f)", file, R"(", "entry_start": )", i,
                    R"(, "accessed_branches": [)",
                    file % 11 == 3 ? R"("a", 2])" : (file % 13 == 4 ? "]" : R"("a", "b"])"),
                    R"(, "file_metadata": {"filename": "f)", file, R"(", "total_branches": )",
                    file % 3, "}}");
  }
  ExpectSameAsTree(json + "]");
}

// Sections beyond the per-record budget and beyond the linear repeated-key check.
TEST(DirectRecordParserTest, SameAsJsonTreeForManySections) {
  for (int sections : {15, 16, 17, 40, kMaxSectionsPerChunkRecord + 3}) {
    std::string timing;
    for (int i = 0; i < sections; ++i) absl::StrAppend(&timing, i ? "," : "", "\"s", i, "\": ", i);
    ExpectSameAsTree(absl::StrCat(R"([{"file": "f", "timing": {)", timing, "}}]"));
    // The last name repeats one of the first.
    ExpectSameAsTree(absl::StrCat(R"([{"file": "f", "timing": {)", timing, R"(, "s3": 1}}]))"));
  }
  std::string keys;
  for (int i = 0; i < 20; ++i) absl::StrAppend(&keys, ", \"k", i, "\": ", i);
  ExpectSameAsTree(absl::StrCat(R"([{"file": "f")", keys, "}]"));
}

// Numbers of every shape (digits, fractions, exponents, signs), generated: the same doubles.
TEST(DirectRecordParserTest, SameNumbersAsJsonTree) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&state](uint64_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state % n;
  };
  const auto digits = [&](int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out += static_cast<char>('0' + next(10));
    return out;
  };
  std::string json = "[";
  for (int i = 0; i < 20000; ++i) {
    std::string number = next(4) == 0 ? "-" : "";
    number += next(3) == 0 ? "0" : std::to_string(1 + next(9)) + digits(static_cast<int>(next(20)));
    if (next(2) == 0) number += "." + digits(1 + static_cast<int>(next(20)));
    if (next(3) == 0) {
      number += next(2) == 0 ? "e" : "E";
      if (next(2) == 0) number += next(2) == 0 ? "-" : "+";
      number += std::to_string(next(next(5) == 0 ? 400 : 30));
    }
    absl::StrAppend(&json, i ? "," : "", R"({"duration": )", number, R"(, "timing": {"t": )",
                    number, R"(}, "num_events": )", number, "}");
  }
  ExpectSameAsTree(json + "]");
}

}  // namespace
}  // namespace ingest_internal
}  // namespace roastcoffea
