#include "io/atomic_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "io/bounded_read.h"

namespace roastcoffea {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
// O_DIRECT wants the buffer's address, the file offset and the length aligned to the device's
// block: 4096 covers every block size in use.
constexpr size_t kDirectAlignment = 4096;

std::string Reason(int error) {
  char buffer[256];
  return strerror_r(error, buffer, sizeof(buffer));
}

// OK when `path` does not exist or is a regular file (what the rename may replace). A symbolic
// link, a device node, a FIFO or a directory there is refused: replacing /dev/null or a link
// the user keeps with a regular file does damage (as root, to the system).
absl::Status CheckReplaceable(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("refusing to write '", path, "': it is ", FileTypeText(info.st_mode),
                   "; an output file only ever replaces a regular file"));
}

}  // namespace

namespace io_internal {

mode_t ProcessUmask() {
  // /proc/self/status "Umask:" (Linux >= 4.7) reads it without changing it, so no other thread
  // ever sees a temporary mask; 022 when it cannot be read.
  BoundedReadOptions options;
  options.max_bytes = 1 << 16;
  options.what = "process status";
  absl::StatusOr<std::string> status = ReadBoundedFile("/proc/self/status", options);
  if (status.ok()) {
    for (absl::string_view line : absl::StrSplit(*status, '\n')) {
      if (!absl::ConsumePrefix(&line, "Umask:")) continue;
      unsigned value = 0;
      if (sscanf(std::string(absl::StripAsciiWhitespace(line)).c_str(), "%o", &value) == 1) {
        return static_cast<mode_t>(value & 0777);
      }
    }
  }
  return 022;
}

namespace {
std::atomic<bool> unnamed_files_unlinkable_for_testing{false};
}  // namespace

void SetUnnamedFilesUnlinkableForTesting(bool unlinkable) {
  unnamed_files_unlinkable_for_testing.store(unlinkable, std::memory_order_relaxed);
}

}  // namespace io_internal

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    const std::string& path, const AtomicWriteOptions& options) {
  if (absl::Status replaceable = CheckReplaceable(path); !replaceable.ok()) return replaceable;
  // First choice: a file without a name until Commit, which a process killed mid-write (SIGKILL,
  // the OOM killer) cannot leave behind. Not every file system has them (NFS, older overlayfs).
  const size_t slash = path.rfind('/');
  const std::string directory =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const mode_t mode = 0666 & ~io_internal::ProcessUmask();
  const int unnamed = open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
  if (unnamed >= 0) {
    fchmod(unnamed, mode);  // as a named file would get, whatever the directory's default ACL
    std::unique_ptr<AtomicFileWriter> writer(
        new AtomicFileWriter(unnamed, path, /*temporary=*/"", options.sync));
    if (options.direct) {
      if (absl::Status direct = writer->SwitchToDirect(); !direct.ok()) return direct;
    }
    return writer;
  }
  std::string temporary = absl::StrCat(path, ".tmp-XXXXXX");
  // mkostemp: O_CREAT | O_EXCL under a random name, so no existing file or link is opened.
  const int fd = mkostemp(&temporary[0], O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot write '", path, "': ", Reason(error)));
  }
  // mkostemp makes it 0600; the result should read like any file the user creates.
  fchmod(fd, mode);
  std::unique_ptr<AtomicFileWriter> writer(
      new AtomicFileWriter(fd, path, std::move(temporary), options.sync));
  if (options.direct) {
    if (absl::Status direct = writer->SwitchToDirect(); !direct.ok()) return direct;
  }
  return writer;
}

namespace {

// Local block-device file systems, where O_DIRECT is well defined and saves the kernel's copy.
// Elsewhere (NFS, CephFS, EOS and other FUSE mounts, overlayfs, tmpfs) a direct write may be
// synchronous per block, bypass a client cache or be refused late: the writer stays buffered.
bool DirectWritesPayOff(int fd) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  constexpr int64_t kExt4 = 0xEF53, kXfs = 0x58465342, kBtrfs = 0x9123683E;
  const int64_t type = static_cast<int64_t>(fs.f_type);
  return type == kExt4 || type == kXfs || type == kBtrfs;
}

}  // namespace

