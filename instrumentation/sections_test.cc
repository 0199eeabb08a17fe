#include "instrumentation/sections.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The section of `record` with this name and kind, or null.
const v1::SectionRecord* FindSection(const v1::ChunkRecord& record, const std::string& name,
                                     v1::SectionRecord::Kind kind) {
  for (const v1::SectionRecord& section : record.sections()) {
    if (section.name() == name && section.kind() == kind) return &section;
  }
  return nullptr;
}

std::vector<std::string> SectionNames(const v1::ChunkRecord& record) {
  std::vector<std::string> names;
  for (const v1::SectionRecord& section : record.sections()) names.push_back(section.name());
  return names;
}

void BusyCpu(int64_t nanoseconds) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) <
           nanoseconds);
}

TEST(SectionsTest, ScopesOutsideAChunkRecordNothing) {
  {
    ScopedTimer timer("outside_timer");
    ScopedMemory memory("outside_memory");
    ScopedBytes bytes("outside_bytes");
    RecordBytesRead(100, 200);
  }
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {});
  EXPECT_THAT(record.sections(), IsEmpty());
  // Bytes recorded before the chunk are not the chunk's.
  EXPECT_EQ(record.compressed_bytes_read(), 0);
  EXPECT_EQ(record.uncompressed_bytes_read(), 0);
}

TEST(SectionsTest, TimerRecordsWallAndCpuTime) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer timer("busy");
    BusyCpu(20'000'000);
  });
  const v1::SectionRecord* busy = FindSection(record, "busy", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->entries(), 1u);
  EXPECT_GE(busy->cpu_seconds(), 0.02);
  EXPECT_GE(busy->duration_seconds(), busy->cpu_seconds() * 0.99);
  EXPECT_LE(busy->duration_seconds(), record.duration_seconds());
}

TEST(SectionsTest, NestedSectionsAreMeasuredSeparatelyAndOuterIncludesInner) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer outer("outer");
    BusyCpu(5'000'000);
    {
      ScopedTimer inner("inner");
      BusyCpu(10'000'000);
    }
  });
  EXPECT_THAT(SectionNames(record), ElementsAre("outer", "inner"));
  const v1::SectionRecord* outer = FindSection(record, "outer", v1::SectionRecord::KIND_TIME);
  const v1::SectionRecord* inner = FindSection(record, "inner", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  EXPECT_GE(inner->cpu_seconds(), 0.01);
  EXPECT_GE(outer->duration_seconds(), inner->duration_seconds());
  EXPECT_GE(outer->cpu_seconds(), inner->cpu_seconds() + 0.005);
}

TEST(SectionsTest, RepeatedNameSumsAndCountsEntries) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    for (int i = 0; i < 3; ++i) {
      ScopedTimer timer("loop_body");
      BusyCpu(2'000'000);
      ScopedBytes bytes("loop_read");
      RecordBytesRead(10, 30);
    }
  });
  const v1::SectionRecord* timer = FindSection(record, "loop_body", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(timer, nullptr);
  EXPECT_EQ(timer->entries(), 3u);
  EXPECT_GE(timer->cpu_seconds(), 0.006);  // the three entries are summed, not overwritten
  const v1::SectionRecord* bytes = FindSection(record, "loop_read", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->entries(), 3u);
  EXPECT_EQ(bytes->bytes_read(), 30);
  EXPECT_EQ(record.sections_size(), 2);
}

TEST(SectionsTest, EqualNamesAtDifferentAddressesAreMerged) {
  // Two distinct buffers holding the same text: keyed apart on the hot path, merged in the record.
  static char first[] = "same";
  static char second[] = "same";
  ASSERT_NE(static_cast<void*>(first), static_cast<void*>(second));
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    {
      ScopedBytes a(first);
      RecordBytesRead(5, 0);
    }
    {
      ScopedBytes b(second);
      RecordBytesRead(7, 0);
    }
  });
  ASSERT_EQ(record.sections_size(), 1);
  EXPECT_EQ(record.sections(0).entries(), 2u);
  EXPECT_EQ(record.sections(0).bytes_read(), 12);
}

TEST(SectionsTest, SameNameOfDifferentKindsStaysSeparate) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer timer("read");
    ScopedBytes bytes("read");
    RecordBytesRead(1, 1);
  });
  EXPECT_NE(FindSection(record, "read", v1::SectionRecord::KIND_TIME), nullptr);
  EXPECT_NE(FindSection(record, "read", v1::SectionRecord::KIND_BYTES), nullptr);
  EXPECT_EQ(record.sections_size(), 2);
}

TEST(SectionsTest, BytesScopeSeesOnlyItsOwnReadsAndChunkSeesAll) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    RecordBytesRead(1000, 4000);
    {
      ScopedBytes bytes("jets");
      RecordBytesRead(250, 900);
      RecordBytesRead(50, 100);
    }
    RecordBytesRead(1, 2);
  });
  const v1::SectionRecord* jets = FindSection(record, "jets", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(jets, nullptr);
  EXPECT_EQ(jets->bytes_read(), 300);  // compressed bytes
  EXPECT_EQ(record.compressed_bytes_read(), 1301);
  EXPECT_EQ(record.uncompressed_bytes_read(), 5002);
}

TEST(SectionsTest, NegativeByteCountsAreIgnored) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedBytes bytes("weird_reader");
    RecordBytesRead(-100, 50);
    RecordBytesRead(20, -7);
  });
  EXPECT_EQ(record.compressed_bytes_read(), 20);
  EXPECT_EQ(record.uncompressed_bytes_read(), 50);
  const v1::SectionRecord* bytes =
      FindSection(record, "weird_reader", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->bytes_read(), 20);
}

