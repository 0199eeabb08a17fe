// SaveMeasurement(measurement, ChunkTable, ...): the directory saved from a measurement whose
// records are held apart in a table is the one saved from the measurement holding them, byte for
// byte, in every form (measurement.pb and .json, measurement.pbs).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "schema/chunk_table.h"
#include "schema/measurement.pb.h"
#include "store/measurement_io.h"
#include "store/segmented_measurement.h"

namespace roastcoffea {
namespace {

std::string TestDirectory() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base = tmp != nullptr ? tmp : "/tmp";
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), ".", info->name());
  std::replace(name.begin(), name.end(), '/', '_');
  const std::string path = absl::StrCat(base, "/", name);
  EXPECT_EQ(mkdir(path.c_str(), 0777), 0) << path;
  return path;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// Every file of `a` is in `b` with the same bytes, and no other.
void ExpectSameFiles(const std::string& a, const std::string& b) {
  const std::vector<std::string> names = ListDirectory(a);
  ASSERT_FALSE(names.empty()) << a;
  EXPECT_EQ(names, ListDirectory(b));
  for (const std::string& name : names) {
    const std::string left = ReadWholeFile(a + "/" + name);
    const std::string right = ReadWholeFile(b + "/" + name);
    EXPECT_EQ(left.size(), right.size()) << name;
    EXPECT_TRUE(left == right) << name << " differs";
  }
}

// Where text that is not UTF-8 goes: nowhere, the records, or the records and a field saved
// before them (metadata) or after them (spans).
enum class BadText { kNone, kRecords, kRecordsAndMetadata, kRecordsAndSpans };

// A measurement with every kind of top-level field. Its configuration has one entry: a
// protobuf map of more is serialized in an order of its own per copy of the message.
v1::Measurement MeasurementWithoutRecords(BadText bad) {
  v1::Measurement m;
  v1::MeasurementMetadata& metadata = *m.mutable_metadata();
  metadata.set_schema_version(kSchemaVersion);
  metadata.set_name("run");
  metadata.mutable_start_time()->set_seconds(1795335303);
  metadata.set_host("node01");
  metadata.add_command_line("--dataset=\xE6\x95\xB0\xE6\x8D\xAE");  // 数据
  (*metadata.mutable_configuration())["chunksize"] = "100000";
  if (bad == BadText::kRecordsAndMetadata) metadata.set_host("n\xE9ud");
  m.mutable_report()->set_events(1233000);
  v1::WorkerSeries& worker = *m.mutable_tracking()->add_workers();
  worker.set_worker("node01:1234/0");
  worker.add_time_unix_ns(1795335303000000000);
  worker.add_memory_bytes(3.5e8);
  v1::Span& span = *m.add_spans();
  span.set_name(bad == BadText::kRecordsAndSpans ? "proc\xFFssing" : "processing");
  m.mutable_metrics()->mutable_workflow()->set_total_events(1233000);
  m.add_profiles()->set_source("threadpool");
  v1::Warning& warning = *m.add_warnings();
  warning.set_code("contention");
  warning.set_message("load average 9 on 2 CPUs");
  v1::ChunkRecord& rejected = *m.add_rejected_chunks();
  rejected.set_file("bad.root");
  rejected.set_duration_seconds(-1);
  // A field from a newer writer: kept by the .pb.
  m.GetReflection()->MutableUnknownFields(&m)->AddVarint(1000, 7);
  return m;
}

