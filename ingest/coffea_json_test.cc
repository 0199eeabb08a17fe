#include "ingest/coffea_json.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The values of a parse; the warnings go to `warnings`, or must be none.
absl::StatusOr<v1::WorkflowReport> Report(absl::string_view json, absl::string_view source,
                                          std::vector<std::string>* warnings = nullptr) {
  absl::StatusOr<CoffeaReportRead> read = ParseCoffeaReport(json, source);
  if (!read.ok()) return read.status();
  if (warnings != nullptr) {
    *warnings = read->warnings;
  } else {
    EXPECT_THAT(read->warnings, ElementsAre()) << json;
  }
  return read->report;
}

absl::StatusOr<std::vector<v1::ChunkRecord>> Records(absl::string_view json,
                                                     absl::string_view source,
                                                     std::vector<std::string>* warnings = nullptr) {
  absl::StatusOr<ChunkRecordsRead> read = ParseChunkRecords(json, source);
  if (!read.ok()) return read.status();
  if (warnings != nullptr) {
    *warnings = read->warnings;
  } else {
    EXPECT_THAT(read->warnings, ElementsAre()) << json;
  }
  return read->records;
}

TEST(ParseCoffeaReportTest, ReadsEveryField) {
  absl::StatusOr<v1::WorkflowReport> report = Report(
      R"({"bytesread": 10000000000, "columns": ["Jet_pt", "nJet"], "entries": 1000000,
          "processtime": 100.5, "chunks": 50})",
      "report.json");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->compressed_bytes_read(), 10000000000);
  EXPECT_EQ(report->events(), 1000000);
  EXPECT_DOUBLE_EQ(report->process_time_seconds(), 100.5);
  EXPECT_EQ(report->chunks(), 50);
  ASSERT_EQ(report->columns_size(), 2);
  EXPECT_EQ(report->columns(1), "nJet");
}

TEST(ParseCoffeaReportTest, AbsentKeysStayAbsent) {
  absl::StatusOr<v1::WorkflowReport> report = Report(R"({"entries": 5})", "r");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->events(), 5);
  EXPECT_FALSE(report->has_compressed_bytes_read());
  EXPECT_FALSE(report->has_process_time_seconds());
}

TEST(ParseCoffeaReportTest, BadInputNamesTheSourceAndKey) {
  absl::StatusOr<v1::WorkflowReport> report = Report("{nope", "out/report.json");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("out/report.json"));
  report = Report("[1, 2]", "r.json");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("JSON object"));
}

// A bad value loses that value with a warning, not the report (reliability study D16).
TEST(ParseCoffeaReportTest, BadValuesAreLeftOutWithAWarning) {
  std::vector<std::string> warnings;
  absl::StatusOr<v1::WorkflowReport> report =
      Report(R"({"entries": "many", "bytesread": 12, "columns": ["a", 3]})", "r.json", &warnings);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->events(), 0);
  EXPECT_EQ(report->compressed_bytes_read(), 12);
  EXPECT_THAT(report->columns(), ElementsAre("a"));
  EXPECT_THAT(warnings,
              ElementsAre("r.json: 'entries' must be a finite number; the value is left out",
                          "r.json: a column must be a string; the value is left out"));
  // Python's json.dump(report, f) with a NaN.
  report = Report(R"({"bytesread": 12345, "entries": 1000, "processtime": NaN, "chunks": 1})",
                  "r.json", &warnings);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->has_process_time_seconds());
  EXPECT_EQ(report->events(), 1000);
  EXPECT_THAT(warnings, ElementsAre("r.json: 'processtime' is NaN; the value is left out"));
  // 2^63: the double nearest INT64_MAX, which llround cannot hold.
  report = Report(R"({"entries": 9223372036854775808, "bytesread": 5})", "r.json", &warnings);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->has_events());
  EXPECT_EQ(report->compressed_bytes_read(), 5);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("'entries' is out of range"));
}

