#include "aggregation/chunk_info.h"

#include <string>

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

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