absl::Status AtomicFileWriter::SwitchToDirect() {
  if (aligned_ != nullptr || !error_.ok()) return error_;
  if (error_ = Flush(); !error_.ok()) return error_;
  if (!DirectWritesPayOff(fd_)) return absl::OkStatus();  // stays buffered
  const off_t offset = lseek(fd_, 0, SEEK_CUR);
  void* buffer = nullptr;
  if (offset < 0 || posix_memalign(&buffer, kDirectAlignment, kFlushBytes) != 0) {
    return absl::OkStatus();  // stays buffered
  }
  aligned_.reset(static_cast<char*>(buffer));
  unaligned_left_ =
      (kDirectAlignment - static_cast<size_t>(offset) % kDirectAlignment) % kDirectAlignment;
  if (unaligned_left_ == 0) StartDirect();
  return absl::OkStatus();
}

// O_DIRECT on, at an aligned offset; without it (tmpfs refuses it) the writer stays buffered.
void AtomicFileWriter::StartDirect() {
  const int flags = fcntl(fd_, F_GETFL);
  if (flags < 0 || fcntl(fd_, F_SETFL, flags | O_DIRECT) != 0) aligned_.reset();
}

void AtomicFileWriter::FreeAligned::operator()(char* p) const { free(p); }

AtomicFileWriter::AtomicFileWriter(int fd, std::string path, std::string temporary, bool sync)
    : fd_(fd), path_(std::move(path)), temporary_(std::move(temporary)), sync_(sync) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    close(fd_);
    if (!temporary_.empty()) unlink(temporary_.c_str());
  }
}

namespace {

// Gives the unnamed file open as `fd` the name `name` (which must not exist): through /proc's
// link to it, else (no /proc) by its descriptor, which needs CAP_DAC_READ_SEARCH. 0 or an errno.
int LinkUnnamed(int fd, const std::string& name) {
  if (io_internal::unnamed_files_unlinkable_for_testing.load(std::memory_order_relaxed)) {
    return EPERM;
  }
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  const int error = errno;
  if (error == EEXIST) return error;
  if (linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  return error;
}

// The contents of `from` (read from its start) into a new file `*temporary` (a mkostemp
// pattern, completed): where an unnamed file cannot be linked. 0 or an errno.
int CopyToNamed(int from, std::string* temporary) {
  const int to = mkostemp(&(*temporary)[0], O_CLOEXEC);
  if (to < 0) return errno;
  // Reads at any offset and size: without O_DIRECT (a writer may have turned it on).
  if (const int flags = fcntl(from, F_GETFL); flags >= 0) fcntl(from, F_SETFL, flags & ~O_DIRECT);
  fchmod(to, 0666 & ~io_internal::ProcessUmask());
  char buffer[1 << 16];
  int error = 0;
  off_t offset = 0;
  for (;;) {
    const ssize_t got = pread(from, buffer, sizeof(buffer), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) error = errno;
      break;
    }
    offset += got;
    for (ssize_t done = 0; done < got && error == 0;) {
      const ssize_t put = write(to, buffer + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) error = errno;
      done += put < 0 ? 0 : put;
    }
    if (error != 0) break;
  }
  if (error == 0 && fsync(to) != 0) error = errno;
  if (close(to) != 0 && error == 0) error = errno;
  if (error != 0) unlink(temporary->c_str());
  return error;
}

}  // namespace

// The unnamed file gets its name: straight at the target when there is none yet (one atomic
// link), else under a temporary name that the rename then moves over the target.
int AtomicFileWriter::NameTheUnnamedFile() {
  int error = LinkUnnamed(fd_, path_);
  if (error == 0) return 0;
  // The target exists: a fresh unique name (mkstemp's, then freed for the link to take it),
  // which the rename moves over the target.
  for (int attempt = 0; error == EEXIST && attempt < 100; ++attempt) {
    std::string temporary = absl::StrCat(path_, ".tmp-XXXXXX");
    const int probe = mkostemp(&temporary[0], O_CLOEXEC);
    if (probe < 0) return errno;
    close(probe);
    unlink(temporary.c_str());
    error = LinkUnnamed(fd_, temporary);  // EEXIST: taken in between, another name
    if (error == 0) {
      temporary_ = std::move(temporary);
      return 0;
    }
  }
  if (error == EEXIST) return error;
  // Not linkable here (no /proc, no CAP_DAC_READ_SEARCH): its contents copied to a new file.
  std::string temporary = absl::StrCat(path_, ".tmp-XXXXXX");
  if (int copied = CopyToNamed(fd_, &temporary); copied != 0) return copied;
  temporary_ = std::move(temporary);
  return 0;
}

absl::Status AtomicFileWriter::Flush() {
  if (aligned_ != nullptr) return FlushDirect(/*last=*/true);
  absl::Status written = WriteAll(buffer_.data(), buffer_.size());
  buffer_.clear();
  return written;
}

