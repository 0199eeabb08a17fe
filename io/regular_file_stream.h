// A file read as a protobuf input stream (length-delimited parts: measurement.pbs, a run's
// checkpoint), refused unless it is a regular file: a FIFO would block the reader or feed it
// without end, a device such as /dev/zero never ends, a directory cannot be read. The one
// opener for both, so that they refuse the same things with the same words.
//
// Thread-safety: no shared state. Cost: one open and one fstat.
#ifndef ROASTCOFFEA_IO_REGULAR_FILE_STREAM_H_
#define ROASTCOFFEA_IO_REGULAR_FILE_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"

namespace roastcoffea {

struct RegularFileStream {
  // Reads the file from where its descriptor was; closes the descriptor when destroyed.
  std::unique_ptr<google::protobuf::io::FileInputStream> stream;
  // The file's size when it was opened.
  int64_t size = 0;
};

// Opens `path` for reading: never through a symbolic link (its target might be anything), and
// without blocking on a FIFO. Errors name the path:
//   NotFound            it does not exist;
//   FailedPrecondition  "'<path>' is not a regular file (a FIFO)", "... (a directory)",
//                       "... (a character device)", "... (a symbolic link, never followed)";
//   the OS error's code otherwise (e.g. PermissionDenied), with its text.
absl::StatusOr<RegularFileStream> OpenRegularFileStream(const std::string& path);

// The same for `fd`, a descriptor open for reading that the stream takes over (closed at once
// when it is refused); `path` names it in errors.
absl::StatusOr<RegularFileStream> RegularFileStreamOf(int fd, const std::string& path);

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_IO_REGULAR_FILE_STREAM_H_
