#include "backends/internal/periodic_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace backends_internal {

absl::Status CheckPeriod(absl::Duration period, absl::string_view what) {
  if (period > absl::ZeroDuration() && period != absl::InfiniteDuration()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be positive and finite, got ", absl::FormatDuration(period)));
}

absl::Duration NextTickAfter(absl::Duration due, absl::Duration period, absl::Duration now) {
  const absl::Duration next = due + period;
  if (next > now) return next;
  // Skip the ticks missed while the last one ran: the first due time after now.
  absl::Duration remainder;
  const int64_t missed = absl::IDivDuration(now - next, period, &remainder);
  return next + (missed + 1) * period;
}

PeriodicThread::~PeriodicThread() { Stop(); }

absl::Status PeriodicThread::Start(PeriodicThreadOptions options, std::function<void()> tick) {
  if (absl::Status valid = CheckPeriod(options.period, "period"); !valid.ok()) return valid;
  if (running()) return absl::FailedPreconditionError("the periodic thread is already running");
  if (options.clock == nullptr) options.clock = Clock::Real();
  stop_.Reset();
  thread_ = std::thread(&PeriodicThread::Loop, this, options, std::move(tick));
  return absl::OkStatus();
}

void PeriodicThread::Stop() {
  if (!running()) return;
  stop_.RequestStop();
  thread_.join();
}

void PeriodicThread::Loop(PeriodicThreadOptions options, std::function<void()> tick) {
  Clock& clock = *options.clock;
  const absl::Duration start = clock.Monotonic();
  absl::Duration due = options.tick_at_start ? start : start + options.period;
  while (!clock.WaitUntil(due, stop_)) {
    tick();
    due = NextTickAfter(due, options.period, clock.Monotonic());
  }
}

}  // namespace backends_internal
}  // namespace roastcoffea
