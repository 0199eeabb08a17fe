#include "aggregation/worker_names.h"

#include "gtest/gtest.h"

namespace roastcoffea {
namespace {

TEST(WorkerThreadNameTest, JoinsProcessAndThreadAsTheThreadpoolNamesItsWorkers) {
  EXPECT_EQ(WorkerThreadName("vm:635", 0), "vm:635/thread-0");
  EXPECT_EQ(WorkerThreadName("tcp://10.0.0.5:4123", 3), "tcp://10.0.0.5:4123/thread-3");
  EXPECT_EQ(WorkerThreadName("vm:635/thread-2", 2), "vm:635/thread-2");
  EXPECT_EQ(WorkerThreadName("", 1), "worker/thread-1");
  EXPECT_EQ(WorkerThreadName("vm:635", -1), "vm:635");
  // Not a thread suffix: digits required.
  EXPECT_EQ(WorkerThreadName("a/thread-x", 1), "a/thread-x/thread-1");
}

TEST(WorkerProcessNameTest, DropsTheThreadSuffix) {
  EXPECT_EQ(WorkerProcessName("vm:635/thread-12"), "vm:635");
  EXPECT_EQ(WorkerProcessName("tcp://10.0.0.5:4123"), "tcp://10.0.0.5:4123");
  EXPECT_EQ(WorkerProcessName("a/thread-"), "a/thread-");
  EXPECT_EQ(WorkerProcessName(""), "");
}

}  // namespace
}  // namespace roastcoffea
