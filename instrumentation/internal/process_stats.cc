#include "instrumentation/internal/process_stats.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "host/host_name.h"
#include "instrumentation/internal/thread_cpu_clock.h"

namespace roastcoffea {
namespace instrumentation_internal {

namespace {

bool IsStatmSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// The second field of statm text ("size resident shared text lib data dt", in pages): false
// when it is missing or not a non-negative decimal integer. By hand, with no allocation or
// Status on the way: it runs twice per chunk, and exact allocation counting
// (allocation_counting.h) must not see the instrumentation's own reads.
bool StatmResidentPages(const char* text, size_t length, int64_t* pages) {
  const char* p = text;
  const char* const end = text + length;
  while (p < end && IsStatmSpace(*p)) ++p;
  while (p < end && !IsStatmSpace(*p)) ++p;  // size
  while (p < end && IsStatmSpace(*p)) ++p;
  const char* const digits = p;
  int64_t value = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p) {
    if (p - digits >= 18) return false;  // beyond any real RSS; keeps value * 10 in range
    value = value * 10 + (*p - '0');
  }
  if (p == digits || (p < end && !IsStatmSpace(*p))) return false;
  *pages = value;
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view statm_contents,
                                                int64_t page_size_bytes) {
  if (page_size_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page size must be positive, got ", page_size_bytes));
  }
  int64_t resident_pages = 0;
  if (!StatmResidentPages(statm_contents.data(), statm_contents.size(), &resident_pages)) {
    return absl::InvalidArgumentError(
        absl::StrCat("statm contents have no valid resident-pages field (second field): \"",
                     statm_contents, "\""));
  }
  return resident_pages * page_size_bytes;
}

namespace {

// /proc/self/statm opened once and re-read with pread: saves the open + close of every
// reading (most of its cost). A fork makes the child's copy of the descriptor point at the
// parent's /proc entry, so the child forgets it (pthread_atfork) and opens its own.
std::atomic<int> cached_statm_fd{-1};
std::mutex statm_open_mutex;

void ForgetStatmInChild() { cached_statm_fd.store(-1, std::memory_order_relaxed); }

int CachedStatmFd() {
  const int fd = cached_statm_fd.load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  std::lock_guard<std::mutex> lock(statm_open_mutex);
  static const bool registered = (::pthread_atfork(nullptr, nullptr, &ForgetStatmInChild), true);
  (void)registered;
  int current = cached_statm_fd.load(std::memory_order_acquire);
  if (current < 0) {
    current = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (current >= 0) cached_statm_fd.store(current, std::memory_order_release);
  }
  return current;
}

}  // namespace

namespace {

int64_t PageSizeBytes() {
  static const int64_t page_size = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  return page_size;
}

// pread of the kept statm descriptor; -1 (errno set) when it cannot be opened or read.
ssize_t ReadStatm(char* buffer, size_t size) {
  const int fd = CachedStatmFd();
  if (fd < 0) return -1;
  ssize_t length;
  do {
    length = ::pread(fd, buffer, size, 0);
  } while (length < 0 && errno == EINTR);
  return length;
}

}  // namespace

absl::StatusOr<int64_t> ReadResidentMemoryBytes() {
  char buffer[256];
  const ssize_t length = ReadStatm(buffer, sizeof(buffer));
  if (length < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read /proc/self/statm: ", std::strerror(errno)));
  }
  return ParseStatmResidentBytes(absl::string_view(buffer, static_cast<size_t>(length)),
                                 PageSizeBytes());
}

int64_t ResidentMemoryBytesOrZero() {
  char buffer[256];
  const ssize_t length = ReadStatm(buffer, sizeof(buffer));
  int64_t pages = 0;
  if (length <= 0 || !StatmResidentPages(buffer, static_cast<size_t>(length), &pages)) return 0;
  return pages * PageSizeBytes();
}

int64_t ThreadCpuTimeNs() { return ThreadCpuClockNs(); }

int64_t SteadyTimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t UnixTimeNs() {
  // system_clock counts from the Unix epoch on every platform we build for (guaranteed by C++20).
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

// The worker name, computed once per process: a gethostname and a getpid system call per chunk
// otherwise. Replaced (the parent's copy leaks, one string) in a forked child, whose pid
// differs; the mutex is held across fork so that the child never inherits it locked.
std::atomic<const std::string*> cached_worker_name{nullptr};
std::mutex worker_name_mutex;

void LockWorkerName() { worker_name_mutex.lock(); }
void UnlockWorkerName() { worker_name_mutex.unlock(); }
void ForgetWorkerNameInChild() {
  cached_worker_name.store(nullptr, std::memory_order_relaxed);
  worker_name_mutex.unlock();
}

}  // namespace

const std::string& DefaultWorkerName() {
  const std::string* name = cached_worker_name.load(std::memory_order_acquire);
  if (name != nullptr) return *name;
  static const bool registered =
      (::pthread_atfork(&LockWorkerName, &UnlockWorkerName, &ForgetWorkerNameInChild), true);
  (void)registered;
  std::lock_guard<std::mutex> lock(worker_name_mutex);
  name = cached_worker_name.load(std::memory_order_acquire);
  if (name == nullptr) {
    name = new std::string(absl::StrCat(HostName(), ":", static_cast<int64_t>(::getpid())));
    cached_worker_name.store(name, std::memory_order_release);
  }
  return *name;
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