// `count` records of every shape the table holds: columns, sections, optional fields, the
// rarely-set ones kept as a remainder, unknown fields, text beyond ASCII (and JSON's escaped
// code points), and with `bad`, bytes that are not UTF-8 in several fields of a few records.
void AddRecords(int count, BadText bad, v1::Measurement* m) {
  for (int i = 0; i < count; ++i) {
    v1::ChunkRecord& r = *m->add_chunks();
    r.set_dataset(i % 2 == 0 ? "ttbar" : "\xCE\xB1\xCE\xB2");  // αβ
    r.set_file(absl::StrCat("root://eos/file", i % 7, ".root"));
    r.set_uuid("c0ffee");
    r.set_entry_start(i * 1000);
    r.set_entry_stop((i + 1) * 1000);
    r.set_events(1000);
    r.set_start_unix_ns(1795335303000000000 + i * 1000);
    r.set_end_unix_ns(1795335303000000000 + i * 1000 + 900);
    r.set_duration_seconds(0.9e-6 + i);
    r.set_cpu_seconds(0.5 * i);
    r.set_worker(absl::StrCat("worker-", i % 3, "\xE2\x80\xA8"));  // U+2028, escaped in JSON
    r.set_task_id(absl::StrCat("task ", i));
    r.set_status(i % 50 == 3 ? v1::CHUNK_STATUS_FAILED : v1::CHUNK_STATUS_OK);
    if (i % 50 == 3) r.set_error_text("OSError: \"read\" timed out <\xF0\x9F\x98\x80>");
    v1::SectionRecord& section = *r.add_sections();
    section.set_name("jet selection");
    section.set_kind(v1::SectionRecord::KIND_TIME);
    section.set_duration_seconds(0.25);
    if (i % 3 == 0) r.set_allocated_bytes(0);  // optional: set although zero
    if (i % 5 == 0) {
      r.add_accessed_branches("Jet_pt");
      r.mutable_file_metadata()->set_file(r.file());
      r.add_retried_task_ids("task 0");
    }
    if (i % 11 == 0) r.GetReflection()->MutableUnknownFields(&r)->AddVarint(999, i);
    if (bad != BadText::kNone && i % 10 == 7) {
      r.set_worker(absl::StrCat("worker\xFE", i));
      r.mutable_sections(0)->set_name("sel\xC3");  // cut short
      if (i % 5 == 0) r.set_accessed_branches(0, "Jet\x80pt");
      r.set_task_id("task\xED\xA0\x80");  // a UTF-16 surrogate
    }
  }
}

// Saves `m` (holding its records) under <root>/records/<name>, then the same measurement with
// its records held apart in a table under <root>/table/<name>: the two are compared.
struct SavedBoth {
  std::string from_records;
  std::string from_table;
};
SavedBoth SaveBoth(v1::Measurement& m, const std::string& root, bool free_name = false) {
  ChunkTable table;
  for (const v1::ChunkRecord& record : m.chunks()) table.Append(record);
  const auto save = [&](const std::string& parent, const ChunkTable* records) {
    absl::StatusOr<std::string> saved =
        records == nullptr ? (free_name ? SaveMeasurementUnderFreeName(m, parent, "run")
                                        : SaveMeasurement(m, parent, "run"))
                           : (free_name ? SaveMeasurementUnderFreeName(m, *records, parent, "run")
                                        : SaveMeasurement(m, *records, parent, "run"));
    EXPECT_TRUE(saved.ok()) << saved.status();
    return saved.ok() ? *saved : std::string();
  };
  SavedBoth both;
  both.from_records = save(root + "/records", nullptr);
  // The same message (not a copy: its map keeps its order), without its records.
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> records;
  records.Swap(m.mutable_chunks());
  both.from_table = save(root + "/table", &table);
  records.Swap(m.mutable_chunks());
  return both;
}

class TableSaveTest : public ::testing::TestWithParam<std::tuple<int, bool, BadText>> {
 protected:
  void TearDown() override {
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
  }
};