TEST(ParseChunkRecordsTest, ReadsTheOriginalFormat) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"([{"t_start": 1700000000.25, "t_end": 1700000001.75, "duration": 1.5,
           "mem_before_mb": 100.0, "mem_after_mb": 110.5, "mem_delta_mb": 10.5,
           "bytes_read": 2500, "num_events": 1000, "dataset": "TTbar", "file": "a.root",
           "uuid": "u-1", "entry_start": 0, "entry_stop": 1000,
           "accessed_branches": ["Jet_pt", "Muon_pt"], "accessed_bytes": 1500,
           "timing": {"jets": 0.5}, "memory": {"jets": 2.0}, "bytes": {"jets": 1000},
           "file_metadata": {"filename": "a.root", "compression_ratio": 0.4,
                             "total_branches": 100, "total_tree_bytes": 10000}},
          {"duration": 2.0, "num_events": 10, "dataset": "TTbar", "error": "boom"}])",
      "records.json");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  const v1::ChunkRecord& first = (*records)[0];
  EXPECT_EQ(first.start_unix_ns(), 1700000000250000000);
  EXPECT_EQ(first.end_unix_ns(), 1700000001750000000);
  EXPECT_DOUBLE_EQ(first.duration_seconds(), 1.5);
  EXPECT_EQ(first.memory_before_bytes(), 100 * 1024 * 1024);
  EXPECT_EQ(first.memory_after_bytes(), static_cast<int64_t>(110.5 * 1024 * 1024));
  EXPECT_EQ(first.compressed_bytes_read(), 2500);
  EXPECT_EQ(first.events(), 1000);
  EXPECT_EQ(first.dataset(), "TTbar");
  EXPECT_EQ(first.entry_stop(), 1000);
  EXPECT_EQ(first.status(), v1::CHUNK_STATUS_OK);
  ASSERT_EQ(first.accessed_branches_size(), 2);
  EXPECT_EQ(first.file_metadata().total_branches(), 100);
  EXPECT_DOUBLE_EQ(first.file_metadata().compression_ratio(), 0.4);
  ASSERT_EQ(first.sections_size(), 3);
  EXPECT_EQ(first.sections(0).kind(), v1::SectionRecord::KIND_TIME);
  EXPECT_DOUBLE_EQ(first.sections(0).duration_seconds(), 0.5);
  EXPECT_EQ(first.sections(1).memory_delta_bytes(), 2 * 1024 * 1024);
  EXPECT_EQ(first.sections(2).bytes_read(), 1000);
  EXPECT_EQ((*records)[1].status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ((*records)[1].error_text(), "boom");
}

TEST(ParseChunkRecordsTest, AcceptsTheProcessorOutputObject) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"({"histogram": [1, 2], "__roastcoffea_metrics__": [{"num_events": 3}]})", "out.json");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].events(), 3);
}

TEST(ParseChunkRecordsTest, TaskIdIsAnIntegerOrAString) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records =
      Records(R"([{"task_id": 42}, {"task_id": "process-chunk-8f2a"}, {"num_events": 1}])", "r");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].task_id(), "42");
  EXPECT_EQ((*records)[1].task_id(), "process-chunk-8f2a");
  EXPECT_EQ((*records)[2].task_id(), "");
  std::vector<std::string> warnings;
  records = Records(R"([{"task_id": [1]}])", "r.json", &warnings);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ((*records)[0].task_id(), "");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("r.json: record 0: 'task_id'"));
}

TEST(ParseChunkRecordsTest, DurationFromStartAndEndWhenAbsent) {
  absl::StatusOr<std::vector<v1::ChunkRecord>> records =
      Records(R"([{"t_start": 10.0, "t_end": 12.5}])", "r");
  ASSERT_TRUE(records.ok());
  EXPECT_DOUBLE_EQ((*records)[0].duration_seconds(), 2.5);
}

