#include "instrumentation/sections.h"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/internal/sample_context.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

using instrumentation_internal::CurrentSampleContext;
using instrumentation_internal::ThreadSampleContext;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Ten literal names "<prefix>0" .. "<prefix>9" (adjacent literals concatenate).
#define TEN_NAMES(prefix)                                                                         \
  prefix "0", prefix "1", prefix "2", prefix "3", prefix "4", prefix "5", prefix "6", prefix "7", \
      prefix "8", prefix "9"

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

TEST(SectionsTest, TimerMeasuresWallTimeOnlyByDefault) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer timer("busy");
    BusyCpu(20'000'000);
  });
  const v1::SectionRecord* busy = FindSection(record, "busy", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->entries(), 1u);
  EXPECT_EQ(busy->cpu_seconds(), 0.0);
  EXPECT_GE(busy->duration_seconds(), 0.02);
  EXPECT_LE(busy->duration_seconds(), record.duration_seconds());
}

TEST(SectionsTest, TimerRecordsWallAndCpuTimeWhenAsked) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer timer("busy", CpuTime::kMeasured);
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
    ScopedTimer outer("outer", CpuTime::kMeasured);
    BusyCpu(5'000'000);
    {
      ScopedTimer inner("inner", CpuTime::kMeasured);
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
      ScopedTimer timer("loop_body", CpuTime::kMeasured);
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
  static const char first[] = "same";
  static const char second[] = "same";
  ASSERT_NE(static_cast<const void*>(first), static_cast<const void*>(second));
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

// Names made at run time must not compile: each would be a new section key (and, per chunk,
// a new record entry), the unbounded interning that SectionName exists to prevent.
static_assert(std::is_constructible_v<SectionName, const char (&)[5]>);
static_assert(!std::is_constructible_v<SectionName, const char*>);
static_assert(!std::is_constructible_v<SectionName, std::string>);
static_assert(!std::is_constructible_v<SectionName, char (&)[5]>, "a writable buffer");
static_assert(!std::is_constructible_v<SectionName, std::nullptr_t>);
static_assert(!std::is_constructible_v<ScopedTimer, const char*>);
static_assert(!std::is_constructible_v<ScopedMemory, std::string>);
static_assert(!std::is_constructible_v<ScopedBytes, char (&)[8]>);

TEST(SectionsTest, ATableOfLiteralNamesNamesSections) {
  static constexpr SectionName kSteps[] = {"read", "select", "fill"};
  static_assert(kSteps[1].c_str()[0] == 's');
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    for (const SectionName& step : kSteps) ScopedTimer timer(step);
    ScopedTimer again(kSteps[0]);
  });
  EXPECT_THAT(SectionNames(record), ElementsAre("read", "select", "fill"));
  EXPECT_EQ(record.sections(0).entries(), 2u);
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
  // Capacity is 64 distinct keys per chunk.
  static constexpr SectionName names[] = {TEN_NAMES("section_0"), TEN_NAMES("section_1"),
                                          TEN_NAMES("section_2"), TEN_NAMES("section_3"),
                                          TEN_NAMES("section_4"), TEN_NAMES("section_5"),
                                          TEN_NAMES("section_6")};
  constexpr int kNames = 70;
  static_assert(sizeof(names) / sizeof(names[0]) == kNames);
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

TEST(SectionsTest, TimerSlicesOfOverflowKeysAreNamedOverflow) {
  static constexpr SectionName names[] = {
      TEN_NAMES("timer_0"), TEN_NAMES("timer_1"), TEN_NAMES("timer_2"), TEN_NAMES("timer_3"),
      TEN_NAMES("timer_4"), TEN_NAMES("timer_5"), "timer_60",           "timer_61",
      "timer_62",           "timer_63",           "timer_64",           "timer_65"};
  constexpr int kNames = 66;
  static_assert(sizeof(names) / sizeof(names[0]) == kNames);
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    for (int i = 0; i < kNames; ++i) ScopedTimer timer(names[i]);
  });
  ASSERT_EQ(record.slices_size(), kNames);
  EXPECT_EQ(record.slices(0).name(), "timer_00");
  EXPECT_EQ(record.slices(63).name(), "timer_63");
  EXPECT_EQ(record.slices(64).name(), "(overflow)");
  EXPECT_EQ(record.slices(65).name(), "(overflow)");
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

TEST(SectionsTest, TimersBecomeTimelineSlicesInsideTheirChunk) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer outer("outer");
    BusyCpu(1'000'000);
    {
      ScopedTimer inner("inner");
      BusyCpu(1'000'000);
    }
    ScopedBytes bytes("bytes_only");  // not a time scope: no slice, but it counts for depth
    ScopedTimer last("last");
  });
  ASSERT_EQ(record.slices_size(), 3);  // in order of exit
  const v1::SectionSlice& inner = record.slices(0);
  const v1::SectionSlice& last = record.slices(1);
  const v1::SectionSlice& outer = record.slices(2);
  EXPECT_EQ(inner.name(), "inner");
  EXPECT_EQ(inner.depth(), 1u);
  EXPECT_EQ(last.name(), "last");
  EXPECT_EQ(last.depth(), 2u);
  EXPECT_EQ(outer.name(), "outer");
  EXPECT_EQ(outer.depth(), 0u);
  const int64_t chunk_ns = record.end_unix_ns() - record.start_unix_ns();
  EXPECT_GE(outer.start_offset_ns(), 0);
  EXPECT_LE(inner.start_offset_ns(), chunk_ns);
  EXPECT_LE(outer.start_offset_ns(), inner.start_offset_ns());
  EXPECT_LE(inner.start_offset_ns() + inner.duration_ns(),
            outer.start_offset_ns() + outer.duration_ns());
  EXPECT_LE(outer.duration_ns(), chunk_ns + 1000);
  EXPECT_GT(inner.duration_ns(), 0);
  EXPECT_EQ(record.dropped_slices(), 0);
  // The slices and the summed section agree.
  const v1::SectionRecord* inner_section =
      FindSection(record, "inner", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(inner_section, nullptr);
  EXPECT_NEAR(inner_section->duration_seconds(), inner.duration_ns() * 1e-9, 1e-8);
}

