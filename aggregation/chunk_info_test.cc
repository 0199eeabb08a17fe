#include "aggregation/chunk_info.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "schema/chunk_info_rows.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

v1::ChunkRecord Record(const std::string& file, int64_t start, int64_t end, int64_t entry_start,
                       uint32_t attempt = 0) {
  v1::ChunkRecord r;
  r.set_file(file);
  r.set_start_unix_ns(start);
  r.set_end_unix_ns(end);
  r.set_entry_start(entry_start);
  r.set_entry_stop(entry_start + 100);
  r.set_attempt(attempt);
  return r;
}

// The rows of `columns` as the messages of old measurements.
google::protobuf::RepeatedPtrField<v1::ChunkInfo> Messages(const v1::ChunkInfoColumns& columns) {
  v1::ChunkMetrics metrics;
  *metrics.mutable_chunk_info_columns() = columns;
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> info;
  ForEachChunkInfo(metrics, [&](const ChunkInfoRow& row) {
    v1::ChunkInfo* entry = info.Add();
    entry->set_file(std::string(row.file));
    entry->set_entry_start(row.entry_start);
    entry->set_entry_stop(row.entry_stop);
    entry->set_attempt(row.attempt);
    entry->set_start_unix_ns(row.start_unix_ns);
    entry->set_end_unix_ns(row.end_unix_ns);
    entry->set_bytes_read(row.bytes_read);
  });
  EXPECT_EQ(info.size(), columns.file_index_size()) << "every row is sound";
  return info;
}

v1::ChunkInfoColumns BuildColumns(std::vector<v1::ChunkRecord> records) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(records.begin(), records.end());
  v1::ChunkInfoColumns columns;
  BuildChunkInfo(chunks, &columns);
  return columns;
}

google::protobuf::RepeatedPtrField<v1::ChunkInfo> Build(std::vector<v1::ChunkRecord> records) {
  return Messages(BuildColumns(std::move(records)));
}

TEST(ChunkInfoTest, MapsRecordsAndDefaultsBytesToZero) {
  v1::ChunkRecord with_bytes = Record("a.root", 10, 20, 0);
  with_bytes.set_compressed_bytes_read(2500);
  const auto info = Build({with_bytes, Record("b.root", 5, 7, 100)});
  ASSERT_EQ(info.size(), 2);
  EXPECT_EQ(info[0].file(), "b.root");  // sorted by time
  EXPECT_EQ(info[0].bytes_read(), 0);
  EXPECT_EQ(info[1].file(), "a.root");
  EXPECT_EQ(info[1].start_unix_ns(), 10);
  EXPECT_EQ(info[1].end_unix_ns(), 20);
  EXPECT_EQ(info[1].entry_stop(), 100);
  EXPECT_EQ(info[1].bytes_read(), 2500);
}

TEST(ChunkInfoTest, FilesAreListedOnceInTheOrderOfTheirFirstRow) {
  const v1::ChunkInfoColumns columns = BuildColumns(
      {Record("a.root", 30, 40, 0), Record("b.root", 10, 20, 0), Record("c.root", 1, 0, 0),
       Record("a.root", 5, 6, 0), Record("b.root", 50, 60, 0)});
  // Rows by time: a (5), b (10), a (30), b (50); c has no end and no row.
  EXPECT_EQ(std::vector<std::string>(columns.files().begin(), columns.files().end()),
            (std::vector<std::string>{"a.root", "b.root"}));
  EXPECT_EQ(std::vector<uint32_t>(columns.file_index().begin(), columns.file_index().end()),
            (std::vector<uint32_t>{0, 1, 0, 1}));
  EXPECT_EQ(columns.start_unix_ns_size(), 4);
  EXPECT_EQ(columns.bytes_read_size(), 4);
}