TEST_P(TableSaveTest, SavesTheSameBytesAsTheMeasurementHoldingTheRecords) {
  const auto [records, in_parts, bad] = GetParam();
  if (in_parts) store_internal::SetSegmentThresholdBytesForTesting(1);
  v1::Measurement m = MeasurementWithoutRecords(bad);
  AddRecords(records, bad, &m);
  const std::string root = TestDirectory();
  const SavedBoth saved = SaveBoth(m, root);
  ASSERT_FALSE(saved.from_records.empty() || saved.from_table.empty());
  ExpectSameFiles(saved.from_records, saved.from_table);
  EXPECT_EQ(SavedInParts(saved.from_table), in_parts);

  // Loaded back with its records into a table (a MeasuredRun's form), and saved again from it:
  // the same bytes once more.
  ChunkTable loaded_table;
  LoadOptions into_table;
  into_table.chunk_table = &loaded_table;
  absl::StatusOr<v1::Measurement> rest = LoadMeasurement(saved.from_table, into_table);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(rest->chunks_size(), 0);
  EXPECT_EQ(loaded_table.size(), static_cast<size_t>(records));
  EXPECT_EQ(rest->rejected_chunks_size(), 1);
  absl::StatusOr<std::string> again = SaveMeasurement(*rest, loaded_table, root + "/again", "run");
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameFiles(saved.from_records, *again);

  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(saved.from_table);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->chunks_size(), records);
  // The first repaired field in the saved order: the metadata's before the records', the
  // records' before the spans'.
  const bool bad_records = bad != BadText::kNone && records > 7;
  std::string first;
  if (bad == BadText::kRecordsAndMetadata) {
    first = "metadata.host";
  } else if (bad_records) {
    first = "chunks[7].sections[0].name";
  } else if (bad == BadText::kRecordsAndSpans) {
    first = "spans[0].name";
  }
  const v1::Warning& last = loaded->warnings(loaded->warnings_size() - 1);
  EXPECT_EQ(last.code() == "invalid_utf8", !first.empty()) << last.message();
  if (!first.empty()) {
    EXPECT_TRUE(absl::StrContains(last.message(), absl::StrCat("(first: ", first, ")")))
        << last.message();
  }
  if (!in_parts) {
    // The message path's .pb is libprotobuf's own serialization of the whole message.
    v1::Measurement whole;
    ASSERT_TRUE(whole.ParseFromString(ReadWholeFile(saved.from_records + "/measurement.pb")));
    EXPECT_EQ(ReadWholeFile(saved.from_records + "/measurement.pb"), whole.SerializeAsString());
  }
}

INSTANTIATE_TEST_SUITE_P(
    RecordsFormsAndText, TableSaveTest,
    ::testing::Combine(::testing::Values(0, 25, 2 * store_internal::kChunksPerPart + 1),
                       ::testing::Bool(),
                       ::testing::Values(BadText::kNone, BadText::kRecords,
                                         BadText::kRecordsAndMetadata, BadText::kRecordsAndSpans)));

// The choice of measurement.pbs over measurement.pb is the message's at every threshold: the
// table's records bound their bytes from their text, and are sized one by one when the bound
// does not decide (the measurement exactly at the threshold stays one file, one byte over not).
class TableSaveThresholdTest : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override {
    store_internal::SetSegmentThresholdBytesForTesting(
        store_internal::kDefaultSegmentThresholdBytes);
  }
};

TEST_P(TableSaveThresholdTest, ChoosesPartsAsTheMessageDoes) {
  v1::Measurement m = MeasurementWithoutRecords(BadText::kNone);
  AddRecords(400, BadText::kNone, &m);
  v1::Measurement rest = m;
  rest.clear_chunks();
  const int64_t whole = static_cast<int64_t>(m.ByteSizeLong());
  const int64_t records = whole - static_cast<int64_t>(rest.ByteSizeLong());
  // Just above the rest (the bound decides: parts), half the records in (parts, from their
  // sizes), at the whole less one byte (parts), at the whole (one file).
  const int64_t threshold =
      std::vector<int64_t>{whole - records + 1, whole - records / 2, whole - 1, whole}[GetParam()];
  store_internal::SetSegmentThresholdBytesForTesting(threshold);
  const SavedBoth saved = SaveBoth(m, TestDirectory());
  ASSERT_FALSE(saved.from_records.empty() || saved.from_table.empty());
  EXPECT_EQ(SavedInParts(saved.from_records), threshold < whole);
  EXPECT_EQ(SavedInParts(saved.from_table), threshold < whole);
  ExpectSameFiles(saved.from_records, saved.from_table);
}

INSTANTIATE_TEST_SUITE_P(AroundTheRecords, TableSaveThresholdTest, ::testing::Range(0, 4));

TEST(TableSave, MeasurementPbIsTheWholeMessageSerialized) {
  v1::Measurement m = MeasurementWithoutRecords(BadText::kNone);
  AddRecords(30, BadText::kNone, &m);
  const std::string expected = m.SerializeAsString();
  const SavedBoth saved = SaveBoth(m, TestDirectory());
  EXPECT_TRUE(ReadWholeFile(saved.from_table + "/measurement.pb") == expected);
}