// A bad value or record loses that value or record with a warning naming the source, the
// Values that cannot be true are left out with a warning naming the record, never kept silently
// (reliability study 2, N12): a time before 1970, a chunk that ends before it starts, and a
// fractional task id (rounded, it would join the record to another task).
TEST(ParseChunkRecordsTest, ImpossibleTimesRangesAndTaskIdsAreLeftOutWithAWarning) {
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"([{"t_start": -5.0, "t_end": 1765000000.5, "num_events": 1},
          {"entry_start": 100, "entry_stop": 50, "num_events": 2},
          {"task_id": 12.5, "num_events": 3},
          {"task_id": 12.0, "entry_start": 0, "entry_stop": 0, "t_start": 0}])",
      "records.json", &warnings);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 4u);
  EXPECT_EQ((*records)[0].start_unix_ns(), 0);
  EXPECT_EQ((*records)[0].end_unix_ns(), 1765000000500000000);
  EXPECT_EQ((*records)[1].entry_start(), 0);
  EXPECT_EQ((*records)[1].entry_stop(), 0);
  EXPECT_EQ((*records)[1].events(), 2);
  EXPECT_EQ((*records)[2].task_id(), "");
  EXPECT_EQ((*records)[3].task_id(), "12");  // an integer written as a float is fine
  ASSERT_EQ(warnings.size(), 3u) << testing::PrintToString(warnings);
  EXPECT_EQ(warnings[0],
            "records.json: record 0: 't_start' = -5 is not a time in seconds since 1970; the "
            "value is left out");
  EXPECT_EQ(warnings[1],
            "records.json: record 1: 'entry_stop' 50 is before 'entry_start' 100; both values are "
            "left out");
  EXPECT_EQ(warnings[2],
            "records.json: record 2: 'task_id' 12.5 is not an integer (a task id is an integer or "
            "a string); the value is left out");
  // The table path reads the same records with the same warnings.
  absl::StatusOr<ChunkTableRead> table = ParseChunkRecordsAsTable(
      R"([{"t_start": -5.0}, {"entry_start": 100, "entry_stop": 50}, {"task_id": 12.5}])",
      "records.json");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->warnings.size(), 3u);
}

// record and the key; only a file that is not a list of records is refused whole.
TEST(ParseChunkRecordsTest, BadValuesAndRecordsAreLeftOutWithAWarning) {
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"([{"num_events": 1}, {"duration": "slow", "num_events": 2}, 3, {"timing": {"x": "fast"}},
          {"t_start": 1e300, "num_events": 5}, {"t_end": -9.3e9}, {"a": tru}])",
      "records.json", &warnings);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 5u);
  EXPECT_EQ((*records)[1].events(), 2);
  EXPECT_EQ((*records)[1].duration_seconds(), 0);
  EXPECT_EQ((*records)[2].sections_size(), 0);
  EXPECT_EQ((*records)[3].events(), 5);
  EXPECT_EQ((*records)[3].start_unix_ns(), 0);
  ASSERT_EQ(warnings.size(), 6u);
  EXPECT_EQ(warnings[0],
            "records.json: record 1: 'duration' must be a finite number; the value is left out");
  EXPECT_EQ(warnings[1], "records.json: record 2 is not an object; the record is left out");
  EXPECT_EQ(warnings[2],
            "records.json: record 3: timing['x'] must be a finite number; the value is left out");
  // Found by the legacy-measurement fuzzer: a time whose nanoseconds overflow int64.
  EXPECT_THAT(warnings[3], HasSubstr("records.json: record 4: 't_start' = 1e+300 is not a time"));
  EXPECT_THAT(warnings[4], HasSubstr("records.json: record 5: 't_end'"));
  EXPECT_THAT(warnings[5], HasSubstr("records.json: record 6: not valid JSON"));
  EXPECT_THAT(warnings[5], HasSubstr("the record is left out"));
  for (const char* not_a_list : {R"({"a": 1})", R"({"__roastcoffea_metrics__": 5})", "7", ""}) {
    records = Records(not_a_list, "records.json");
    ASSERT_FALSE(records.ok()) << not_a_list;
    EXPECT_THAT(std::string(records.status().message()),
                HasSubstr("records.json: chunk records are a JSON list"));
  }
  records = Records(R"([{"a": 1}] x)", "records.json");
  EXPECT_THAT(std::string(records.status().message()),
              HasSubstr("unexpected text after the array"));
}

