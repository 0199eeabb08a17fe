// Reading an input file whole, with a size limit: the one reader for every file collect reads
// (measurement directories, the original's JSON, a command's $ROASTCOFFEA_* files, /proc).
//
// The path is followed if it is a symlink (users link inputs), then the file itself is checked:
// it must be a regular file (a FIFO, a device such as /dev/zero, a socket or a directory is
// refused without blocking: the open is non-blocking), and no larger than the caller's limit
// (checked before reading, and again while reading, so a file that grows is still capped).
// Errors name the path and the reason; reads never throw.
//
// Thread-safety: no shared state. Cost: one open, one fstat, reads of 64 KiB.
#ifndef ROASTCOFFEA_IO_BOUNDED_READ_H_
#define ROASTCOFFEA_IO_BOUNDED_READ_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

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

// The same for a regular file of at most `max_bytes`, named `what` in the size error.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, int64_t max_bytes,
                                            absl::string_view what);

// "64 B", "256 MiB", "1.5 GiB": a byte count in binary units, for limits in messages.
std::string ByteCountText(int64_t bytes);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_BOUNDED_READ_H_
