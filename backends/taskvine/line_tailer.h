// LineTailer: reads a growing text file line by line, a block at a time, never holding more
// than one block plus one incomplete line in memory. Used for logs of a finished run (one Poll
// reads everything) and for logs still being written (--follow: Poll again later to get what
// was appended; a partial last line is kept until its newline arrives).
//
// Thread-safety: not thread-safe; one owner. Cost: one read(2) per 1 MiB block, memchr per line.
#ifndef ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_
#define ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_

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

  explicit LineTailer(std::string path, size_t block_bytes = 1 << 20);
  ~LineTailer();
  LineTailer(const LineTailer&) = delete;
  LineTailer& operator=(const LineTailer&) = delete;

  // Reads everything appended since the last call and calls on_line(line, line_number) for each
  // complete line (without its '\n'; line numbers start at 1). Returns the bytes read.
  // NotFound while the file does not exist. A file that shrank (truncated) is read again from
  // its start; one replaced by another (rotated: a new inode at the path) is read to its end,
  // then the new file from its start. Each such restart is counted (restarts(), restart_reason()).
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

 private:
  std::string path_;
  int fd_ = -1;
  int64_t offset_ = 0;
  int64_t line_number_ = 0;
  int64_t overlong_lines_ = 0;
  int64_t restarts_ = 0;
  std::string restart_reason_;
  // Reads from fd_ until its end; the bytes read.
  absl::StatusOr<int64_t> ReadToEnd(absl::FunctionRef<void(absl::string_view, int64_t)> on_line);
  void Restart(std::string reason);
  bool carry_overlong_ = false;
  std::string carry_;
  std::vector<char> block_;
};

}  // namespace taskvine
}  // namespace roastcoffea

#endif  // ROASTCOFFEA_BACKENDS_TASKVINE_LINE_TAILER_H_
