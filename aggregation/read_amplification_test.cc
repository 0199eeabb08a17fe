#include "aggregation/read_amplification.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

void Add(google::protobuf::RepeatedPtrField<v1::ChunkRecord>& chunks, const std::string& file,
         int64_t start, int64_t stop, int64_t bytes, int64_t file_bytes = 0) {
  v1::ChunkRecord& chunk = *chunks.Add();
  chunk.set_file(file);
  chunk.set_entry_start(start);
  chunk.set_entry_stop(stop);
  chunk.set_compressed_bytes_read(bytes);
  if (file_bytes > 0) chunk.set_file_bytes(file_bytes);
}

TEST(ReadAmplificationTest, SmallChunksReadingAFileFourTimesOver) {
  // Ten chunks of one 1000-byte file, each reading 400 bytes (whole compressed blocks).
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  for (int k = 0; k < 10; ++k) Add(chunks, "a.root", 100 * k, 100 * (k + 1), 400, 1000);
  const auto read = ComputeReadAmplification(chunks);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->bytes_read, 4000);
  EXPECT_EQ(read->distinct_bytes, 1000);
  EXPECT_DOUBLE_EQ(read->ratio, 4.0);
  EXPECT_EQ(read->files_with_size, 1);
}

TEST(ReadAmplificationTest, FileMetadataGivesTheSizeToo) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  Add(chunks, "a.root", 0, 100, 300);
  chunks.Mutable(0)->mutable_file_metadata()->set_total_tree_bytes(200);
  EXPECT_DOUBLE_EQ(ComputeReadAmplification(chunks)->ratio, 1.5);
}

TEST(ReadAmplificationTest, WithoutSizesOverlappingRangesAreTheEvidence) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  // [0, 100) twice and [100, 200) once: 300 entries summed, 200 covered; 600 bytes read.
  Add(chunks, "a.root", 0, 100, 200);
  Add(chunks, "a.root", 0, 100, 200);
  Add(chunks, "a.root", 100, 200, 200);
  // A file read once: 500 bytes, its own distinct bytes.
  Add(chunks, "b.root", 0, 100, 500);
  const auto read = ComputeReadAmplification(chunks);
  ASSERT_TRUE(read.has_value());
  // a: 600 x 200 / 300 = 400 distinct; b: 500. (600 + 500) / (400 + 500).
  EXPECT_EQ(read->distinct_bytes, 900);
  EXPECT_DOUBLE_EQ(read->ratio, 1100.0 / 900.0);
  EXPECT_EQ(read->files_with_size, 0);
  EXPECT_EQ(read->files, 2);
}

TEST(ReadAmplificationTest, NothingReadIsUnknown) {
  google::protobuf::RepeatedPtrField<v1::ChunkRecord> chunks;
  EXPECT_FALSE(ComputeReadAmplification(chunks).has_value());
  Add(chunks, "", 0, 100, 500);  // no file
  Add(chunks, "a.root", 0, 100, 0, 1000);
  EXPECT_FALSE(ComputeReadAmplification(chunks).has_value());
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
