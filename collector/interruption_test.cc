#include "collector/interruption.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "host/fake_clock.h"

namespace roastcoffea {
namespace {

constexpr absl::Duration kRealTimeout = absl::Seconds(30);  // only ever reached on a failure

struct Installed {
  std::unique_ptr<Interruption> interruption;
  std::future<void> deadline;
};

// An Interruption whose deadline comes `delay` after the first signal by `clock`; the first
// signal has been sent and noticed.
Installed SignalledWithDeadline(FakeClock& clock, absl::Duration delay,
                                std::promise<void>& deadline) {
  InterruptionOptions options;
  options.program = "interruption_test";
  options.clock = &clock;
  options.deadline_delay = delay;
  options.on_deadline = [&deadline] { deadline.set_value(); };
  absl::StatusOr<std::unique_ptr<Interruption>> interruption =
      Interruption::Install(std::move(options));
  EXPECT_TRUE(interruption.ok()) << interruption.status();
  if (!interruption.ok()) return {};
  kill(getpid(), SIGINT);
  // WaitUntil reads the injected clock, which stands still: only the signal ends it.
  EXPECT_TRUE((*interruption)->WaitUntil(clock.Now() + absl::Hours(1)));
  return {*std::move(interruption), deadline.get_future()};
}

bool Fired(std::future<void>& deadline, absl::Duration wait) {
  return deadline.wait_for(absl::ToChronoMilliseconds(wait)) == std::future_status::ready;
}

// Moves the monotonic reading by `by` and returns once the watcher has looked at it.
void AdvanceAndLetTheWatcherSee(FakeClock& clock, absl::Duration by) {
  const int64_t reads = clock.monotonic_reads();
  clock.Advance(by);
  ASSERT_TRUE(clock.WaitForMonotonicReadsAfter(reads, kRealTimeout));
}

TEST(InterruptionTest, TheSignalIsTimedByTheInjectedClock) {
  FakeClock clock;
  std::promise<void> deadline;
  Installed installed = SignalledWithDeadline(clock, absl::Hours(1), deadline);
  ASSERT_NE(installed.interruption, nullptr);
  EXPECT_EQ(installed.interruption->triggered_at(), clock.Now());
}

// An hour-long grace period, in no real time: the deadline follows the injected clock.
TEST(InterruptionTest, TheDeadlineComesWhenTheClockReachesIt) {
  FakeClock clock;
  std::promise<void> deadline;
  Installed installed = SignalledWithDeadline(clock, absl::Hours(1), deadline);
  ASSERT_NE(installed.interruption, nullptr);
  AdvanceAndLetTheWatcherSee(clock, absl::Minutes(59));
  EXPECT_FALSE(Fired(installed.deadline, absl::ZeroDuration()));
  clock.Advance(absl::Minutes(1));
  EXPECT_TRUE(Fired(installed.deadline, kRealTimeout));
}

// A wall-clock step forward (NTP, `date -s`) does not cut the grace period short, and one
// backward does not stretch it.
TEST(InterruptionTest, AWallClockStepDoesNotMoveTheDeadline) {
  FakeClock clock;
  std::promise<void> deadline;
  Installed installed = SignalledWithDeadline(clock, absl::Seconds(5), deadline);
  ASSERT_NE(installed.interruption, nullptr);
  clock.StepWallClock(absl::Hours(1));
  AdvanceAndLetTheWatcherSee(clock, absl::Seconds(4));
  EXPECT_FALSE(Fired(installed.deadline, absl::ZeroDuration())) << "cut short by a step forward";
  clock.StepWallClock(-absl::Hours(2));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Fired(installed.deadline, kRealTimeout)) << "stretched by a step back";
}

}  // namespace
}  // namespace roastcoffea
