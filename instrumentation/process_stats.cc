#include "instrumentation/process_stats.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "host/host_name.h"
#include "instrumentation/thread_cpu_clock.h"

namespace roastcoffea {
namespace instrumentation_internal {

absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view statm_contents,
                                                int64_t page_size_bytes) {
  if (page_size_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page size must be positive, got ", page_size_bytes));
  }
  // statm: "size resident shared text lib data dt", all in pages.
  // Split by hand: no allocation on the success path, so that exact allocation counting
  // (allocation_counting.h) does not see the instrumentation's own reads.
  absl::string_view fields[2];
  int found = 0;
  absl::string_view rest = statm_contents;
  while (found < 2 && !rest.empty()) {
    const size_t begin = rest.find_first_not_of(" \t\n");
    if (begin == absl::string_view::npos) break;
    rest.remove_prefix(begin);
    const size_t end = std::min(rest.find_first_of(" \t\n"), rest.size());
    fields[found++] = rest.substr(0, end);
    rest.remove_prefix(end);
  }
  int64_t resident_pages = 0;
  if (found < 2 || !absl::SimpleAtoi(fields[1], &resident_pages) || resident_pages < 0) {
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

absl::StatusOr<int64_t> ReadResidentMemoryBytes() {
  const int fd = CachedStatmFd();
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open /proc/self/statm: ", std::strerror(errno)));
  }
  char buffer[256];
  ssize_t length;
  do {
    length = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  } while (length < 0 && errno == EINTR);
  if (length < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read /proc/self/statm: ", std::strerror(errno)));
  }
  static const int64_t page_size = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  return ParseStatmResidentBytes(absl::string_view(buffer, static_cast<size_t>(length)), page_size);
}

int64_t ResidentMemoryBytesOrZero() {
  absl::StatusOr<int64_t> bytes = ReadResidentMemoryBytes();
  return bytes.ok() ? *bytes : 0;
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

std::string DefaultWorkerName() {
  return absl::StrCat(HostName(), ":", static_cast<int64_t>(::getpid()));
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
