#include "backends/internal/periodic_thread.h"

#include <chrono>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace roastcoffea {
namespace backends_internal {

absl::Status CheckPeriod(absl::Duration period, absl::string_view what) {
  if (period > absl::ZeroDuration() && period != absl::InfiniteDuration()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be positive and finite, got ", absl::FormatDuration(period)));
}

absl::Time NextTickAfter(absl::Time due, absl::Duration period, absl::Time now) {
  const absl::Time next = due + period;
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread(&PeriodicThread::Loop, this, options, std::move(tick));
  return absl::OkStatus();
}

void PeriodicThread::Stop() {
  if (!running()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicThread::Loop(PeriodicThreadOptions options, std::function<void()> tick) {
  // Every instant is measured on the steady clock (written as an offset from `start`): a step
  // of the wall clock changes no wait.
  const auto steady_start = std::chrono::steady_clock::now();
  const absl::Time start = absl::Now();
  absl::Time due = options.tick_at_start ? start : start + options.period;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const auto until = steady_start + absl::ToChronoNanoseconds(due - start);
    if (wake_.wait_until(lock, until, [this] { return stop_; })) return;
    lock.unlock();
    tick();
    const absl::Time now =
        start + absl::FromChrono(std::chrono::steady_clock::now() - steady_start);
    due = NextTickAfter(due, options.period, now);
    lock.lock();
  }
}

}  // namespace backends_internal
}  // namespace roastcoffea