TEST(TableSave, FilledInSchemaVersionAndFreeNameAreTheSame) {
  v1::Measurement m = MeasurementWithoutRecords(BadText::kRecords);
  AddRecords(40, BadText::kRecords, &m);
  m.mutable_metadata()->set_schema_version(0);
  const std::string root = TestDirectory();
  const SavedBoth first = SaveBoth(m, root, /*free_name=*/true);
  const SavedBoth second = SaveBoth(m, root, /*free_name=*/true);
  EXPECT_EQ(second.from_table, root + "/table/run-2");
  ExpectSameFiles(first.from_records, first.from_table);
  ExpectSameFiles(second.from_records, second.from_table);
  absl::StatusOr<v1::Measurement> loaded = LoadMeasurement(second.from_table);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata().name(), "run-2");
  EXPECT_EQ(loaded->metadata().schema_version(), kSchemaVersion);
}

// Records loaded into a table are appended to what it holds, and only once all are read: a
// .pb that breaks off midway (read again from the JSON copy) leaves no record twice, a
// measurement.pbs that breaks off leaves the table as it was.
TEST(TableSave, LoadIntoATableAppendsOnlyWhatWasReadWhole) {
  v1::Measurement m = MeasurementWithoutRecords(BadText::kNone);
  AddRecords(300, BadText::kNone, &m);
  const std::string root = TestDirectory();
  const SavedBoth saved = SaveBoth(m, root);
  ASSERT_FALSE(saved.from_table.empty());
  const auto load_into = [](const std::string& directory, ChunkTable* table) {
    LoadOptions options;
    options.chunk_table = table;
    return LoadMeasurement(directory, options);
  };
  ChunkTable table;
  table.Append(m.chunks(299));
  ASSERT_TRUE(load_into(saved.from_table, &table).ok());
  ASSERT_EQ(table.size(), 301u);
  EXPECT_EQ(table.Record(0).SerializeAsString(), m.chunks(299).SerializeAsString());
  EXPECT_EQ(table.Record(1).SerializeAsString(), m.chunks(0).SerializeAsString());

  const std::string pb = saved.from_table + "/measurement.pb";
  const std::string bytes = ReadWholeFile(pb);
  std::ofstream(pb, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  ChunkTable from_json;
  absl::StatusOr<v1::Measurement> fallback = load_into(saved.from_table, &from_json);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(fallback->warnings(fallback->warnings_size() - 1).code(), "measurement_pb_corrupt");
  EXPECT_EQ(from_json.size(), 300u);
  EXPECT_EQ(fallback->chunks_size(), 0);

  store_internal::SetSegmentThresholdBytesForTesting(1);
  absl::StatusOr<std::string> parts = SaveMeasurement(m, root + "/parts", "run");
  store_internal::SetSegmentThresholdBytesForTesting(store_internal::kDefaultSegmentThresholdBytes);
  ASSERT_TRUE(parts.ok()) << parts.status();
  const std::string pbs = *parts + "/measurement.pbs";
  const std::string part_bytes = ReadWholeFile(pbs);
  std::ofstream(pbs, std::ios::binary | std::ios::trunc)
      << part_bytes.substr(0, part_bytes.size() - 100);
  ChunkTable untouched;
  untouched.Append(m.chunks(0));
  EXPECT_EQ(load_into(*parts, &untouched).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(untouched.size(), 1u);
}

TEST(TableSave, RecordsOfItsOwnAndATableIsInvalidArgumentNamingIt) {
  v1::Measurement m = MeasurementWithoutRecords(BadText::kNone);
  AddRecords(2, BadText::kNone, &m);
  ChunkTable table;
  for (const v1::ChunkRecord& record : m.chunks()) table.Append(record);
  const std::string parent = TestDirectory();
  for (const absl::Status& status :
       {SaveMeasurement(m, table, parent, "both").status(),
        SaveMeasurementUnderFreeName(m, table, parent, "both").status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(status.message(), "'both'")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "2 chunk record(s) of its own")) << status;
  }
  EXPECT_TRUE(ListDirectory(parent).empty());
}

}  // namespace
}  // namespace roastcoffea