// Reliability study D2/D19: 1e308 events became INT64_MIN ("events is -9223372036854775808").
// A count or byte number llround cannot hold is left out with a warning naming it.
TEST(ParseChunkRecordsTest, CountsBeyondInt64AreLeftOutNotWrapped) {
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"([{"num_events": 1e308, "entry_start": 9223372036854775808, "entry_stop": 10,
           "bytes_read": -1e19, "mem_before_mb": 1e13, "memory": {"m": 1e300}, "bytes": {"b": 1e19},
           "timing": {"t": 1e300}}])",
      "records.json", &warnings);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  const v1::ChunkRecord& record = (*records)[0];
  EXPECT_EQ(record.events(), 0);
  EXPECT_EQ(record.entry_start(), 0);
  EXPECT_EQ(record.entry_stop(), 10);
  EXPECT_EQ(record.compressed_bytes_read(), 0);
  EXPECT_EQ(record.memory_before_bytes(), 0);  // 1e13 MiB in bytes is beyond int64
  ASSERT_EQ(record.sections_size(), 1);        // the time section only
  EXPECT_EQ(record.sections(0).name(), "t");
  ASSERT_EQ(warnings.size(), 6u);
  EXPECT_EQ(warnings[0],
            "records.json: record 0: 'entry_start' is out of range (9.22337e+18); the value is "
            "left out");
  EXPECT_THAT(warnings[1], HasSubstr("'num_events' is out of range (1e+308)"));
  EXPECT_THAT(warnings[2], HasSubstr("'mem_before_mb' is out of range"));
  EXPECT_THAT(warnings[3], HasSubstr("'bytes_read' is out of range (-1e+19)"));
  EXPECT_THAT(warnings[4], HasSubstr("memory['m'] is out of range"));
  EXPECT_THAT(warnings[5], HasSubstr("bytes['b'] is out of range"));
}

// Counts and bytes are rounded as std::llround rounds (half away from zero), to the last bit:
// the reader's inline rounding against the library's.
TEST(ParseChunkRecordsTest, CountsRoundHalfAwayFromZeroAsLlround) {
  for (const double x : {2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 0.5, -0.5, 1.5,
                         4503599627370495.5, -4503599627370495.5, 9007199254740993.0,
                         9.2233720368547748e18, -9.2233720368547758e18, 1e-300, -0.0}) {
    const std::string number = absl::StrFormat("%.17g", x);
    std::vector<std::string> warnings;
    absl::StatusOr<std::vector<v1::ChunkRecord>> records =
        Records(absl::StrCat(R"([{"bytes_read": )", number, R"(, "bytes": {"b": )", number,
                             R"(}, "file_metadata": {"total_branches": )", number, "}}]"),
                "records.json", &warnings);
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_EQ(records->size(), 1u);
    const v1::ChunkRecord& record = (*records)[0];
    EXPECT_EQ(record.compressed_bytes_read(), std::llround(x)) << number;
    ASSERT_EQ(record.sections_size(), 1) << number;
    EXPECT_EQ(record.sections(0).bytes_read(), std::llround(x)) << number;
    EXPECT_EQ(record.file_metadata().total_branches(), std::llround(x)) << number;
    EXPECT_TRUE(warnings.empty()) << number << ": " << warnings.front();
  }
}

// Reliability study D16: the original's records through Python's json.dump.
TEST(ParseChunkRecordsTest, NanAndInfinityLoseOneValueEach) {
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(
      R"([{"t_start": 1742250330.0, "duration": Infinity, "mem_before_mb": NaN, "num_events": 1000,
           "timing": {"jets": -Infinity, "muons": 0.5}}])",
      "records.json", &warnings);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].events(), 1000);
  EXPECT_EQ((*records)[0].memory_before_bytes(), 0);
  ASSERT_EQ((*records)[0].sections_size(), 1);
  EXPECT_EQ((*records)[0].sections(0).name(), "muons");
  EXPECT_THAT(warnings,
              ElementsAre("records.json: record 0: 'duration' is Infinity; the value is left out",
                          "records.json: record 0: 'mem_before_mb' is NaN; the value is left out",
                          "records.json: record 0: 'jets' is -Infinity; the value is left out"));
}

