#include "backends/internal/periodic_thread.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"

namespace roastcoffea {
namespace backends_internal {
namespace {

const absl::Duration kT0 = absl::Hours(5);

TEST(NextTickAfterTest, OnTimeTicksKeepTheFixedRate) {
  EXPECT_EQ(NextTickAfter(kT0, absl::Seconds(1), kT0 + absl::Milliseconds(300)),
            kT0 + absl::Seconds(1));
}

TEST(NextTickAfterTest, AStalledTickSkipsTheMissedTicksAndStaysOnTheGrid) {
  // The tick due at t0 ran 3.4 periods: the ticks due at 1, 2, 3 are skipped, not burst.
  EXPECT_EQ(NextTickAfter(kT0, absl::Seconds(1), kT0 + absl::Milliseconds(3400)),
            kT0 + absl::Seconds(4));
  // Ending exactly on a due time: that one is missed too (it is not ahead).
  EXPECT_EQ(NextTickAfter(kT0, absl::Seconds(1), kT0 + absl::Seconds(2)), kT0 + absl::Seconds(3));
}

// Counts ticks and lets the test wait for a number of them.
class TickCounter {
 public:
  void Tick() {
    std::lock_guard<std::mutex> lock(mu_);
    ++ticks_;
    changed_.notify_all();
  }
  // False when `n` ticks did not come within `timeout`.
  bool WaitFor(int n, std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return ticks_ >= n; });
  }
  int ticks() {
    std::lock_guard<std::mutex> lock(mu_);
    return ticks_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int ticks_ = 0;
};

PeriodicThreadOptions Every(absl::Duration period, FakeClock& clock, bool tick_at_start = false) {
  PeriodicThreadOptions options;
  options.period = period;
  options.tick_at_start = tick_at_start;
  options.clock = &clock;
  return options;
}

TEST(PeriodicThreadTest, TicksOncePerPeriodOfTheClockUntilStopped) {
  FakeClock clock;
  TickCounter counter;
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start(Every(absl::Seconds(5), clock), [&] { counter.Tick(); }).ok());
  EXPECT_TRUE(thread.running());
  for (int k = 1; k <= 3; ++k) {
    ASSERT_TRUE(clock.WaitForWaiters(1));  // waiting for the next due time
    EXPECT_EQ(counter.ticks(), k - 1);
    clock.Advance(absl::Seconds(4));
    ASSERT_TRUE(clock.WaitForWaiters(1));  // not due yet: back to waiting, no tick
    EXPECT_EQ(counter.ticks(), k - 1);
    clock.Advance(absl::Seconds(1));
    EXPECT_TRUE(counter.WaitFor(k, std::chrono::seconds(60)));
  }
  thread.Stop();
  EXPECT_FALSE(thread.running());
  clock.Advance(absl::Seconds(50));
  EXPECT_EQ(counter.ticks(), 3);  // the thread is joined: no tick after Stop returned
}

TEST(PeriodicThreadTest, AnOverrunningTickSkipsTheTicksItMissed) {
  FakeClock clock;
  TickCounter counter;
  PeriodicThread thread;
  ASSERT_TRUE(thread
                  .Start(Every(absl::Seconds(1), clock),
                         [&] {
                           // The first tick takes 3.5 periods.
                           if (counter.ticks() == 0) clock.Advance(absl::Milliseconds(3500));
                           counter.Tick();
                         })
                  .ok());
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Advance(absl::Seconds(1));  // t = 1: the first tick runs until t = 4.5
  ASSERT_TRUE(counter.WaitFor(1, std::chrono::seconds(60)));
  ASSERT_TRUE(clock.WaitForWaiters(1));  // due at 5, not a burst of the ticks due at 2, 3, 4
  EXPECT_EQ(counter.ticks(), 1);
  clock.Advance(absl::Milliseconds(500));
  EXPECT_TRUE(counter.WaitFor(2, std::chrono::seconds(60)));
  thread.Stop();
  EXPECT_EQ(counter.ticks(), 2);
}

TEST(PeriodicThreadTest, TickAtStartRunsBeforeTheFirstPeriod) {
  FakeClock clock;
  TickCounter counter;
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start(Every(absl::Hours(1), clock, true), [&] { counter.Tick(); }).ok());
  EXPECT_TRUE(counter.WaitFor(1, std::chrono::seconds(60)));
  ASSERT_TRUE(clock.WaitForWaiters(1));
  thread.Stop();
  EXPECT_EQ(counter.ticks(), 1);
}

TEST(PeriodicThreadTest, StopWakesAWaitingThreadAtOnce) {
  // The real clock: an hour would fail the test by its timeout if Stop missed the wake-up.
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start({absl::Hours(1), false}, [&] { ++ticks; }).ok());
  thread.Stop();
  EXPECT_EQ(ticks.load(), 0);
}

TEST(PeriodicThreadTest, AStepOfTheWallClockMovesNoTick) {
  FakeClock clock;
  TickCounter counter;
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start(Every(absl::Seconds(5), clock), [&] { counter.Tick(); }).ok());
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.StepWallClock(absl::Hours(1));
  clock.StepWallClock(-absl::Hours(2));
  clock.Advance(absl::Seconds(4));
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_EQ(counter.ticks(), 0);
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(counter.WaitFor(1, std::chrono::seconds(60)));
  thread.Stop();
}

TEST(PeriodicThreadTest, StopWaitsForARunningTick) {
  absl::Notification in_tick, release;
  std::atomic<bool> finished{false};
  PeriodicThread thread;
  ASSERT_TRUE(thread
                  .Start({absl::Hours(1), true},
                         [&] {
                           in_tick.Notify();
                           release.WaitForNotification();
                           finished = true;
                         })
                  .ok());
  in_tick.WaitForNotification();
  std::thread stopper([&] { thread.Stop(); });
  release.Notify();
  stopper.join();
  EXPECT_TRUE(finished.load());
}

TEST(CheckPeriodTest, NamesWhatIsWrong) {
  EXPECT_TRUE(CheckPeriod(absl::Milliseconds(1), "tracking interval").ok());
  const absl::Status zero = CheckPeriod(absl::ZeroDuration(), "tracking interval");
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.message(), "tracking interval must be positive and finite, got 0");
  EXPECT_EQ(CheckPeriod(absl::InfiniteDuration(), "tracking interval").message(),
            "tracking interval must be positive and finite, got inf");
}

TEST(PeriodicThreadTest, RejectsBadPeriodsAndADoubleStart) {
  PeriodicThread thread;
  EXPECT_EQ(thread.Start({absl::ZeroDuration(), false}, [] {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(thread.Start({-absl::Seconds(1), false}, [] {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(thread.Start({absl::InfiniteDuration(), false}, [] {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(thread.running());
  ASSERT_TRUE(thread.Start({absl::Hours(1), false}, [] {}).ok());
  EXPECT_EQ(thread.Start({absl::Hours(1), false}, [] {}).code(),
            absl::StatusCode::kFailedPrecondition);
  thread.Stop();
  thread.Stop();  // idempotent
  // Restartable after a stop.
  EXPECT_TRUE(thread.Start({absl::Hours(1), false}, [] {}).ok());
}

}  // namespace
}  // namespace backends_internal
}  // namespace roastcoffea