absl::Status AtomicFileWriter::AppendDirect(absl::string_view data) {
  if (unaligned_left_ > 0) {  // up to the first aligned offset, through the page cache
    const size_t take = std::min(unaligned_left_, data.size());
    if (error_ = WriteAll(data.data(), take); !error_.ok()) return error_;
    unaligned_left_ -= take;
    data.remove_prefix(take);
    if (unaligned_left_ > 0) return error_;
    StartDirect();
    if (aligned_ == nullptr) return Append(data);
  }
  while (!data.empty() && error_.ok()) {
    const size_t take = std::min(data.size(), kFlushBytes - aligned_size_);
    memcpy(aligned_.get() + aligned_size_, data.data(), take);
    aligned_size_ += take;
    data.remove_prefix(take);
    if (aligned_size_ == kFlushBytes) error_ = FlushDirect(/*last=*/false);
  }
  return error_;
}

// The whole blocks of the aligned buffer around the page cache; with `last`, the tail too,
// buffered (O_DIRECT is dropped for it). A file system that refuses a direct write (EINVAL)
// gets the rest buffered.
absl::Status AtomicFileWriter::FlushDirect(bool last) {
  const size_t blocks = last ? aligned_size_ / kDirectAlignment * kDirectAlignment : aligned_size_;
  size_t done = 0;
  while (done < blocks) {
    const ssize_t written = write(fd_, aligned_.get() + done, blocks - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0 || static_cast<size_t>(written) % kDirectAlignment != 0) {
      if (written > 0) done += static_cast<size_t>(written);
      const int flags = fcntl(fd_, F_GETFL);
      if (flags < 0 || fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) break;
      absl::Status rest = WriteAll(aligned_.get() + done, aligned_size_ - done);
      aligned_.reset();  // buffered from now on
      aligned_size_ = 0;
      return rest;
    }
    done += static_cast<size_t>(written);
  }
  if (done < blocks) return WriteAll(aligned_.get() + done, blocks - done);  // reports errno
  if (last && aligned_size_ > blocks) {
    const int flags = fcntl(fd_, F_GETFL);
    if (flags >= 0) fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
    if (absl::Status s = WriteAll(aligned_.get() + blocks, aligned_size_ - blocks); !s.ok()) {
      return s;
    }
  }
  aligned_size_ = 0;
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::WriteAll(const char* data, size_t left) {
  while (left > 0) {
    const ssize_t written = write(fd_, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      return absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot write '", path_, "': ", Reason(error)));
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Append(absl::string_view data) {
  // In pieces of at most kFlushBytes: copying a large `data` whole into the buffer doubled the
  // memory of writing it (256 MiB of folded stacks held twice).
  if (aligned_ != nullptr) return AppendDirect(data);
  while (!data.empty() && error_.ok()) {
    const size_t take = std::min(data.size(), kFlushBytes - buffer_.size());
    buffer_.append(data.data(), take);
    data.remove_prefix(take);
    if (buffer_.size() >= kFlushBytes) error_ = Flush();
  }
  return error_;
}

absl::Status AtomicFileWriter::Commit() {
  if (error_.ok()) error_ = Flush();
  if (error_.ok() && sync_ && fsync(fd_) != 0) {
    const int error = errno;
    error_ = absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot write '", path_, "': ", Reason(error)));
  }
  // Again just before the rename: the path may have been replaced since Create.
  if (error_.ok()) error_ = CheckReplaceable(path_);
  const bool unnamed = temporary_.empty();
  bool linked_at_target = false;
  if (error_.ok() && unnamed) {
    if (const int error = NameTheUnnamedFile(); error != 0) {
      error_ = absl::Status(absl::ErrnoToStatusCode(error),
                            absl::StrCat("cannot write '", path_, "': ", Reason(error)));
    }
    linked_at_target = error_.ok() && temporary_.empty();
  }
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0 && error_.ok()) {
    const int error = errno;
    error_ = absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot write '", path_, "': ", Reason(error)));
  }
  if (error_.ok() && !linked_at_target && rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    error_ = absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot write '", path_, "': ", Reason(error)));
  }
  if (!error_.ok() && !temporary_.empty()) unlink(temporary_.c_str());
  if (!error_.ok() && linked_at_target) unlink(path_.c_str());
  return error_;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer = AtomicFileWriter::Create(path);
  if (!writer.ok()) return writer.status();
  if (absl::Status appended = (*writer)->Append(contents); !appended.ok()) return appended;
  return (*writer)->Commit();
}

}  // namespace roastcoffea