// Reliability study D7: 20,000-deep lists took 7.8 s; D19: the message says "too deep".
TEST(ParseChunkRecordsTest, DeepNestingIsRefusedQuickly) {
  for (const std::string& deep : {std::string(20000, '[') + std::string(20000, ']'),
                                  "[" + std::string(200, '[') + std::string(200, ']') + "]"}) {
    absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(deep, "records.json");
    ASSERT_FALSE(records.ok());
    EXPECT_THAT(std::string(records.status().message()),
                HasSubstr("records.json: nested too deep"));
  }
  absl::StatusOr<v1::WorkflowReport> report =
      Report("{\"columns\":" + std::string(20000, '[') + std::string(20000, ']') + "}", "r.json");
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("r.json: nested too deep"));
}

TEST(ParseChunkRecordsTest, WarningsAreCappedPerFile) {
  std::string json = "[";
  for (int i = 0; i < 50; ++i) absl::StrAppend(&json, i > 0 ? "," : "", R"({"duration": "x"})");
  json += "]";
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(json, "r.json", &warnings);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 50u);
  ASSERT_EQ(warnings.size(), static_cast<size_t>(kMaxWarningsPerFile) + 1);
  EXPECT_EQ(warnings.back(), "r.json: 30 more problems like these");
}

TEST(ParseChunkRecordsTest, SectionsBeyondTheBudgetAreMergedIntoOverflowWithAWarning) {
  // kMaxSectionsPerChunkRecord + 500 timing entries of 0.25 s (exact in binary), then a memory
  // and a bytes entry: the first kMaxSectionsPerChunkRecord are kept by name, the rest merged.
  const int extra = 500;
  std::string timing;
  for (int i = 0; i < kMaxSectionsPerChunkRecord + extra; ++i) {
    absl::StrAppend(&timing, i > 0 ? "," : "", "\"s", i, "\": 0.25");
  }
  const std::string json = absl::StrCat(
      R"([{"num_events": 1, "file": "big.root", "entry_start": 0, "entry_stop": 10, "timing": {)",
      timing, R"(}, "memory": {"m": 2.0}, "bytes": {"b": 1000}}, {"timing": {"jets": 1.0}}])");
  std::vector<std::string> warnings;
  absl::StatusOr<std::vector<v1::ChunkRecord>> records = Records(json, "sections.json", &warnings);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  const v1::ChunkRecord& big = (*records)[0];
  ASSERT_EQ(big.sections_size(), kMaxSectionsPerChunkRecord + 3);
  EXPECT_EQ(big.sections(kMaxSectionsPerChunkRecord - 1).name(),
            absl::StrCat("s", kMaxSectionsPerChunkRecord - 1));
  double total_seconds = 0;
  int64_t total_entries = 0;
  for (const v1::SectionRecord& section : big.sections()) {
    if (section.kind() != v1::SectionRecord::KIND_TIME) continue;
    total_seconds += section.duration_seconds();
    total_entries += section.entries();
  }
  // Every entry is counted once and the time sums exactly (0.25 s each).
  EXPECT_EQ(total_entries, kMaxSectionsPerChunkRecord + extra);
  EXPECT_EQ(total_seconds, 0.25 * (kMaxSectionsPerChunkRecord + extra));
  const v1::SectionRecord& time_overflow = big.sections(kMaxSectionsPerChunkRecord);
  EXPECT_EQ(time_overflow.name(), kOverflowSectionRecordName);
  EXPECT_EQ(time_overflow.kind(), v1::SectionRecord::KIND_TIME);
  EXPECT_EQ(time_overflow.entries(), extra);
  EXPECT_EQ(time_overflow.duration_seconds(), 0.25 * extra);
  const v1::SectionRecord& memory_overflow = big.sections(kMaxSectionsPerChunkRecord + 1);
  EXPECT_EQ(memory_overflow.kind(), v1::SectionRecord::KIND_MEMORY);
  EXPECT_EQ(memory_overflow.entries(), 1);
  EXPECT_EQ(memory_overflow.memory_delta_bytes(), 2 * 1024 * 1024);
  const v1::SectionRecord& bytes_overflow = big.sections(kMaxSectionsPerChunkRecord + 2);
  EXPECT_EQ(bytes_overflow.kind(), v1::SectionRecord::KIND_BYTES);
  EXPECT_EQ(bytes_overflow.bytes_read(), 1000);
  // The next record is unaffected.
  ASSERT_EQ((*records)[1].sections_size(), 1);
  EXPECT_EQ((*records)[1].sections(0).name(), "jets");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            absl::StrCat("sections.json: record 0 (file 'big.root', entries 0-10): ", extra + 2,
                         " sections beyond the ", kMaxSectionsPerChunkRecord,
                         " a record keeps were merged into '(overflow)' (one per "
                         "kind: their count and the sum of their values)"));
}

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

