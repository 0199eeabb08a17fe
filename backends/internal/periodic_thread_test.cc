#include "backends/internal/periodic_thread.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace roastcoffea {
namespace backends_internal {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

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

TEST(PeriodicThreadTest, TicksRepeatedlyUntilStopped) {
  TickCounter counter;
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start({absl::Milliseconds(5), false}, [&] { counter.Tick(); }).ok());
  EXPECT_TRUE(thread.running());
  EXPECT_TRUE(counter.WaitFor(3, std::chrono::seconds(60)));
  thread.Stop();
  EXPECT_FALSE(thread.running());
  const int after_stop = counter.ticks();
  absl::SleepFor(absl::Milliseconds(30));
  EXPECT_EQ(counter.ticks(), after_stop);  // no tick after Stop returned
}

TEST(PeriodicThreadTest, TickAtStartRunsBeforeTheFirstPeriod) {
  TickCounter counter;
  PeriodicThread thread;
  // A period no test waits for: only the tick at start can come.
  ASSERT_TRUE(thread.Start({absl::Hours(1), true}, [&] { counter.Tick(); }).ok());
  EXPECT_TRUE(counter.WaitFor(1, std::chrono::seconds(60)));
  thread.Stop();
  EXPECT_EQ(counter.ticks(), 1);
}

TEST(PeriodicThreadTest, StopWakesAWaitingThreadAtOnce) {
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  ASSERT_TRUE(thread.Start({absl::Hours(1), false}, [&] { ++ticks; }).ok());
  const absl::Time before = absl::Now();
  thread.Stop();
  // Not an hour: a generous bound that only a missed wake-up exceeds.
  EXPECT_LT(absl::Now() - before, absl::Seconds(30));
  EXPECT_EQ(ticks.load(), 0);
}

TEST(PeriodicThreadTest, StopWaitsForARunningTick) {
  std::atomic<bool> in_tick{false}, finished{false};
  PeriodicThread thread;
  ASSERT_TRUE(thread
                  .Start({absl::Hours(1), true},
                         [&] {
                           in_tick = true;
                           absl::SleepFor(absl::Milliseconds(50));
                           finished = true;
                         })
                  .ok());
  while (!in_tick) absl::SleepFor(absl::Milliseconds(1));
  thread.Stop();
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
