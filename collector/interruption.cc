#include "collector/interruption.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace roastcoffea {
namespace {

// State the handler reads: only atomics and plain buffers written before the handlers exist.
std::atomic<bool> g_installed{false};
std::atomic<int> g_count{0};
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_forward{0};
// The first signal came from kill(), and whether it has been passed on: it may arrive before the
// command's pid is known (ForwardTo passes it on then).
std::atomic<bool> g_first_from_kill{false};
std::atomic<bool> g_first_forwarded{false};
int g_wake[2] = {-1, -1};
char g_second_message[256];
size_t g_second_length = 0;
int g_exit_code = 130;
struct sigaction g_previous_int;
struct sigaction g_previous_term;

void Handle(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  // Ctrl-C from the terminal reached the command already (same process group).
  const bool from_kill = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  const bool first = g_count.load() == 0;
  if (first) {
    g_signal.store(signal_number);
    g_first_from_kill.store(from_kill);
  }
  const pid_t forward = g_forward.load();
  if (forward > 0 && from_kill && (!first || !g_first_forwarded.exchange(true))) {
    kill(forward, signal_number);
  }
  if (g_count.fetch_add(1) == 0) {
    const char byte = 1;
    if (write(g_wake[1], &byte, 1) < 0) {
      // The pipe is non-blocking and one byte is enough: a full pipe has woken the watcher.
    }
    errno = saved_errno;
    return;
  }
  // "\n" first: a progress line being drawn ends before the message.
  if (write(STDERR_FILENO, g_second_message, g_second_length) < 0) {
    // Nothing more can be done about a closed stderr: exit anyway.
  }
  _exit(g_exit_code);
}

// ExitOnSignalWhileNoMeasurementRuns: one message per signal, formatted before any handler.
char g_idle_int_message[256];
size_t g_idle_int_length = 0;
char g_idle_term_message[256];
size_t g_idle_term_length = 0;
int g_idle_exit_code = 130;

void HandleWhileIdle(int signal_number) {
  const bool interrupt = signal_number == SIGINT;
  if (write(STDERR_FILENO, interrupt ? g_idle_int_message : g_idle_term_message,
            interrupt ? g_idle_int_length : g_idle_term_length) < 0) {
    // A closed stderr: exit anyway.
  }
  _exit(g_idle_exit_code);
}

size_t FormatIdleMessage(absl::string_view program, const char* signal, int exit_code, char* out,
                         size_t capacity) {
  const std::string text =
      absl::StrCat("\n", program, ": ", signal, " while no measurement was running: exiting (exit ",
                   exit_code, ")\n");
  const size_t length = std::min(text.size(), capacity);
  std::memcpy(out, text.data(), length);
  return length;
}

}  // namespace

void ExitOnSignalWhileNoMeasurementRuns(absl::string_view program, int exit_code) {
  g_idle_exit_code = exit_code;
  g_idle_int_length = FormatIdleMessage(program, "SIGINT", exit_code, g_idle_int_message,
                                        sizeof(g_idle_int_message));
  g_idle_term_length = FormatIdleMessage(program, "SIGTERM", exit_code, g_idle_term_message,
                                         sizeof(g_idle_term_message));
  struct sigaction action = {};
  action.sa_handler = HandleWhileIdle;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string SignalName(int signal_number) {
  if (signal_number == SIGINT) return "SIGINT";
  if (signal_number == SIGTERM) return "SIGTERM";
  return absl::StrCat("signal ", signal_number);
}

absl::StatusOr<std::unique_ptr<Interruption>> Interruption::Install(InterruptionOptions options) {
  bool expected = false;
  if (!g_installed.compare_exchange_strong(expected, true)) {
    return absl::FailedPreconditionError(
        "a measurement session is already handling SIGINT and SIGTERM in this process");
  }
  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_installed.store(false);
    return absl::InternalError(absl::StrCat("cannot create a pipe: ", std::strerror(errno)));
  }
  g_count.store(0);
  g_signal.store(0);
  g_forward.store(0);
  g_first_from_kill.store(false);
  g_first_forwarded.store(false);
  g_exit_code = options.exit_code;
  const std::string message =
      absl::StrCat("\n", options.program, ": second signal: exiting at once (exit ",
                   options.exit_code, "), without saving\n");
  g_second_length = std::min(message.size(), sizeof(g_second_message));
  std::memcpy(g_second_message, message.data(), g_second_length);

  std::unique_ptr<Interruption> interruption(new Interruption(std::move(options)));
  struct sigaction action = {};
  action.sa_sigaction = Handle;
  // SA_RESTART: code that does not expect EINTR goes on as before; the run polls triggered().
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  return interruption;
}

Interruption::Interruption(InterruptionOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      watcher_([this] { Watch(); }) {}

Interruption::~Interruption() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  stop_deadline_wait_.RequestStop();
  watcher_.join();
  close(g_wake[0]);
  close(g_wake[1]);
  g_forward.store(0);
  g_count.store(0);
  g_signal.store(0);
  g_installed.store(false);
}

bool Interruption::triggered() { return g_count.load() > 0; }

int Interruption::signal_number() { return g_signal.load(); }

void Interruption::ForwardTo(pid_t pid) {
  g_forward.store(pid);
  if (pid > 0 && g_count.load() > 0 && g_first_from_kill.load() &&
      !g_first_forwarded.exchange(true)) {
    kill(pid, g_signal.load());
  }
}

absl::Time Interruption::triggered_at() const {
  std::lock_guard<std::mutex> lock(mu_);
  return triggered_at_;
}

bool Interruption::WaitUntil(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  while (triggered_at_ == absl::InfiniteFuture() && !stopping_) {
    const absl::Time now = clock_->Now();
    if (now >= deadline) break;
    // Bounded slices: absl::Time and the condition variable's clock need not agree.
    changed_.wait_for(lock, std::chrono::milliseconds(std::min<int64_t>(
                                100, absl::ToInt64Milliseconds(deadline - now) + 1)));
  }
  return triggered_at_ != absl::InfiniteFuture();
}

void Interruption::Watch() {
  pollfd wake = {g_wake[0], POLLIN, 0};
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    if (poll(&wake, 1, 100) > 0) break;
  }
  // Monotonic: a step of the wall clock during the grace period neither stretches nor cuts it.
  absl::Duration deadline;
  {
    std::lock_guard<std::mutex> lock(mu_);
    triggered_at_ = clock_->Now();
    deadline = clock_->Monotonic() + options_.deadline_delay;
  }
  changed_.notify_all();
  if (options_.on_signal) options_.on_signal();
  if (!options_.on_deadline || options_.deadline_delay == absl::InfiniteDuration()) return;
  if (clock_->WaitUntil(deadline, stop_deadline_wait_)) return;  // destroyed first
  options_.on_deadline();
}

}  // namespace roastcoffea
