#include "host/clock.h"

#include <atomic>
#include <thread>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"

namespace roastcoffea {
namespace {

TEST(RealClockTest, WaitUntilAPastDeadlineReturnsAtOnce) {
  Clock& clock = *Clock::Real();
  StopToken stop;
  EXPECT_FALSE(clock.WaitUntil(clock.Monotonic() - absl::Seconds(1), stop));
}

TEST(RealClockTest, ARequestedStopEndsTheWaitAndStays) {
  Clock& clock = *Clock::Real();
  StopToken stop;
  std::thread stopper([&] { stop.RequestStop(); });
  // An hour: only the stop ends it.
  EXPECT_TRUE(clock.WaitUntil(clock.Monotonic() + absl::Hours(1), stop));
  stopper.join();
  EXPECT_TRUE(stop.stop_requested());
  EXPECT_TRUE(clock.WaitUntil(absl::InfiniteDuration(), stop));
  stop.Reset();
  EXPECT_FALSE(stop.stop_requested());
}

TEST(FakeClockTest, AdvanceWakesAWaiterOnlyOnceItsDeadlineIsReached) {
  FakeClock clock;
  StopToken stop;
  const absl::Duration deadline = clock.Monotonic() + absl::Seconds(10);
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_FALSE(clock.WaitUntil(deadline, stop));
    returned = true;
  });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Advance(absl::Seconds(9));
  // Still waiting: 1 s is left (it re-read the clock and went back to waiting).
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_FALSE(returned.load());
  clock.Advance(absl::Seconds(1));
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_GE(clock.Monotonic(), deadline);
}

TEST(FakeClockTest, AStopEndsAWaitWithoutTimeMoving) {
  FakeClock clock;
  StopToken stop;
  const absl::Duration start = clock.Monotonic();
  std::thread waiter([&] { EXPECT_TRUE(clock.WaitUntil(start + absl::Hours(1), stop)); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  stop.RequestStop();
  waiter.join();
  EXPECT_EQ(clock.Monotonic(), start);
}

TEST(FakeClockTest, AWallClockStepMovesNeitherTheMonotonicReadingNorAWait) {
  FakeClock clock;
  StopToken stop;
  const absl::Time wall = clock.Now();
  const absl::Duration monotonic = clock.Monotonic();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    clock.WaitUntil(monotonic + absl::Seconds(5), stop);
    returned = true;
  });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.StepWallClock(absl::Hours(1));
  clock.StepWallClock(-absl::Hours(2));
  EXPECT_EQ(clock.Now(), wall - absl::Hours(1));
  EXPECT_EQ(clock.Monotonic(), monotonic);
  EXPECT_FALSE(returned.load());
  clock.Advance(absl::Seconds(5));
  waiter.join();
  EXPECT_TRUE(returned.load());
}

}  // namespace
}  // namespace roastcoffea