TEST(ChunkInfoTest, BuildingReplacesWhatTheColumnsHeld) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  *chunks.Add() = Record("b.root", 10, 20, 0);
  v1::ChunkInfoColumns columns = BuildColumns({Record("a.root", 1, 2, 0)});
  BuildChunkInfo(chunks, &columns);
  ASSERT_EQ(columns.files_size(), 1);
  EXPECT_EQ(columns.files(0), "b.root");
  EXPECT_EQ(columns.entry_start_size(), 1);
}

TEST(ChunkInfoTest, SkipsRecordsWithoutFileOrTimesAndEmptyInput) {
  EXPECT_EQ(Build({}).size(), 0);
  EXPECT_EQ(Build({Record("", 1, 2, 0), Record("a.root", 1, 0, 0)}).size(), 0);
}

TEST(ChunkInfoTest, DuplicatesAndRetriesAreKept) {
  // The original keeps only the last of two records with the same (file, start, stop).
  const auto info = Build({Record("a.root", 30, 40, 0, 1), Record("a.root", 10, 20, 0, 0)});
  ASSERT_EQ(info.size(), 2);
  EXPECT_EQ(info[0].attempt(), 0u);
  EXPECT_EQ(info[1].attempt(), 1u);
}

// The radix sort by start with ties broken by the whole key (file name last) gives the order of
// a plain sort by (start, end, entry_start, entry_stop, attempt, file): records shuffled, many
// starting in the same nanosecond, and file names whose order differs from their first
// appearance (so that file ids, numbered by appearance, could not stand for names).
TEST(ChunkInfoTest, OrderIsAPlainSortByTheWholeKey) {
  std::mt19937_64 rng(3);
  std::vector<v1::ChunkRecord> records;
  const int64_t base = int64_t{1'765'000'000} * 1'000'000'000;
  for (int i = 0; i < 5000; ++i) {
    // "z..." files appear first; starts spread over ~2^42 ns with many equal ones.
    const std::string file = std::string(1, static_cast<char>('z' - rng() % 5)) + ".root";
    const int64_t start = base + static_cast<int64_t>(rng() % 40) * (int64_t{1} << 36) +
                          static_cast<int64_t>(rng() % 3);
    records.push_back(Record(file, start, start + static_cast<int64_t>(rng() % 2),
                             static_cast<int64_t>(rng() % 2) * 100,
                             static_cast<uint32_t>(rng() % 2)));
  }
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, uint32_t, std::string>;
  std::vector<Key> expected;
  for (const v1::ChunkRecord& r : records) {
    expected.emplace_back(r.start_unix_ns(), r.end_unix_ns(), r.entry_start(), r.entry_stop(),
                          r.attempt(), r.file());
  }
  std::sort(expected.begin(), expected.end());
  const auto info = Build(records);
  ASSERT_EQ(info.size(), static_cast<int>(expected.size()));
  for (int i = 0; i < info.size(); ++i) {
    const Key got{info[i].start_unix_ns(), info[i].end_unix_ns(), info[i].entry_start(),
                  info[i].entry_stop(),    info[i].attempt(),     info[i].file()};
    ASSERT_EQ(got, expected[static_cast<size_t>(i)]) << "at " << i;
  }
}

TEST(ChunkInfoTest, NegativeAndExtremeStartsSortToo) {
  const auto info = Build({Record("a.root", INT64_MAX - 5, INT64_MAX, 0),
                           Record("b.root", -50, 10, 0), Record("c.root", 7, 9, 0)});
  ASSERT_EQ(info.size(), 3);
  EXPECT_EQ(info[0].file(), "b.root");
  EXPECT_EQ(info[1].file(), "c.root");
  EXPECT_EQ(info[2].file(), "a.root");
}

std::vector<std::string> Files(const google::protobuf::RepeatedPtrField<v1::ChunkInfo>& info) {
  std::vector<std::string> out;
  for (const v1::ChunkInfo& i : info) {
    out.push_back(absl::StrCat(i.start_unix_ns(), " ", i.end_unix_ns(), " ", i.entry_start(), " ",
                               i.attempt(), " ", i.file(), " ", i.bytes_read()));
  }
  return out;
}

// Records already in chunk_info's order (ties on start broken by end, entries, attempt and file
// name; records without file or end in between) are listed by index, and give the messages the
// sorted path gives for the same records shuffled, whole or made in parts.
TEST(ChunkInfoTest, RecordsInOrderAreListedByIndexWithTheSameMessages) {
  std::vector<v1::ChunkRecord> records;
  for (int i = 0; i < 3000; ++i) {
    const int64_t start = 1000 + i / 4;  // four records a nanosecond
    // (a, 0), (b, 0), (a, 100), (b, 100): equal but for the entry range or the file name.
    records.push_back(Record(i % 2 == 0 ? "a.root" : "b.root", start, start + 5, i % 4 / 2 * 100));
    records.back().set_compressed_bytes_read(i);
    if (i % 7 == 0) records.push_back(Record("", start, start + 1, 0));  // no file: skipped
    if (i % 11 == 0) records.push_back(Record("c.root", start, 0, 0));   // no end: skipped
  }
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(records.begin(), records.end());
  BranchCoverageAccumulator branches;
  SectionAccumulator sections;
  absl::StatusOr<ChunkColumns> in_order = BuildChunkColumns(chunks, &branches, &sections);
  ASSERT_TRUE(in_order.ok()) << in_order.status();
  const ChunkInfoOrdering by_index = ChunkInfoOrder(*in_order);
  ASSERT_EQ(by_index.size(), 3000u);
  EXPECT_TRUE(std::is_sorted(by_index.records.begin(), by_index.records.end()));

  std::vector<v1::ChunkRecord> shuffled = records;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(5));
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> shuffled_chunks(shuffled.begin(),
                                                                      shuffled.end());
  absl::StatusOr<ChunkColumns> out_of_order =
      BuildChunkColumns(shuffled_chunks, &branches, &sections);
  ASSERT_TRUE(out_of_order.ok()) << out_of_order.status();
  const ChunkInfoOrdering by_key = ChunkInfoOrder(*out_of_order);
  ASSERT_EQ(by_key.size(), 3000u);
  // The start order made beforehand (as Aggregate hands it) gives the same order.
  EXPECT_EQ(ChunkInfoOrder(*out_of_order, OrderByStart(*out_of_order)).records, by_key.records);

  v1::ChunkInfoColumns whole_by_index, whole_by_key, parts;
  StartChunkInfoColumns(*in_order, by_index, &whole_by_index);
  FillChunkInfoColumns(*in_order, by_index, 0, by_index.size(), &whole_by_index);
  StartChunkInfoColumns(*out_of_order, by_key, &whole_by_key);
  FillChunkInfoColumns(*out_of_order, by_key, 0, by_key.size(), &whole_by_key);
  StartChunkInfoColumns(*in_order, by_index, &parts);
  FillChunkInfoColumns(*in_order, by_index, 1234, by_index.size(), &parts);
  FillChunkInfoColumns(*in_order, by_index, 0, 1234, &parts);
  EXPECT_EQ(Files(Messages(whole_by_index)), Files(Messages(whole_by_key)));
  // The same columns, files and their indices included, whatever the records' order.
  EXPECT_EQ(whole_by_index.SerializeAsString(), whole_by_key.SerializeAsString());
  EXPECT_EQ(parts.SerializeAsString(), whole_by_key.SerializeAsString());
  EXPECT_EQ(Files(Build(records)), Files(Messages(whole_by_key)));

  // In order but for the last record: sorted by key.
  std::vector<v1::ChunkRecord> last_early = records;
  last_early.push_back(Record("a.root", 999, 1000, 0));
  const auto info = Build(last_early);
  ASSERT_EQ(info.size(), 3001);
  EXPECT_EQ(info[0].start_unix_ns(), 999);
  EXPECT_EQ(Files(info).back(), Files(Messages(whole_by_key)).back());
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
