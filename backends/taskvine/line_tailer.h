// LineTailer: reads a growing text file line by line, a block at a time, never holding more
// than one block plus one incomplete line in memory. Used for logs of a finished run (one Poll
// reads everything) and for logs still being written (--follow: Poll again later to get what
// was appended; a partial last line is kept until its newline arrives).
//
// Only a regular file is ever opened, at the start and at every reopen after a rotation: the
// path's type is checked with stat(2) before open (a FIFO would block open(2), a device never
// ends), open uses O_NONBLOCK, and fstat(2) must show the file stat(2) saw. A path replaced by
// anything else (FIFO, device, directory, socket, a new symbolic link) is not read: the old
// file is read to its end and replacement_problem() says what the path became. One Poll reads
// at most max_bytes_per_poll, so a log that grows faster than it is read cannot hold the caller.
//
// Thread-safety: not thread-safe; one owner. Cost: one read(2) per 256 KiB block (it stays in the
// L2 cache while its lines are parsed; 1 MiB blocks cost ~3% more, #25), memchr per line.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {
namespace taskvine {

class LineTailer {
 public:
  // Lines longer than this are cut (the rest of the line is skipped) so that a file without
  // newlines cannot grow memory without bound.
  static constexpr size_t kMaxLineBytes = 1 << 20;

  // Bytes one Poll reads at most by default (more_pending() then says the file has more).
  static constexpr int64_t kDefaultMaxBytesPerPoll = int64_t{64} << 20;

  static constexpr size_t kDefaultBlockBytes = 256 << 10;

  explicit LineTailer(std::string path, size_t block_bytes = kDefaultBlockBytes,
                      int64_t max_bytes_per_poll = kDefaultMaxBytesPerPoll);
  ~LineTailer();
  LineTailer(const LineTailer&) = delete;
  LineTailer& operator=(const LineTailer&) = delete;

  // Reads everything appended since the last call and calls on_line(line, line_number) for each
  // complete line (without its '\n'; line numbers start at 1). Returns the bytes read.
  // NotFound while the file does not exist; FailedPrecondition naming its type when the path
  // names something other than a regular file before anything was read. A file that shrank
  // (truncated) is read again from its start; one replaced by another (rotated: a new inode at the
  // path) is read to its end, then the new file from its start. Each such restart is counted
  // (restarts(), restart_reason()).
  absl::StatusOr<int64_t> Poll(absl::FunctionRef<void(absl::string_view, int64_t)> on_line);

  // The incomplete last line read so far ("" when the file ends with a newline), and its number.
  absl::string_view pending_line() const { return carry_; }
  int64_t pending_line_number() const { return line_number_ + 1; }
  // Number of lines cut at kMaxLineBytes.
  int64_t overlong_lines() const { return overlong_lines_; }
  int64_t bytes_read() const { return offset_; }
  int64_t restarts() const { return restarts_; }
  // Why the last restart happened: "truncated from N to M bytes", "replaced (rotated) after N
  // bytes".
  const std::string& restart_reason() const { return restart_reason_; }
  const std::string& path() const { return path_; }
  // The last Poll stopped at max_bytes_per_poll with more to read.
  bool more_pending() const { return more_pending_; }
  // What the path was replaced by when that is not readable as a log ("a FIFO", "a directory",
  // "a symbolic link to /x", ...): "" while the path names the file being read (or nothing).
  // It changes at most once per replacement; replacements() counts them.
  const std::string& replacement_problem() const { return replacement_problem_; }
  int64_t replacements() const { return replacements_; }
  // Nothing is at the path any more (deleted, or moved away with nothing in its place) since
  // the last Poll, after a file was read from it: the file read stays open and is read to its end.
  bool path_missing() const { return path_missing_; }

 private:
  std::string path_;
  int64_t max_bytes_per_poll_;
  int fd_ = -1;
  bool path_was_link_ = false;  // the path was a symbolic link when first opened
  bool more_pending_ = false;
  std::string replacement_problem_;
  int64_t replacements_ = 0;
  bool path_missing_ = false;
  int64_t offset_ = 0;
  int64_t line_number_ = 0;
  int64_t overlong_lines_ = 0;
  int64_t restarts_ = 0;
  std::string restart_reason_;
  // Reads from fd_ until its end or `budget` bytes; the bytes read.
  absl::StatusOr<int64_t> ReadToEnd(absl::FunctionRef<void(absl::string_view, int64_t)> on_line,
                                    int64_t budget);
  // The path as a regular file opened for reading (see the class comment), or why not.
  absl::StatusOr<int> OpenRegular(struct stat* info);
  void Restart(std::string reason);
  bool carry_overlong_ = false;
  std::string carry_;
  std::vector<char> block_;
};

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_