TEST(SectionsTest, MemoryScopeSeesResidentGrowthAndFeedsThePeak) {
  constexpr size_t kBytes = 64 << 20;
  std::unique_ptr<char[]> kept;
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [&] {
    ScopedMemory memory("allocate");
    kept.reset(new char[kBytes]);
    std::memset(kept.get(), 1, kBytes);  // touch every page so it becomes resident
  });
  const v1::SectionRecord* memory = FindSection(record, "allocate", v1::SectionRecord::KIND_MEMORY);
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->entries(), 1u);
  EXPECT_GE(memory->memory_delta_bytes(), static_cast<int64_t>(kBytes / 2));
  EXPECT_GE(record.memory_peak_bytes(), record.memory_before_bytes());
  EXPECT_GE(record.memory_peak_bytes(), record.memory_after_bytes());
  EXPECT_GE(record.memory_after_bytes() - record.memory_before_bytes(),
            static_cast<int64_t>(kBytes / 2));
}

TEST(SectionsTest, PeakIncludesMemoryReadingsInsideTheChunk) {
  constexpr size_t kBytes = 64 << 20;
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [&] {
    std::unique_ptr<char[]> temporary(new char[kBytes]);
    std::memset(temporary.get(), 1, kBytes);
    ScopedMemory reading("while_big");  // reads RSS while the buffer is resident
    temporary.reset();                  // freed before the chunk's "after" reading
  });
  EXPECT_GE(record.memory_peak_bytes(),
            record.memory_before_bytes() + static_cast<int64_t>(kBytes / 2));
  EXPECT_GE(record.memory_peak_bytes(), record.memory_after_bytes());
}

TEST(SectionsTest, NullNameIsRecordedAsUnnamed) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] { ScopedTimer timer(nullptr); });
  ASSERT_EQ(record.sections_size(), 1);
  EXPECT_EQ(record.sections(0).name(), "(unnamed)");
  EXPECT_EQ(record.sections(0).entries(), 1u);
}

TEST(SectionsTest, MacrosOpenScopesForTheRestOfTheBlock) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ROASTCOFFEA_TIMED_SECTION("macro_time");
    ROASTCOFFEA_MEMORY_SECTION("macro_memory");
    ROASTCOFFEA_BYTES_SECTION("macro_bytes");
    RecordBytesRead(3, 3);
  });
  EXPECT_NE(FindSection(record, "macro_time", v1::SectionRecord::KIND_TIME), nullptr);
  EXPECT_NE(FindSection(record, "macro_memory", v1::SectionRecord::KIND_MEMORY), nullptr);
  const v1::SectionRecord* bytes =
      FindSection(record, "macro_bytes", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->bytes_read(), 3);
}

TEST(SectionsTest, KeysBeyondCapacityAreSummedIntoOverflowNotDropped) {
  constexpr int kNames = 70;  // capacity is 64 distinct keys per chunk
  static char names[kNames][24];
  for (int i = 0; i < kNames; ++i) std::snprintf(names[i], sizeof(names[i]), "section_%02d", i);
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    for (int i = 0; i < kNames; ++i) {
      ScopedBytes bytes(names[i]);
      RecordBytesRead(1, 0);
    }
  });
  ASSERT_EQ(record.sections_size(), 65);
  EXPECT_EQ(record.sections(63).name(), "section_63");
  const v1::SectionRecord* overflow =
      FindSection(record, "(overflow)", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(overflow, nullptr);
  EXPECT_EQ(overflow->entries(), 6u);
  EXPECT_EQ(overflow->bytes_read(), 6);
  EXPECT_EQ(record.compressed_bytes_read(), kNames);
}

TEST(SectionsTest, ScopeOutlivingItsChunkIsReportedAsUnclosedAndLaterIgnored) {
  std::unique_ptr<ScopedTimer> leaked;
  v1::ChunkRecord record =
      TrackChunk(ChunkMetadata{}, [&] { leaked = std::make_unique<ScopedTimer>("kept_alive"); });
  ASSERT_EQ(record.sections_size(), 1);
  EXPECT_EQ(record.sections(0).name(), "(unclosed)");
  EXPECT_EQ(record.sections(0).entries(), 1u);
  // Its chunk is gone: ending it now records nothing and touches no dead state.
  v1::ChunkRecord next = TrackChunk(ChunkMetadata{}, [&] { leaked.reset(); });
  EXPECT_THAT(next.sections(), IsEmpty());
}

TEST(SectionsTest, NestedChunkKeepsItsOwnSections) {
  v1::ChunkRecord inner_record;
  v1::ChunkRecord outer_record = TrackChunk(ChunkMetadata{}, [&] {
    ScopedTimer outer_timer("outer_section");
    RecordBytesRead(10, 0);
    inner_record = TrackChunk(ChunkMetadata{}, [] {
      ScopedBytes inner_bytes("inner_section");
      RecordBytesRead(5, 0);
    });
    ScopedBytes after("after_inner");  // back in the outer chunk
    RecordBytesRead(1, 0);
  });
  EXPECT_THAT(SectionNames(inner_record), ElementsAre("inner_section"));
  EXPECT_EQ(inner_record.compressed_bytes_read(), 5);
  EXPECT_THAT(SectionNames(outer_record), ElementsAre("outer_section", "after_inner"));
  EXPECT_EQ(outer_record.compressed_bytes_read(), 16);
}

}  // namespace
}  // namespace roastcoffea
