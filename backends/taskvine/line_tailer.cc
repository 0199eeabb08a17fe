#include "backends/taskvine/line_tailer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace taskvine {

LineTailer::LineTailer(std::string path, size_t block_bytes)
    : path_(std::move(path)), block_(block_bytes < 64 ? 64 : block_bytes) {}

LineTailer::~LineTailer() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<int64_t> LineTailer::Poll(
    absl::FunctionRef<void(absl::string_view, int64_t)> on_line) {
  if (fd_ < 0) {
    fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int error = errno;
      if (error == ENOENT)
        return absl::NotFoundError(absl::StrCat("log ", path_, " does not exist (yet)"));
      return absl::UnavailableError(absl::StrCat("cannot open log ", path_, ": ", strerror(error)));
    }
  }
  struct stat info;
  if (fstat(fd_, &info) == 0 && info.st_size < offset_) {
    Restart(absl::StrCat("truncated from ", offset_, " to ", info.st_size, " bytes"));
    if (lseek(fd_, 0, SEEK_SET) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot rewind log ", path_, ": ", strerror(errno)));
    }
  }
  absl::StatusOr<int64_t> total = ReadToEnd(on_line);
  if (!total.ok()) return total;
  // Rotated: the path now names another file. The old one is read to its end (above), then the
  // new one from its start.
  struct stat now;
  if (fstat(fd_, &info) == 0 && stat(path_.c_str(), &now) == 0 &&
      (now.st_ino != info.st_ino || now.st_dev != info.st_dev)) {
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      close(fd_);
      fd_ = fd;
      Restart(absl::StrCat("replaced (rotated) after ", offset_, " bytes"));
      absl::StatusOr<int64_t> more = ReadToEnd(on_line);
      if (!more.ok()) return more;
      *total += *more;
    }
  }
  return total;
}

void LineTailer::Restart(std::string reason) {
  ++restarts_;
  restart_reason_ = std::move(reason);
  offset_ = 0;
  line_number_ = 0;
  carry_.clear();
  carry_overlong_ = false;
}

absl::StatusOr<int64_t> LineTailer::ReadToEnd(
    absl::FunctionRef<void(absl::string_view, int64_t)> on_line) {
  int64_t total = 0;
  while (true) {
    const ssize_t n = read(fd_, block_.data(), block_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("cannot read log ", path_, ": ", strerror(errno)));
    }
    if (n == 0) break;
    offset_ += n;
    total += n;
    const char* p = block_.data();
    const char* end = p + n;
    while (p < end) {
      const char* newline = static_cast<const char*>(memchr(p, '\n', end - p));
      if (newline == nullptr) {
        // Incomplete line: keep it (bounded) until its newline arrives.
        const size_t room = kMaxLineBytes - carry_.size();
        const size_t take =
            static_cast<size_t>(end - p) < room ? static_cast<size_t>(end - p) : room;
        if (take < static_cast<size_t>(end - p)) carry_overlong_ = true;
        carry_.append(p, take);
        break;
      }
      ++line_number_;
      if (carry_.empty() && !carry_overlong_) {
        on_line(absl::string_view(p, newline - p), line_number_);
      } else {
        const size_t room = kMaxLineBytes - carry_.size();
        const size_t piece = static_cast<size_t>(newline - p);
        if (piece > room) carry_overlong_ = true;
        carry_.append(p, piece < room ? piece : room);
        if (carry_overlong_) ++overlong_lines_;
        on_line(carry_, line_number_);
        carry_.clear();
        carry_overlong_ = false;
      }
      p = newline + 1;
    }
  }
  return total;
}

}  // namespace taskvine
}  // namespace roastcoffea
