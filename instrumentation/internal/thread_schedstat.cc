#include "instrumentation/internal/thread_schedstat.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>

namespace roastcoffea {
namespace instrumentation_internal {
namespace {

enum class FileMode : uint8_t { kUnopened = 0, kOpen, kUnavailable, kExited };

// Per thread. Trivially constructible and destructible, so that the hot path is a plain TLS
// access without an init guard; SchedstatCloser (below) closes the descriptor at thread exit.
// Threads with an open descriptor are linked into a list, so that a forked child can close the
// ones it inherited.
struct SchedstatFile {
  FileMode mode;
  int fd;
  SchedstatFile* prev;
  SchedstatFile* next;
};
thread_local SchedstatFile tls_file = {};

std::mutex open_files_mutex;
SchedstatFile* open_files = nullptr;  // guarded by open_files_mutex
int open_file_count = 0;              // guarded by open_files_mutex

void UnlinkLocked(SchedstatFile& file) {
  if (file.prev != nullptr) file.prev->next = file.next;
  if (file.next != nullptr) file.next->prev = file.prev;
  if (open_files == &file) open_files = file.next;
  file.prev = file.next = nullptr;
  --open_file_count;
}

void LockOpenFiles() { open_files_mutex.lock(); }
void UnlockOpenFiles() { open_files_mutex.unlock(); }

// In a forked child only the forking thread exists, and every inherited descriptor names a
// thread of the parent: close them all; the forking thread reopens its own at its next reading.
void ForgetOpenFilesInChild() {
  for (SchedstatFile* file = open_files; file != nullptr;) {
    SchedstatFile* next = file->next;
    ::close(file->fd);
    file->prev = file->next = nullptr;
    file = next;
  }
  open_files = nullptr;
  open_file_count = 0;
  if (tls_file.mode != FileMode::kExited) {
    tls_file.mode = FileMode::kUnopened;  // a child may have the file its parent lacked
    tls_file.fd = -1;
  }
  UnlockOpenFiles();
}

void RegisterForkHandlers() {
  static const bool registered =
      (::pthread_atfork(&LockOpenFiles, &UnlockOpenFiles, &ForgetOpenFilesInChild), true);
  (void)registered;
}

void Close(SchedstatFile& file) {
  if (file.mode != FileMode::kOpen) return;
  {
    std::lock_guard<std::mutex> lock(open_files_mutex);
    UnlinkLocked(file);
  }
  ::close(file.fd);
  file.fd = -1;
}

struct SchedstatCloser {
  ~SchedstatCloser() {
    Close(tls_file);
    tls_file.mode = FileMode::kExited;  // readings from later destructors: unavailable
  }
};

int OpenCallingThreadsFile() {
  int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  // Kernels before 3.17 have no /proc/thread-self.
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat",
                static_cast<long>(::syscall(SYS_gettid)));
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

void Open(SchedstatFile& file) {
  thread_local SchedstatCloser closer;  // constructed here once per thread
  (void)closer;
  RegisterForkHandlers();  // before the first descriptor exists
  file.fd = -1;
  file.mode = FileMode::kUnavailable;
  const int fd = OpenCallingThreadsFile();
  if (fd < 0) return;
  std::lock_guard<std::mutex> lock(open_files_mutex);
  file.fd = fd;
  file.mode = FileMode::kOpen;
  file.prev = nullptr;
  file.next = open_files;
  if (open_files != nullptr) open_files->prev = &file;
  open_files = &file;
  ++open_file_count;
}

// Reads one non-negative decimal integer at `*cursor` (after spaces), advancing past it.
bool ParseField(const char** cursor, const char* end, int64_t* value) {
  const char* p = *cursor;
  while (p < end && *p == ' ') ++p;
  if (p == end || *p < '0' || *p > '9') return false;
  uint64_t parsed = 0;
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  for (; p < end && *p >= '0' && *p <= '9'; ++p) {
    const uint64_t digit = static_cast<uint64_t>(*p - '0');
    if (parsed > (kMax - digit) / 10) return false;
    parsed = parsed * 10 + digit;
  }
  *value = static_cast<int64_t>(parsed);
  *cursor = p;
  return true;
}

}  // namespace

ThreadSchedstat ParseThreadSchedstat(const char* text, size_t length) {
  ThreadSchedstat stats;
  const char* cursor = text;
  const char* const end = text + length;
  if (!ParseField(&cursor, end, &stats.exec_runtime_ns) ||
      !ParseField(&cursor, end, &stats.run_delay_ns) ||
      !ParseField(&cursor, end, &stats.timeslices)) {
    return ThreadSchedstat{};
  }
  // The kernel ends the line with '\n': without it the read may have cut the last number.
  if (cursor == end || (*cursor != '\n' && *cursor != ' ')) return ThreadSchedstat{};
  // "0 0 0": the kernel keeps no scheduler statistics (sched_info off).
  if (stats.exec_runtime_ns == 0 && stats.run_delay_ns == 0 && stats.timeslices == 0) {
    return ThreadSchedstat{};
  }
  stats.available = true;
  return stats;
}

ThreadSchedstat ReadThreadSchedstat() {
  SchedstatFile& file = tls_file;
  if (file.mode == FileMode::kUnopened) Open(file);
  if (file.mode != FileMode::kOpen) return ThreadSchedstat{};
  char buffer[96];  // three 64-bit numbers take at most 63 bytes with their separators
  ssize_t length;
  do {
    length = ::pread(file.fd, buffer, sizeof(buffer), 0);
  } while (length < 0 && errno == EINTR);
  if (length <= 0) return ThreadSchedstat{};
  return ParseThreadSchedstat(buffer, static_cast<size_t>(length));
}

int ThreadSchedstatOpenDescriptors() {
  std::lock_guard<std::mutex> lock(open_files_mutex);
  return open_file_count;
}

}  // namespace instrumentation_internal
}  // namespace roastcoffea
