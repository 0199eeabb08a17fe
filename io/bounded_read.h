// Reading an input file whole, with a size limit: the one reader for every file collect reads
// (measurement directories, the original's JSON, a command's $ROASTCOFFEA_* files, /proc).
//
// The path is followed if it is a symlink (users link inputs), then the file itself is checked
// before it is opened: it must be a regular file (a FIFO, a device such as /dev/zero, a socket or
// a directory is refused without being opened). The open is non-blocking all the same, and the
// file opened must be the one checked (same device and inode), so a path swapped for a FIFO in
// between is refused too, without blocking. The file must be no larger than the caller's limit
// (checked before reading, and again while reading, so a file that grows is still capped).
// Errors name the path and the reason; reads never throw.
//
// Thread-safety: no shared state. Cost: one stat, one open, one fstat, reads of 64 KiB.
#ifndef ROASTCOFFEA_IO_BOUNDED_READ_H_
#define ROASTCOFFEA_IO_BOUNDED_READ_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

// What a file of type `mode` (stat's st_mode) is, for errors such as "'/dev/zero' is a
// character device, not a regular file": "a regular file", "a directory", "a FIFO",
// "a character device", "a block device", "a socket", "a symbolic link" (from lstat), or
// "not a file".
absl::string_view FileTypeText(mode_t mode);

struct BoundedReadOptions {
  // At most this many bytes are read; a larger file is refused.
  int64_t max_bytes = 0;
  // What the file is, for the size error: "is 5.0 GiB, over the 1 GiB limit for <what>".
  absl::string_view what = "this file";
  // /proc and sysfs files report a size of 0 and are generated on read: only the read is
  // capped. Otherwise the size is checked before reading too.
  bool size_from_stat = true;
};

// The contents of `path`. NotFound when it does not exist; PermissionDenied when it cannot be
// opened for that reason; FailedPrecondition when it is not a regular file; ResourceExhausted
// when it is over the limit; Unavailable for other I/O errors (with the OS's reason).
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            const BoundedReadOptions& options);

// The same file read piece by piece, for a caller that parses as it reads (the whole file never
// in memory): the same checks and errors, the limit enforced on the bytes read so far.
class BoundedFileReader {
 public:
  // Stats, checks and opens `path` (errors as ReadBoundedFile's).
  static absl::StatusOr<BoundedFileReader> Open(const std::string& path,
                                                const BoundedReadOptions& options);
  BoundedFileReader(BoundedFileReader&& other) noexcept;
  BoundedFileReader& operator=(BoundedFileReader&& other) noexcept;
  BoundedFileReader(const BoundedFileReader&) = delete;
  BoundedFileReader& operator=(const BoundedFileReader&) = delete;
  ~BoundedFileReader();

  // Appends at most `max_bytes` more of the file to `out`; 0 at its end. ResourceExhausted once
  // more than options.max_bytes have been read; Unavailable for an I/O error.
  absl::StatusOr<size_t> ReadSome(size_t max_bytes, std::string* out);
  // The file's size when opened (0 when !options.size_from_stat).
  int64_t size() const { return size_; }

 private:
  BoundedFileReader(int fd, std::string path, const BoundedReadOptions& options, int64_t size);

  int fd_ = -1;
  std::string path_;
  int64_t max_bytes_ = 0;
  std::string what_;
  int64_t size_ = 0;
  int64_t read_ = 0;
};

// The same for a regular file of at most `max_bytes`, named `what` in the size error.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes,
                                            absl::string_view what);

// "64 B", "256 MiB", "1.5 GiB": a byte count in binary units, for limits in messages.
std::string ByteCountText(int64_t bytes);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_BOUNDED_READ_H_
