#include "collector/run_stopwatch.h"

#include <sys/resource.h>

namespace roastcoffea {
namespace {

double ProcessCpuSeconds() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

RunStopwatch::RunStopwatch(Clock* clock)
    : clock_(clock != nullptr ? clock : Clock::Real()),
      start_(clock_->Now()),
      monotonic_start_(clock_->Monotonic()),
      cpu_start_(ProcessCpuSeconds()),
      host_start_(host::TakeHostSnapshot()) {}

RunWindow RunStopwatch::Stop() const {
  RunWindow window;
  window.process_cpu_seconds = ProcessCpuSeconds() - cpu_start_;
  window.elapsed_seconds = absl::ToDoubleSeconds(clock_->Monotonic() - monotonic_start_);
  window.start = start_;
  // The end is the start plus the monotonic elapsed time: a wall-clock step during the run
  // must not put the end before the start (or an hour after a 5 s run).
  window.end = start_ + absl::Seconds(window.elapsed_seconds);
  window.host_facts =
      host::HostFactsOverRun(host_start_, host::TakeHostSnapshot(), window.elapsed_seconds);
  return window;
}

}  // namespace roastcoffea
