#include "aggregation/section_stats.h"

#include <string>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace aggregation_internal {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

v1::SectionRecord Timer(const std::string& name, double seconds, uint32_t entries = 1) {
  v1::SectionRecord s;
  s.set_name(name);
  s.set_kind(v1::SectionRecord::KIND_TIME);
  s.set_entries(entries);
  s.set_duration_seconds(seconds);
  return s;
}

v1::SectionRecord Memory(const std::string& name, int64_t delta, double seconds) {
  v1::SectionRecord s;
  s.set_name(name);
  s.set_kind(v1::SectionRecord::KIND_MEMORY);
  s.set_entries(1);
  s.set_memory_delta_bytes(delta);
  s.set_duration_seconds(seconds);
  return s;
}

void AddChunk(SectionAccumulator& acc, std::initializer_list<v1::SectionRecord> records) {
  google::protobuf::RepeatedPtrField<v1::SectionRecord> sections(records.begin(), records.end());
  acc.AddChunk(sections);
}

TEST(SectionStatsTest, RepeatedSectionsAcrossChunks) {
  // docs/reference.md §4: repeated sections 0.3/0.5/0.4 -> count 3, total 1.2, mean 0.4.
  SectionAccumulator acc;
  AddChunk(acc, {Timer("jets", 0.3)});
  AddChunk(acc, {Timer("jets", 0.5)});
  AddChunk(acc, {Timer("jets", 0.4)});
  v1::ChunkMetrics m;
  acc.Finish(/*total_chunk_seconds=*/2.4, &m);
  ASSERT_EQ(m.sections_size(), 1);
  EXPECT_EQ(m.sections(0).name(), "jets");
  EXPECT_EQ(m.sections(0).type(), "time");
  EXPECT_EQ(m.sections(0).count(), 3);
  EXPECT_DOUBLE_EQ(m.sections(0).total_duration_seconds(), 1.2);
  EXPECT_DOUBLE_EQ(m.sections(0).mean_duration_seconds(), 0.4);
  ASSERT_EQ(m.section_stats_size(), 1);
  const v1::SectionStats& stats = m.section_stats(0);
  EXPECT_EQ(stats.values().count(), 3);
  EXPECT_DOUBLE_EQ(stats.total(), 1.2);
  EXPECT_DOUBLE_EQ(stats.values().max(), 0.5);
  EXPECT_DOUBLE_EQ(stats.values().percentiles().p50(), 0.4);
  EXPECT_DOUBLE_EQ(stats.values().percentiles().p99(), 0.4 + 0.98 * 0.1);
  EXPECT_DOUBLE_EQ(stats.share_of_chunk_time_fraction(), 0.5);
}

TEST(SectionStatsTest, SectionRepeatedWithinOneChunkArrivesSummed) {
  // The same 0.3 + 0.5 + 0.4 inside one chunk: one record with entries 3.
  SectionAccumulator acc;
  AddChunk(acc, {Timer("jets", 1.2, 3)});
  v1::ChunkMetrics m;
  acc.Finish(0, &m);
  EXPECT_EQ(m.sections(0).count(), 3);
  EXPECT_DOUBLE_EQ(m.sections(0).total_duration_seconds(), 1.2);
  EXPECT_DOUBLE_EQ(m.sections(0).mean_duration_seconds(), 0.4);
  EXPECT_EQ(m.section_stats(0).entries(), 3);
  EXPECT_EQ(m.section_stats(0).values().count(), 1);                  // one chunk
  EXPECT_EQ(m.section_stats(0).share_of_chunk_time_fraction(), 0.0);  // no chunk time
}

TEST(SectionStatsTest, MemorySectionsGolden) {
  // docs/reference.md §4: memory sections 100/200 MB with durations 0.3/0.4 -> mean 150, min 100,
  // max 200, mean duration 0.35.
  SectionAccumulator acc;
  AddChunk(acc, {Memory("load", 100 * kMiB, 0.3)});
  AddChunk(acc, {Memory("load", 200 * kMiB, 0.4)});
  v1::ChunkMetrics m;
  acc.Finish(1, &m);
  const v1::SectionSummary& s = m.sections(0);
  EXPECT_EQ(s.type(), "memory");
  EXPECT_DOUBLE_EQ(s.mean_memory_delta_bytes(), 150.0 * kMiB);
  EXPECT_DOUBLE_EQ(s.min_memory_delta_bytes(), 100.0 * kMiB);
  EXPECT_DOUBLE_EQ(s.max_memory_delta_bytes(), 200.0 * kMiB);
  EXPECT_DOUBLE_EQ(s.mean_duration_seconds(), 0.35);
  EXPECT_DOUBLE_EQ(m.section_stats(0).values().mean(), 150.0 * kMiB);
}

TEST(SectionStatsTest, KindsAndNamesAreSeparateAndSorted) {
  SectionAccumulator acc;
  v1::SectionRecord bytes;
  bytes.set_name("read");
  bytes.set_kind(v1::SectionRecord::KIND_BYTES);
  bytes.set_bytes_read(500);
  AddChunk(acc, {Timer("b", 1), bytes, Timer("a", 2)});
  // Different order in the next chunk: interning must not depend on position.
  bytes.set_bytes_read(1500);
  AddChunk(acc, {Timer("a", 4), bytes, Timer("b", 3)});
  v1::ChunkMetrics m;
  acc.Finish(10, &m);
  ASSERT_EQ(m.section_stats_size(), 3);
  EXPECT_EQ(m.section_stats(0).name(), "a");
  EXPECT_DOUBLE_EQ(m.section_stats(0).total(), 6);
  EXPECT_EQ(m.section_stats(1).name(), "b");
  EXPECT_DOUBLE_EQ(m.section_stats(1).total(), 4);
  EXPECT_EQ(m.section_stats(2).name(), "read");
  EXPECT_EQ(m.section_stats(2).kind(), v1::SectionRecord::KIND_BYTES);
  EXPECT_DOUBLE_EQ(m.section_stats(2).total(), 2000);
  EXPECT_DOUBLE_EQ(m.section_stats(2).values().percentiles().p50(), 1000);
  EXPECT_EQ(m.sections(2).type(), "bytes");
}

}  // namespace
}  // namespace aggregation_internal
}  // namespace roastcoffea
