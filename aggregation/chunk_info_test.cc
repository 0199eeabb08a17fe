#include "aggregation/chunk_info.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

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

google::protobuf::RepeatedPtrField<v1::ChunkInfo> Build(std::vector<v1::ChunkRecord> records) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks(records.begin(), records.end());
  google::protobuf::RepeatedPtrField<v1::ChunkInfo> info;
  BuildChunkInfo(chunks, &info);
  return info;
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

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
