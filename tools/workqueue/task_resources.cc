#include "tools/workqueue/task_resources.h"

#include <algorithm>
#include <cstdint>

namespace roastcoffea {
namespace workqueue {
namespace {

constexpr int64_t kMegabyte = 1 << 20;
constexpr int64_t kBaseMemoryMb = 32;
constexpr int64_t kMemoryBytesPerEvent = 512;
constexpr int64_t kOutputDiskMb = 16;

int64_t CeilMegabytes(int64_t bytes) { return bytes / kMegabyte + (bytes % kMegabyte != 0); }

}  // namespace

TaskResources ChunkTaskResources(int64_t events, int64_t input_bytes) {
  events = std::max<int64_t>(events, 0);
  input_bytes = std::max<int64_t>(input_bytes, 0);
  TaskResources resources;
  // Per-event bytes bounded so that the product cannot overflow for any int64 count.
  const int64_t event_bytes =
      events > INT64_MAX / kMemoryBytesPerEvent ? INT64_MAX : events * kMemoryBytesPerEvent;
  resources.memory_mb = kBaseMemoryMb + CeilMegabytes(event_bytes);
  resources.disk_mb = kOutputDiskMb + CeilMegabytes(input_bytes);
  return resources;
}

}  // namespace workqueue
}  // namespace roastcoffea
