#include "collector/clock.h"

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
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace roastcoffea
