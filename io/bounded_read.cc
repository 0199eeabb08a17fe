#include "io/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace roastcoffea {
namespace {

absl::Status OsError(int error, absl::string_view doing, const std::string& path) {
  const std::string message =
      absl::StrCat("cannot ", doing, " '", path, "': ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(absl::StrCat("'", path, "' does not exist"));
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

absl::string_view KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

absl::Status TooLarge(const std::string& path, absl::string_view size,
                      const BoundedReadOptions& options) {
  return absl::ResourceExhaustedError(absl::StrCat("'", path, "' is ", size, ", over the ",
                                                   ByteCountText(options.max_bytes), " limit for ",
                                                   options.what));
}

}  // namespace

std::string ByteCountText(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  if (value == static_cast<double>(static_cast<int64_t>(value))) {
    return absl::StrCat(static_cast<int64_t>(value), " ", kUnits[unit]);
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedReadOptions& options) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return OsError(errno, "open", path);
  auto close_fd = absl::MakeCleanup([fd] { close(fd); });
  struct stat info;
  if (fstat(fd, &info) != 0) return OsError(errno, "stat", path);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is ", KindOf(info.st_mode), ", not a regular file"));
  }
  if (options.size_from_stat && info.st_size > options.max_bytes) {
    return TooLarge(path, ByteCountText(info.st_size), options);
  }
  std::string contents;
  if (options.size_from_stat) contents.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t count = read(fd, buffer, sizeof(buffer));
    if (count < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "read", path);
    }
    if (count == 0) break;
    // The limit holds for files that grow while read (or lie about their size).
    if (static_cast<int64_t>(contents.size()) + count > options.max_bytes) {
      return TooLarge(path, absl::StrCat("more than ", ByteCountText(options.max_bytes)), options);
    }
    contents.append(buffer, static_cast<size_t>(count));
  }
  return contents;
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes,
                                            absl::string_view what) {
  BoundedReadOptions options;
  options.max_bytes = max_bytes;
  options.what = what;
  return ReadBoundedFile(path, options);
}

}  // namespace roastcoffea
