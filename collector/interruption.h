// The process's SIGINT/SIGTERM policy while a measurement session runs: the first signal asks
// the run to stop (and reaches a command it forwards to); a second one exits at once. Internal
// to //collector (MeasurementSession owns one) and to collect's dataset preparation.
#ifndef ROASTCOFFEA_COLLECTOR_INTERRUPTION_H_
#define ROASTCOFFEA_COLLECTOR_INTERRUPTION_H_

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "host/clock.h"

namespace roastcoffea {

struct InterruptionOptions {
  // Prefix of the message a second signal prints ("collect").
  std::string program = "roastcoffea";
  // The exit status of a second signal.
  int exit_code = 130;
  // Run on the watcher thread when it notices the first signal (soon after it arrives).
  std::function<void()> on_signal;
  // Run on the watcher thread `deadline_delay` after the first signal, unless the
  // Interruption is destroyed first: the last resort when the run does not stop in time.
  absl::Duration deadline_delay = absl::InfiniteDuration();
  std::function<void()> on_deadline;
  // When the signal came (wall) and when `deadline_delay` is over (monotonic); null: the real
  // clock. Not owned; outlives the Interruption.
  Clock* clock = nullptr;
};

// Handlers, not blocked signals: every thread, in every phase (a connect, a join, a save),
// sees the signal at once. Process-wide: one at a time.
class Interruption {
 public:
  // FailedPrecondition when another Interruption is installed; the OS error otherwise.
  static absl::StatusOr<std::unique_ptr<Interruption>> Install(InterruptionOptions options);
  // Restores the previous handlers; a later signal has its usual effect.
  ~Interruption();
  Interruption(const Interruption&) = delete;
  Interruption& operator=(const Interruption&) = delete;

  // Async-signal-safe and lock-free: a first signal has arrived.
  static bool triggered();
  // SIGINT or SIGTERM; 0 before the first signal.
  static int signal_number();
  // When the first signal was noticed; InfiniteFuture before.
  absl::Time triggered_at() const;
  // Until the first signal or `deadline`; true when it arrived.
  bool WaitUntil(absl::Time deadline);
  // Signals sent with kill() (by another process, not the terminal, whose Ctrl-C already
  // reaches the whole process group) are passed on to `pid`, both the first and the second.
  // 0 stops forwarding.
  static void ForwardTo(pid_t pid);

 private:
  explicit Interruption(InterruptionOptions options);
  void Watch();

  const InterruptionOptions options_;
  Clock* const clock_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  StopToken stop_deadline_wait_;  // the destructor ends the watcher's wait for the deadline
  absl::Time triggered_at_ = absl::InfiniteFuture();
  std::thread watcher_;
};

// "SIGINT", "SIGTERM", or "signal N".
std::string SignalName(int signal_number);

// For the moments no Interruption is installed (start-up, between the dataset preparation and
// the session, after the session): SIGINT or SIGTERM prints "<program>: SIGINT while no
// measurement was running: exiting (exit <exit_code>)" and exits with `exit_code`, instead of
// the default silent death by the signal. An Interruption installed later takes over and puts
// this back when it ends. Call once, early in main.
void ExitOnSignalWhileNoMeasurementRuns(absl::string_view program, int exit_code);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_COLLECTOR_INTERRUPTION_H_
