#include "instrumentation/process_stats.h"

#include <fcntl.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace roastcoffea {
namespace instrumentation_internal {

absl::StatusOr<int64_t> ParseStatmResidentBytes(absl::string_view statm_contents,
                                                int64_t page_size_bytes) {
  if (page_size_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page size must be positive, got ", page_size_bytes));
  }
  // statm: "size resident shared text lib data dt", all in pages.
  std::vector<absl::string_view> fields =
      absl::StrSplit(statm_contents, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  int64_t resident_pages = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &resident_pages) || resident_pages < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("statm contents have no valid resident-pages field (second field): \"",
                     statm_contents, "\""));
  }
  return resident_pages * page_size_bytes;
}

absl::StatusOr<int64_t> ReadResidentMemoryBytes() {
  // Opened at every call rather than cached: a cached descriptor would keep pointing at the
  // parent's /proc entry after a fork.
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open /proc/self/statm: ", std::strerror(errno)));
  }
  char buffer[256];
  ssize_t length;
  do {
    length = ::read(fd, buffer, sizeof(buffer) - 1);
  } while (length < 0 && errno == EINTR);
  const int read_errno = errno;
  ::close(fd);
  if (length < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read /proc/self/statm: ", std::strerror(read_errno)));
  }
  return ParseStatmResidentBytes(absl::string_view(buffer, static_cast<size_t>(length)),
                                 static_cast<int64_t>(::sysconf(_SC_PAGESIZE)));
}

int64_t ResidentMemoryBytesOrZero() {
  absl::StatusOr<int64_t> bytes = ReadResidentMemoryBytes();
  return bytes.ok() ? *bytes : 0;
}

int64_t ThreadCpuTimeNs() {
  timespec ts;
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

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
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::strcpy(host, "unknown-host");
  }
  return absl::StrCat(host, ":", static_cast<int64_t>(::getpid()));
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
