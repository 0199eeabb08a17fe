#include "instrumentation/internal/thread_cpu_clock.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

enum class ThreadMode : uint8_t { kUnchosen = 0, kClockGettime, kPerf, kExited };

// Per thread. Trivially constructible and destructible, so that the hot path is a plain TLS
// access without an init guard; ThreadClockReleaser (below) releases it at thread exit.
// Threads with an open event are linked into a list, so that a forked child can close the
// descriptors it inherited.
struct ThreadClock {
  ThreadMode mode;
  int fd;
  const volatile perf_event_mmap_page* page;
  int64_t base_ns;  // the thread's clock_gettime value minus the perf value at first use
  ThreadClock* prev;
  ThreadClock* next;
};
thread_local ThreadClock tls_clock = {};

std::mutex open_events_mutex;
ThreadClock* open_events = nullptr;  // guarded by open_events_mutex
int open_event_count = 0;            // guarded by open_events_mutex

std::atomic<bool> test_allow_perf_event{true};
std::atomic<bool> test_keep_without_user_time{false};

int64_t ClockGettimeNs() {
  timespec ts;
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

// The cumulative steal time of /proc/stat's first line ("cpu  user nice system idle iowait
// irq softirq steal ..."), in ticks; 0 when it cannot be read.
int64_t ProcStatStealTicks() {
  const int fd = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[512];
  const ssize_t length = ::read(fd, buffer, sizeof(buffer) - 1);
  ::close(fd);
  if (length <= 0) return 0;
  buffer[length] = '\0';
  if (std::strncmp(buffer, "cpu ", 4) != 0) return 0;
  char* cursor = buffer + 4;
  int64_t value = 0;
  for (int field = 0; field < 8; ++field) {
    char* end = nullptr;
    value = std::strtoll(cursor, &end, 10);
    if (end == cursor) return 0;
    cursor = end;
  }
  return value;
}

void UnlinkLocked(ThreadClock& clock) {
  if (clock.prev != nullptr) clock.prev->next = clock.next;
  if (clock.next != nullptr) clock.next->prev = clock.prev;
  if (open_events == &clock) open_events = clock.next;
  clock.prev = clock.next = nullptr;
  --open_event_count;
}

void LockOpenEvents() { open_events_mutex.lock(); }
void UnlockOpenEvents() { open_events_mutex.unlock(); }

// In a forked child only the forking thread exists, and perf mappings are not inherited
// (VM_DONTCOPY): close every inherited descriptor and let this thread open its own event.
void ForgetOpenEventsInChild() {
  for (ThreadClock* clock = open_events; clock != nullptr;) {
    ThreadClock* next = clock->next;
    ::close(clock->fd);
    clock->prev = clock->next = nullptr;
    clock = next;
  }
  open_events = nullptr;
  open_event_count = 0;
  if (tls_clock.mode == ThreadMode::kPerf) {
    tls_clock.mode = ThreadMode::kUnchosen;
    tls_clock.fd = -1;
    tls_clock.page = nullptr;
  }
  UnlockOpenEvents();
}

// Whether this process may use the perf source at all; decided once (registering the fork
// handlers first, before any event is opened).
bool PerfSourceAllowed() {
#if defined(__x86_64__)
  static const bool allowed = [] {
    ::pthread_atfork(&LockOpenEvents, &UnlockOpenEvents, &ForgetOpenEventsInChild);
    const char* choice = std::getenv("ROASTCOFFEA_THREAD_CPU_CLOCK");
    if (choice != nullptr && std::strcmp(choice, "clock_gettime") == 0) return false;
    // The task clock counts stolen time, CLOCK_THREAD_CPUTIME_ID does not.
    return ProcStatStealTicks() == 0;
  }();
  return allowed || test_keep_without_user_time.load(std::memory_order_relaxed);
#else
  return false;  // ReadTsc is x86 only
#endif
}

void Release(ThreadClock& clock) {
  if (clock.mode != ThreadMode::kPerf) return;
  {
    std::lock_guard<std::mutex> lock(open_events_mutex);
    UnlinkLocked(clock);
  }
  ::munmap(const_cast<perf_event_mmap_page*>(clock.page), static_cast<size_t>(::getpagesize()));
  ::close(clock.fd);
  clock.fd = -1;
  clock.page = nullptr;
  clock.mode = ThreadMode::kClockGettime;
}

struct ThreadClockReleaser {
  ~ThreadClockReleaser() {
    Release(tls_clock);
    tls_clock.mode = ThreadMode::kExited;  // readings from later destructors: clock_gettime
  }
};

// Opens this thread's task clock and maps its first page; leaves `clock` on clock_gettime when
// any step fails (perf_event_open denied: EACCES, EPERM under seccomp, ENOSYS, ENOENT).
void TryOpenPerfEvent(ThreadClock& clock) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2; kernel time is still counted
  attr.exclude_hv = 1;
  const int fd =
      static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */,
                                 -1 /* no group */, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return;
  const size_t page_size = static_cast<size_t>(::getpagesize());
  void* mapping = ::mmap(nullptr, page_size, PROT_READ, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    ::close(fd);
    return;
  }
  const auto* page = static_cast<const volatile perf_event_mmap_page*>(mapping);
  int64_t perf_ns = 0;
  if (!ReadPerfTaskClockNs(*page, &ReadTsc, &perf_ns)) {
    if (!test_keep_without_user_time.load(std::memory_order_relaxed)) {
      ::munmap(mapping, page_size);
      ::close(fd);
      return;
    }
    perf_ns = static_cast<int64_t>(page->time_running);
  }
  clock.base_ns = ClockGettimeNs() - perf_ns;
  clock.fd = fd;
  clock.page = page;
  clock.mode = ThreadMode::kPerf;
  std::lock_guard<std::mutex> lock(open_events_mutex);
  clock.prev = nullptr;
  clock.next = open_events;
  if (open_events != nullptr) open_events->prev = &clock;
  open_events = &clock;
  ++open_event_count;
}

