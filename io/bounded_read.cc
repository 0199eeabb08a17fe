#include "io/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

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

absl::Status TooLarge(const std::string& path, absl::string_view size, int64_t max_bytes,
                      absl::string_view what) {
  return absl::ResourceExhaustedError(absl::StrCat("'", path, "' is ", size, ", over the ",
                                                   ByteCountText(max_bytes), " limit for ", what));
}

absl::Status NotARegularFile(const std::string& path, mode_t mode) {
  return absl::FailedPreconditionError(
      absl::StrCat("'", path, "' is ", FileTypeText(mode), ", not a regular file"));
}

}  // namespace

absl::string_view FileTypeText(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

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

absl::StatusOr<BoundedFileReader> BoundedFileReader::Open(const std::string& path,
                                                          const BoundedReadOptions& options) {
  // The type first: a FIFO, a device or a directory is refused without being opened.
  struct stat checked;
  if (stat(path.c_str(), &checked) != 0) return OsError(errno, "stat", path);
  if (!S_ISREG(checked.st_mode)) return NotARegularFile(path, checked.st_mode);
  // O_NONBLOCK: should the path have become a FIFO since, opening it must not wait for a writer.
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return OsError(errno, "open", path);
  auto close_fd = absl::MakeCleanup([fd] { close(fd); });
  struct stat info;
  if (fstat(fd, &info) != 0) return OsError(errno, "stat", path);
  if (!S_ISREG(info.st_mode)) return NotARegularFile(path, info.st_mode);
  if (info.st_dev != checked.st_dev || info.st_ino != checked.st_ino) {
    return absl::UnavailableError(
        absl::StrCat("'", path, "' was replaced while it was opened; not read"));
  }
  if (options.size_from_stat && info.st_size > options.max_bytes) {
    return TooLarge(path, ByteCountText(info.st_size), options.max_bytes, options.what);
  }
  // Reads block on a regular file: the non-blocking flag was only for the open.
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::move(close_fd).Cancel();
  return BoundedFileReader(fd, path, options, options.size_from_stat ? info.st_size : 0);
}

BoundedFileReader::BoundedFileReader(int fd, std::string path, const BoundedReadOptions& options,
                                     int64_t size)
    : fd_(fd),
      path_(std::move(path)),
      max_bytes_(options.max_bytes),
      what_(options.what),
      size_(size) {}

BoundedFileReader::BoundedFileReader(BoundedFileReader&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      max_bytes_(other.max_bytes_),
      what_(std::move(other.what_)),
      size_(other.size_),
      read_(other.read_) {}

BoundedFileReader& BoundedFileReader::operator=(BoundedFileReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    max_bytes_ = other.max_bytes_;
    what_ = std::move(other.what_);
    size_ = other.size_;
    read_ = other.read_;
  }
  return *this;
}

BoundedFileReader::~BoundedFileReader() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<size_t> BoundedFileReader::ReadSome(size_t max_bytes, std::string* out) {
  const size_t old_size = out->size();
  out->resize(old_size + max_bytes);
  ssize_t count;
  do {
    count = read(fd_, &(*out)[old_size], max_bytes);
  } while (count < 0 && errno == EINTR);
  out->resize(old_size + (count > 0 ? static_cast<size_t>(count) : 0));
  if (count < 0) return OsError(errno, "read", path_);
  // The limit holds for files that grow while read (or lie about their size).
  if (read_ + count > max_bytes_) {
    return TooLarge(path_, absl::StrCat("more than ", ByteCountText(max_bytes_)), max_bytes_,
                    what_);
  }
  read_ += count;
  return static_cast<size_t>(count);
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedReadOptions& options) {
  absl::StatusOr<BoundedFileReader> reader = BoundedFileReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  std::string contents;
  if (options.size_from_stat) contents.reserve(static_cast<size_t>(reader->size()));
  while (true) {
    absl::StatusOr<size_t> count = reader->ReadSome(size_t{1} << 16, &contents);
    if (!count.ok()) return count.status();
    if (*count == 0) break;
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
