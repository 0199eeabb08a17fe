#include "tools/workqueue/task_resources.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace roastcoffea {
namespace workqueue {
namespace {

TEST(ChunkTaskResourcesTest, MemoryIsABaseAndHalfAKilobytePerEvent) {
  // 25,000 events: 12,800,000 bytes = 12.2 MB, rounded up to 13.
  EXPECT_EQ(ChunkTaskResources(25000, 0).memory_mb, 32 + 13);
  EXPECT_EQ(ChunkTaskResources(2048, 0).memory_mb, 32 + 1) << "exactly one MB";
  EXPECT_EQ(ChunkTaskResources(2049, 0).memory_mb, 32 + 2);
  EXPECT_EQ(ChunkTaskResources(0, 0).memory_mb, 32);
}

TEST(ChunkTaskResourcesTest, DiskIsTheInputsAndRoomForTheOutput) {
  EXPECT_EQ(ChunkTaskResources(1, 10445099 + 2295336).disk_mb, 16 + 13);
  EXPECT_EQ(ChunkTaskResources(1, 1 << 20).disk_mb, 16 + 1);
  EXPECT_EQ(ChunkTaskResources(1, 0).disk_mb, 16);
}

TEST(ChunkTaskResourcesTest, OneCoreAndNoNegativeOrOverflowingRequest) {
  EXPECT_EQ(ChunkTaskResources(25000, 0).cores, 1);
  const TaskResources negative = ChunkTaskResources(-5, -7);
  EXPECT_EQ(negative.memory_mb, 32);
  EXPECT_EQ(negative.disk_mb, 16);
  const TaskResources huge = ChunkTaskResources(INT64_MAX, INT64_MAX);
  EXPECT_GT(huge.memory_mb, 0);
  EXPECT_GT(huge.disk_mb, 0);
}

}  // namespace
}  // namespace workqueue
}  // namespace roastcoffea