TEST(ReadFilesTest, MissingFileIsNotFound) {
  const std::string path = TempPath("absent.json");
  EXPECT_EQ(ReadCoffeaReport(path).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadChunkRecords(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadFilesTest, ReadsFromDisk) {
  const std::string path = TempPath("report.json");
  std::ofstream(path) << R"({"entries": 7, "bytesread": 9})";
  absl::StatusOr<CoffeaReportRead> read = ReadCoffeaReport(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->report.events(), 7);
}

// Reliability study D3 and D4: the command made them a directory, /dev/zero or a FIFO. An error
// naming the file (collect warns and goes on), never a crash, a hang or unbounded memory.
TEST(ReadFilesTest, DirectoriesDevicesAndFifosAreRefused) {
  const std::string dir = TempPath("dir.json");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string fifo = TempPath("fifo.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string zero = TempPath("zero.json");
  ASSERT_EQ(symlink("/dev/zero", zero.c_str()), 0);
  for (const std::string& path : {dir, fifo, zero}) {
    const absl::Status report = ReadCoffeaReport(path).status();
    const absl::Status records = ReadChunkRecords(path).status();
    EXPECT_EQ(report.code(), absl::StatusCode::kFailedPrecondition) << report;
    EXPECT_THAT(std::string(report.message()), HasSubstr(path));
    EXPECT_THAT(std::string(records.message()), HasSubstr("not a regular file"));
  }
}

// The file is read in pieces (of 1 MiB; here a few bytes, so that records straddle them): the
// records, warnings and errors are those of the same text in memory, byte offsets included.
TEST(ReadFilesTest, ReadingInPiecesGivesWhatTheTextGives) {
  const std::string path = TempPath("pieces.json");
  for (const std::string& json :
       {std::string(R"( [{"num_events": 1, "dataset": "a\"]"}, {"duration": "x"}, 7 ,
                      {"t_start": NaN, "timing": {"j": 0.5}}, {"a": tru}, {"b": 1, "b": 2}] )"),
        std::string(R"({"other": [1, 2], "__roastcoffea_metrics__": [{"num_events": 3}]})"),
        std::string(R"([{"num_events": 1}, {"num_events": 2}] x)"),
        std::string(R"([{"num_events": 1} {"num_events": 2}])"), std::string(R"([{"a": 1},)"),
        std::string(R"([{"a": "unterminated)"), std::string(R"([{"a": [1, 2)"),
        std::string(R"([1, 2] [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[)"),
        "[" + std::string(40, '[') + std::string(40, ']') + "]", std::string("[]"),
        std::string("[3"), std::string("\xEF\xBB\xBF[{\"a\": 1}, {\"b\": [")}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << json;
    const absl::StatusOr<ChunkRecordsRead> in_memory = ParseChunkRecords(json, path);
    for (size_t piece : {1, 2, 3, 7, 64}) {
      ChunkRecordsOptions options;
      options.piece_bytes = piece;
      const absl::StatusOr<ChunkRecordsRead> from_file = ReadChunkRecords(path, options);
      ASSERT_EQ(in_memory.ok(), from_file.ok()) << json << " " << from_file.status();
      if (!in_memory.ok()) {
        EXPECT_EQ(in_memory.status(), from_file.status()) << json;
        EXPECT_EQ(in_memory.status(), ReadChunkRecordsAsTable(path, options).status()) << json;
        continue;
      }
      EXPECT_EQ(in_memory->warnings, from_file->warnings) << json;
      ASSERT_EQ(in_memory->records.size(), from_file->records.size()) << json;
      for (size_t i = 0; i < in_memory->records.size(); ++i) {
        EXPECT_EQ(in_memory->records[i].SerializeAsString(),
                  from_file->records[i].SerializeAsString());
      }
      // Into a table, from the file in pieces: the same.
      const absl::StatusOr<ChunkTableRead> table = ReadChunkRecordsAsTable(path, options);
      ASSERT_TRUE(table.ok()) << json << " " << table.status();
      EXPECT_EQ(in_memory->warnings, table->warnings) << json;
      ASSERT_EQ(in_memory->records.size(), table->table.size()) << json;
      for (size_t i = 0; i < in_memory->records.size(); ++i) {
        EXPECT_EQ(in_memory->records[i].SerializeAsString(),
                  table->table.Record(i).SerializeAsString());
      }
    }
  }
}

// A records file cut short (the command killed while writing it) keeps every complete record
// before the cut, with one warning naming the file, the byte offset and the count kept: in
// memory and from a file (in pieces), as records and as a table.
TEST(ParseChunkRecordsTest, AFileCutShortKeepsTheCompleteRecordsBeforeTheCut) {
  const std::string whole = R"([{"num_events": 1}, {"num_events": 2, "dataset": "d"}, )";
  const std::string path = TempPath("cut.json");
  // Cut inside a record, inside a string, after a comma, after a record.
  for (const std::string& json :
       {whole + R"({"num_events": 3, "timing": {"a": 0.5)", whole + R"({"dataset": "ab)", whole,
        whole.substr(0, whole.rfind(','))}) {
    const size_t at = json.size() > whole.size() ? whole.size() : json.size();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << json;
    const std::string expected =
        absl::StrCat(path, ": the file ends inside the list of records at byte ", at,
                     " (cut short: the command was killed while writing it?); the 2 complete "
                     "records before are kept, the rest is lost");
    const absl::StatusOr<ChunkRecordsRead> parsed = ParseChunkRecords(json, path);
    ASSERT_TRUE(parsed.ok()) << json << " " << parsed.status();
    EXPECT_THAT(parsed->warnings, ElementsAre(expected)) << json;
    ASSERT_EQ(parsed->records.size(), 2u) << json;
    EXPECT_EQ(parsed->records[1].events(), 2);
    EXPECT_EQ(parsed->records[1].dataset(), "d");
    const absl::StatusOr<ChunkTableRead> table = ParseChunkRecordsAsTable(json, path);
    ASSERT_TRUE(table.ok()) << json << " " << table.status();
    EXPECT_THAT(table->warnings, ElementsAre(expected)) << json;
    EXPECT_EQ(table->table.size(), 2u) << json;
    for (size_t piece : {size_t{1}, size_t{5}, size_t{1} << 20}) {
      ChunkRecordsOptions options;
      options.piece_bytes = piece;
      const absl::StatusOr<ChunkRecordsRead> read = ReadChunkRecords(path, options);
      ASSERT_TRUE(read.ok()) << json << " " << read.status();
      EXPECT_THAT(read->warnings, ElementsAre(expected)) << json;
      EXPECT_EQ(read->records.size(), 2u) << json;
      const absl::StatusOr<ChunkTableRead> read_table = ReadChunkRecordsAsTable(path, options);
      ASSERT_TRUE(read_table.ok()) << json << " " << read_table.status();
      EXPECT_THAT(read_table->warnings, ElementsAre(expected)) << json;
      EXPECT_EQ(read_table->table.size(), 2u) << json;
    }
  }
  // Nothing complete: none kept, still a warning (not an error).
  const absl::StatusOr<ChunkRecordsRead> none = ParseChunkRecords(R"([{"num_eve)", "r.json");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->records.empty());
  EXPECT_THAT(none->warnings, ElementsAre(HasSubstr("at byte 1 (cut short")));
  // Broken in the middle, not at the end: still an error.
  EXPECT_FALSE(ParseChunkRecords(R"([{"a": 1} {"a": 2}])", "r.json").ok());
  EXPECT_FALSE(ParseChunkRecordsAsTable(R"([{"a": 1}, {"a": 2}] x)", "r.json").ok());
}

// A UTF-8 byte order mark (Windows editors write one) is skipped with a warning: the records
// are read, in memory and from a file, as records and as a table, list or output object.
TEST(ParseChunkRecordsTest, AByteOrderMarkIsSkippedWithAWarning) {
  const std::string path = TempPath("bom.json");
  for (const std::string& json :
       {std::string("\xEF\xBB\xBF [{\"num_events\": 4}]"),
        std::string("\xEF\xBB\xBF{\"__roastcoffea_metrics__\": [{\"num_events\": 4}]}")}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << json;
    const std::string expected = absl::StrCat(
        path, ": starts with a UTF-8 byte order mark, which JSON does not allow; it is skipped");
    const absl::StatusOr<ChunkRecordsRead> parsed = ParseChunkRecords(json, path);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_THAT(parsed->warnings, ElementsAre(expected));
    ASSERT_EQ(parsed->records.size(), 1u);
    EXPECT_EQ(parsed->records[0].events(), 4);
    const absl::StatusOr<ChunkTableRead> table = ParseChunkRecordsAsTable(json, path);
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_THAT(table->warnings, ElementsAre(expected));
    EXPECT_EQ(table->table.size(), 1u);
    for (size_t piece : {size_t{1}, size_t{2}, size_t{1} << 20}) {
      ChunkRecordsOptions options;
      options.piece_bytes = piece;
      const absl::StatusOr<ChunkRecordsRead> read = ReadChunkRecords(path, options);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_THAT(read->warnings, ElementsAre(expected));
      ASSERT_EQ(read->records.size(), 1u);
      EXPECT_EQ(read->records[0].events(), 4);
      const absl::StatusOr<ChunkTableRead> read_table = ReadChunkRecordsAsTable(path, options);
      ASSERT_TRUE(read_table.ok()) << read_table.status();
      EXPECT_THAT(read_table->warnings, ElementsAre(expected));
      EXPECT_EQ(read_table->table.size(), 1u);
    }
  }
}

// ChunkRecordsOptions::cancelled (collect's interruption) stops the read: the records read so
// far are kept, and a warning says where it stopped.
TEST(ParseChunkRecordsTest, CancellationKeepsTheRecordsReadSoFar) {
  std::string json = "[";
  const int count = 3 * kRecordsPerCancellationCheck;
  for (int i = 0; i < count; ++i) absl::StrAppend(&json, i > 0 ? "," : "", R"({"num_events": 1})");
  json += "]";
  int asked = 0;
  ChunkRecordsOptions options;
  options.cancelled = [&asked] { return ++asked == 2; };
  absl::StatusOr<ChunkRecordsRead> read = ParseChunkRecords(json, "r.json", options);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->cancelled);
  EXPECT_EQ(read->records.size(), static_cast<size_t>(2 * kRecordsPerCancellationCheck));
  EXPECT_THAT(read->warnings,
              ElementsAre(absl::StrCat("r.json: reading stopped by an interruption after ",
                                       2 * kRecordsPerCancellationCheck,
                                       " records; the rest are left out")));
  // From a file, also between reads of it: nothing is read once cancelled.
  const std::string path = TempPath("cancelled.json");
  std::ofstream(path) << json;
  options.cancelled = [] { return true; };
  read = ReadChunkRecords(path, options);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->cancelled);
  EXPECT_TRUE(read->records.empty());
  // Into a table: stopped the same way.
  absl::StatusOr<ChunkTableRead> table = ReadChunkRecordsAsTable(path, options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->cancelled);
  EXPECT_TRUE(table->table.empty());
  asked = 0;
  options.cancelled = [&asked] { return ++asked == 2; };
  table = ParseChunkRecordsAsTable(json, "r.json", options);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE(table->cancelled);
  EXPECT_EQ(table->table.size(), static_cast<size_t>(2 * kRecordsPerCancellationCheck));
  // Never cancelled: everything.
  options.cancelled = [] { return false; };
  read = ReadChunkRecords(path, options);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->cancelled);
  EXPECT_EQ(read->records.size(), static_cast<size_t>(count));
}

}  // namespace
}  // namespace roastcoffea
