#include "backends/taskvine/line_tailer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "io/bounded_read.h"

namespace roastcoffea {
namespace taskvine {

LineTailer::LineTailer(std::string path, size_t block_bytes, int64_t max_bytes_per_poll)
    : path_(std::move(path)),
      max_bytes_per_poll_(max_bytes_per_poll < 1 ? 1 : max_bytes_per_poll),
      block_(block_bytes < 64 ? 64 : block_bytes) {}

LineTailer::~LineTailer() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<int> LineTailer::OpenRegular(struct stat* info) {
  const auto failed = [this](int error, absl::string_view doing) -> absl::Status {
    if (error == ENOENT || error == ENOTDIR)
      return absl::NotFoundError(absl::StrCat("log ", path_, " does not exist (yet)"));
    return absl::UnavailableError(
        absl::StrCat("cannot ", doing, " log ", path_, ": ", strerror(error)));
  };
  // stat before open: opening a FIFO would block until a writer comes, a device never ends.
  struct stat before;
  if (stat(path_.c_str(), &before) != 0) return failed(errno, "stat");
  if (!S_ISREG(before.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("log ", path_, " is ", FileTypeText(before.st_mode), ", not a regular file"));
  }
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return failed(errno, "open");
  // The path may have been replaced between stat and open: what was opened must be that file.
  if (fstat(fd, info) != 0 || !S_ISREG(info->st_mode) || info->st_ino != before.st_ino ||
      info->st_dev != before.st_dev) {
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("log ", path_, " was replaced while it was being opened"));
  }
  return fd;
}

absl::StatusOr<int64_t> LineTailer::Poll(
    absl::FunctionRef<void(absl::string_view, int64_t)> on_line) {
  more_pending_ = false;
  if (fd_ < 0) {
    struct stat opened;
    absl::StatusOr<int> fd = OpenRegular(&opened);
    if (!fd.ok()) return fd.status();
    fd_ = *fd;
    struct stat link;
    path_was_link_ = lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  }
  struct stat info;
  if (fstat(fd_, &info) == 0 && info.st_size < offset_) {
    Restart(absl::StrCat("truncated from ", offset_, " to ", info.st_size, " bytes"));
    if (lseek(fd_, 0, SEEK_SET) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot rewind log ", path_, ": ", strerror(errno)));
    }
  }
  absl::StatusOr<int64_t> total = ReadToEnd(on_line, max_bytes_per_poll_);
  if (!total.ok() || more_pending_) return total;
  // Rotated: the path now names another file. The old one is read to its end (above), then the
  // new one from its start, if it is a regular file; a path that vanished leaves the old file.
  struct stat now;
  if (fstat(fd_, &info) != 0) return total;
  if (stat(path_.c_str(), &now) != 0) {
    path_missing_ = errno == ENOENT || errno == ENOTDIR;
    return total;
  }
  path_missing_ = false;
  if (now.st_ino == info.st_ino && now.st_dev == info.st_dev) return total;
  std::string problem;
  if (!S_ISREG(now.st_mode)) {
    problem = std::string(FileTypeText(now.st_mode));
  } else if (struct stat link;
             !path_was_link_ && lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // A log that was a file is now a link elsewhere: not a rotation the manager does.
    char target[256] = {};
    const ssize_t n = readlink(path_.c_str(), target, sizeof(target) - 1);
    problem = absl::StrCat("a symbolic link to ",
                           n > 0 ? absl::CEscape(absl::string_view(target, n)) : "?");
  }
  struct stat opened;
  absl::StatusOr<int> fd = problem.empty() ? OpenRegular(&opened)
                                           : absl::StatusOr<int>(absl::FailedPreconditionError(""));
  if (!fd.ok()) {
    if (absl::IsFailedPrecondition(fd.status()) && problem.empty()) {
      // Replaced again between the stat above and OpenRegular's.
      problem = "something other than a regular file";
    }
    if (!problem.empty() && problem != replacement_problem_) {
      replacement_problem_ = std::move(problem);
      ++replacements_;
    }
    return total;  // other errors: tried again at the next poll
  }
  close(fd_);
  fd_ = *fd;
  replacement_problem_.clear();
  Restart(absl::StrCat("replaced (rotated) after ", offset_, " bytes"));
  absl::StatusOr<int64_t> more = ReadToEnd(on_line, max_bytes_per_poll_ - *total);
  if (!more.ok()) return more;
  *total += *more;
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
    absl::FunctionRef<void(absl::string_view, int64_t)> on_line, int64_t budget) {
  int64_t total = 0;
  while (true) {
    if (total >= budget) {
      more_pending_ = true;
      break;
    }
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(block_.size()), budget - total));
    const ssize_t n = read(fd_, block_.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;  // O_NONBLOCK: nothing more now
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