TEST(SectionsTest, SlicesBeyondTheCapAreCountedNotKeptAndSumsStayExact) {
  ChunkTrackingOptions options;
  options.max_slices_per_chunk = 10;
  v1::ChunkRecord record = TrackChunk(
      ChunkMetadata{},
      [] {
        for (int i = 0; i < 1000; ++i) ScopedTimer timer("tight_loop");
      },
      options);
  EXPECT_EQ(record.slices_size(), 10);
  EXPECT_EQ(record.dropped_slices(), 990);
  const v1::SectionRecord* loop = FindSection(record, "tight_loop", v1::SectionRecord::KIND_TIME);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->entries(), 1000u);

  options.max_slices_per_chunk = 0;
  record = TrackChunk(
      ChunkMetadata{}, [] { ScopedTimer timer("x"); }, options);
  EXPECT_EQ(record.slices_size(), 0);
  EXPECT_EQ(record.dropped_slices(), 1);
}

TEST(SectionsTest, ExceptionThroughNestedScopesLeavesCorrectSections) {
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedTimer outer("outer");
    ScopedBytes bytes("read");
    RecordBytesRead(42, 0);
    ScopedTimer inner("inner");
    throw std::runtime_error("corrupt basket");
  });
  EXPECT_EQ(record.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(record.error_text(), "corrupt basket");
  ASSERT_NE(FindSection(record, "outer", v1::SectionRecord::KIND_TIME), nullptr);
  ASSERT_NE(FindSection(record, "inner", v1::SectionRecord::KIND_TIME), nullptr);
  const v1::SectionRecord* read = FindSection(record, "read", v1::SectionRecord::KIND_BYTES);
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->bytes_read(), 42);
  EXPECT_EQ(record.slices_size(), 2);
  for (const v1::SectionRecord& section : record.sections()) {
    EXPECT_NE(section.name(), "(unclosed)");
  }
}

TEST(SectionsTest, DisabledInstrumentationRecordsNothing) {
  SetInstrumentationEnabled(false);
  EXPECT_FALSE(InstrumentationEnabled());
  int calls = 0;
  auto tracked = TrackChunks([&](const ChunkMetadata&) {
    ScopedTimer timer("t");
    ScopedBytes bytes("b");
    RecordBytesRead(10, 20);
    return ++calls;
  });
  TrackedOutput<int> output = tracked(ChunkMetadata{"ds", "f", "u", 0, 10, 10});
  EXPECT_EQ(output.output, 1);
  EXPECT_TRUE(output.chunk_records.empty());
  ChunkRecordCollector collector;
  auto into = TrackChunksInto([](const ChunkMetadata&) { return 1; }, &collector);
  EXPECT_EQ(into(ChunkMetadata{}), 1);
  EXPECT_EQ(collector.size(), 0u);
  // A failure is still recorded, without measurements, so it is never silent.
  auto failing = TrackChunks([](const ChunkMetadata&) -> int { throw std::runtime_error("x"); });
  TrackedOutput<int> failed = failing(ChunkMetadata{"ds", "f", "u", 5, 10, 5});
  ASSERT_EQ(failed.chunk_records.size(), 1u);
  EXPECT_EQ(failed.chunk_records[0].status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_EQ(failed.chunk_records[0].error_text(), "x");
  EXPECT_EQ(failed.chunk_records[0].entry_start(), 5);
  EXPECT_EQ(failed.chunk_records[0].duration_seconds(), 0.0);
  EXPECT_TRUE(failed.chunk_records[0].sections().empty());

  SetInstrumentationEnabled(true);
  TrackedOutput<int> measured = tracked(ChunkMetadata{});
  ASSERT_EQ(measured.chunk_records.size(), 1u);
  EXPECT_EQ(measured.chunk_records[0].sections_size(), 2);
  EXPECT_EQ(measured.chunk_records[0].compressed_bytes_read(), 10);
}

TEST(SectionsTest, SampleContextNamesTheInnermostOpenTimerOfTheCurrentChunk) {
  const ThreadSampleContext outside = CurrentSampleContext();
  EXPECT_FALSE(outside.in_chunk);
  EXPECT_EQ(outside.time_section, nullptr);
  std::vector<std::string> seen;
  auto section_now = [&seen] {
    const char* name = CurrentSampleContext().time_section;
    seen.push_back(name != nullptr ? name : "<none>");
  };
  v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [&] {
    EXPECT_TRUE(CurrentSampleContext().in_chunk);
    section_now();
    {
      ScopedTimer outer("outer");
      section_now();
      {
        ScopedMemory memory("memory_is_not_a_time_section");
        ScopedTimer inner("inner");
        section_now();
      }
      section_now();
    }
    section_now();
  });
  EXPECT_THAT(seen, ElementsAre("<none>", "outer", "inner", "outer", "<none>"));
  // The thread index the record got is what the context reports from then on.
  EXPECT_EQ(CurrentSampleContext().thread_index, record.thread_index());
  EXPECT_EQ(CurrentSampleContext().time_section, nullptr);
}

}  // namespace
}  // namespace roastcoffea
