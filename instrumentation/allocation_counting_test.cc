#include "instrumentation/allocation_counting.h"

#include <cstdint>
#include <memory>
#include <new>
#include <thread>

#include "gtest/gtest.h"
#include "instrumentation/chunk_tracking.h"
#include "instrumentation/sections.h"
#include "schema/measurement.pb.h"

namespace roastcoffea {
namespace {

const v1::SectionRecord* FindMemorySection(const v1::ChunkRecord& record, const std::string& name) {
  for (const v1::SectionRecord& section : record.sections()) {
    if (section.name() == name && section.kind() == v1::SectionRecord::KIND_MEMORY) {
      return &section;
    }
  }
  return nullptr;
}

// Keeps the optimiser from eliding a new/delete pair.
void Touch(char* p) {
  p[0] = 1;
  asm volatile("" : : "r"(p) : "memory");
}

TEST(AllocationCountingTest, ThreadCountersSeeExactSizesOfEveryVariant) {
  const AllocationCounters before = ThreadAllocationCounters();
  char* array = new char[1000];
  Touch(array);
  int* single = new int(7);
  struct alignas(128) Aligned {
    char bytes[256];
  };
  Aligned* aligned = new Aligned;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 128, 0u);
  char* nothrow = new (std::nothrow) char[24];
  ASSERT_NE(nothrow, nullptr);
  const AllocationCounters during = ThreadAllocationCounters();
  EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, 1000 + 4 + 256 + 24);
  EXPECT_EQ(during.live_bytes - before.live_bytes, 1000 + 4 + 256 + 24);
  delete[] array;
  delete single;
  delete aligned;
  delete[] nothrow;
  const AllocationCounters after = ThreadAllocationCounters();
  EXPECT_EQ(after.freed_bytes - before.freed_bytes, 1000 + 4 + 256 + 24);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
}

TEST(AllocationCountingTest, ChunkGetsExactAllocatedAndPeakLiveBytes) {
  const v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    char* a = new char[1000];
    Touch(a);
    delete[] a;
    char* b = new char[400];
    char* c = new char[300];
    Touch(b);
    Touch(c);
    delete[] b;
    delete[] c;
  });
  ASSERT_TRUE(record.has_allocated_bytes());
  EXPECT_EQ(record.allocated_bytes(), 1700);
  EXPECT_EQ(record.peak_live_bytes(), 1000);
}

TEST(AllocationCountingTest, MemorySectionsNestRepeatAndFeedTheChunk) {
  const v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    ScopedMemory outer("outer");
    std::unique_ptr<char[]> kept(new char[300]);
    Touch(kept.get());
    for (int i = 0; i < 2; ++i) {
      ScopedMemory inner("inner");
      char* temporary = new char[700];
      Touch(temporary);
      delete[] temporary;
    }
  });
  const v1::SectionRecord* inner = FindMemorySection(record, "inner");
  const v1::SectionRecord* outer = FindMemorySection(record, "outer");
  ASSERT_NE(inner, nullptr);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(inner->entries(), 2u);
  EXPECT_EQ(inner->allocated_bytes(), 1400);  // summed over the two entries
  EXPECT_EQ(inner->peak_live_bytes(), 1400);  // 700 above entry level, twice
  EXPECT_EQ(outer->allocated_bytes(), 1700);
  EXPECT_EQ(outer->peak_live_bytes(), 1000);  // 300 kept + 700 temporary
  EXPECT_EQ(record.allocated_bytes(), 1700);
  EXPECT_EQ(record.peak_live_bytes(), 1000);
}

TEST(AllocationCountingTest, WithoutResidentMemoryReadsOnlyTheExactCountsRemain) {
  ChunkTrackingOptions options;
  options.read_resident_memory = false;
  const v1::ChunkRecord record = TrackChunk(
      ChunkMetadata{},
      [] {
        ScopedMemory section("alloc");
        char* p = new char[2048];
        Touch(p);
        delete[] p;
      },
      options);
  EXPECT_EQ(record.memory_before_bytes(), 0);
  EXPECT_EQ(record.memory_after_bytes(), 0);
  EXPECT_EQ(record.memory_peak_bytes(), 0);
  EXPECT_EQ(record.allocated_bytes(), 2048);
  const v1::SectionRecord* section = FindMemorySection(record, "alloc");
  ASSERT_NE(section, nullptr);
  EXPECT_EQ(section->memory_delta_bytes(), 0);
  EXPECT_EQ(section->allocated_bytes(), 2048);
  EXPECT_EQ(section->peak_live_bytes(), 2048);
}

TEST(AllocationCountingTest, FailedChunkStillCountsAndThePeakRecovers) {
  const v1::ChunkRecord failed = TrackChunk(ChunkMetadata{}, [] {
    std::unique_ptr<char[]> buffer(new char[5000]);
    Touch(buffer.get());
    throw std::runtime_error("bad basket");
  });
  EXPECT_EQ(failed.status(), v1::CHUNK_STATUS_FAILED);
  EXPECT_GE(failed.allocated_bytes(), 5000);
  EXPECT_GE(failed.peak_live_bytes(), 5000);
  // The next chunk starts a fresh peak.
  const v1::ChunkRecord next = TrackChunk(ChunkMetadata{}, [] {
    char* small = new char[10];
    Touch(small);
    delete[] small;
  });
  EXPECT_EQ(next.allocated_bytes(), 10);
  EXPECT_EQ(next.peak_live_bytes(), 10);
}

TEST(AllocationCountingTest, OtherThreadsAllocationsAreNotTheChunks) {
  const v1::ChunkRecord record = TrackChunk(ChunkMetadata{}, [] {
    std::thread other([] {
      std::unique_ptr<char[]> big(new char[1 << 20]);
      Touch(big.get());
    });
    other.join();
  });
  // Only the thread's own bookkeeping object is this thread's.
  EXPECT_LT(record.allocated_bytes(), 4096);
}

}  // namespace
}  // namespace roastcoffea
