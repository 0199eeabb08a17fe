#include "host/clock.h"

#include <chrono>

#include "absl/time/clock.h"

namespace roastcoffea {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  absl::Duration Monotonic() override {
    return absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }
  bool WaitUntil(absl::Duration deadline, const StopToken& stop) override {
    StopToken::State& state = *stop.state();
    std::unique_lock<std::mutex> lock(state.mu);
    if (deadline == absl::InfiniteDuration()) {
      state.wake.wait(lock, [&] { return state.stopped; });
      return true;
    }
    // On the steady clock (Monotonic's), so a step of the wall clock changes no wait.
    const std::chrono::steady_clock::time_point until(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            absl::ToChronoNanoseconds(deadline)));
    return state.wake.wait_until(lock, until, [&] { return state.stopped; });
  }
};

}  // namespace

void StopToken::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopped = true;
  }
  state_->wake.notify_all();
}

bool StopToken::stop_requested() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stopped;
}

void StopToken::Reset() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stopped = false;
}

void Clock::SleepUntil(absl::Duration deadline) {
  const StopToken never;
  WaitUntil(deadline, never);
}

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace roastcoffea