void ChooseSource(ThreadClock& clock) {
  thread_local ThreadClockReleaser releaser;  // constructed here once per thread
  (void)releaser;
  clock.mode = ThreadMode::kClockGettime;
  if (test_allow_perf_event.load(std::memory_order_relaxed) && PerfSourceAllowed()) {
    TryOpenPerfEvent(clock);
  }
}

// The perf page stopped publishing its TSC conversion (the kernel found the TSC unstable):
// this thread continues on clock_gettime.
int64_t PerfReadingUnavailable(ThreadClock& clock) {
  if (test_keep_without_user_time.load(std::memory_order_relaxed)) {
    return clock.base_ns + static_cast<int64_t>(clock.page->time_running);
  }
  Release(clock);
  return ClockGettimeNs();
}

}  // namespace

const char* ThreadCpuClockSourceName(ThreadCpuClockSource source) {
  switch (source) {
    case ThreadCpuClockSource::kClockGettime:
      return "clock_gettime";
    case ThreadCpuClockSource::kPerfUserPage:
      return "perf_user_page";
  }
  return "unknown";
}

bool ReadPerfTaskClockNs(const volatile perf_event_mmap_page& page, uint64_t (*read_tsc)(),
                         int64_t* ns) {
  uint32_t sequence;
  uint64_t running;
  uint64_t since_update;
  do {
    sequence = page.lock;
    // Compiler barriers, as in the kernel's example reader: x86 (the only architecture that
    // reads a live page) does not reorder loads with loads.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (!page.cap_user_time) return false;
    running = page.time_running;
    const uint16_t shift = page.time_shift;
    const uint32_t mult = page.time_mult;
    const uint64_t offset = page.time_offset;
    uint64_t cycles = read_tsc();
    if (page.cap_user_time_short) {
      const uint64_t last_cycles = page.time_cycles;
      cycles = last_cycles + ((cycles - last_cycles) & page.time_mask);
    }
    // cycles -> ns as the kernel does it (mult * cycles >> shift without overflowing 64 bits).
    const uint64_t quotient = cycles >> shift;
    const uint64_t remainder = cycles & ((uint64_t{1} << shift) - 1);
    since_update = offset + quotient * mult + ((remainder * mult) >> shift);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } while ((sequence & 1) != 0 || page.lock != sequence);
  *ns = static_cast<int64_t>(running + since_update);
  return true;
}

int64_t ThreadCpuClockNs() {
  ThreadClock& clock = tls_clock;
  for (;;) {
    switch (clock.mode) {
      case ThreadMode::kPerf: {
        int64_t ns;
        if (ReadPerfTaskClockNs(*clock.page, &ReadTsc, &ns)) return clock.base_ns + ns;
        return PerfReadingUnavailable(clock);
      }
      case ThreadMode::kClockGettime:
      case ThreadMode::kExited:
        return ClockGettimeNs();
      case ThreadMode::kUnchosen:
        ChooseSource(clock);
        break;
    }
  }
}

ThreadCpuClockSource CallingThreadCpuClockSource() {
  if (tls_clock.mode == ThreadMode::kUnchosen) ChooseSource(tls_clock);
  return tls_clock.mode == ThreadMode::kPerf ? ThreadCpuClockSource::kPerfUserPage
                                             : ThreadCpuClockSource::kClockGettime;
}

void SetThreadCpuClockTestOptions(const ThreadCpuClockTestOptions& options) {
  test_allow_perf_event.store(options.allow_perf_event, std::memory_order_relaxed);
  test_keep_without_user_time.store(options.keep_perf_event_without_user_time,
                                    std::memory_order_relaxed);
}

int ThreadCpuClockOpenPerfEvents() {
  std::lock_guard<std::mutex> lock(open_events_mutex);
  return open_event_count;
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
