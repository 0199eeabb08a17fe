// Text set aside on disk to be copied out later, so that it is never held in memory: the JSON
// flat metrics write their "order" list here while they write "metrics", which makes the keys
// twice instead of three times (~165 MB of keys for 10^6 chunk records).
//
//   SpillFile spill;
//   if (spill.ok()) spill.Append("text");
//   size_t copied = 0;
//   if (!spill.CopyTo(out, &copied)) { /* make the text again, skipping `copied` bytes */ }
//
// The file is unlinked as soon as it is made (in $TMPDIR, else /tmp): nothing is left behind,
// even when the process is killed. Thread-compatible.
#ifndef ROASTCOFFEA_EXPORT_SPILL_FILE_H_
#define ROASTCOFFEA_EXPORT_SPILL_FILE_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace roastcoffea {

class SpillFile {
 public:
  // Makes the file; ok() is false when none can be made.
  SpillFile();
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // False when no file could be made or a write failed (a full disk): what was appended is
  // then incomplete, and the caller makes the text another way.
  bool ok() const { return fd_ >= 0 && !failed_; }

  // Adds text after what was appended before, written out in pieces of 64 KiB.
  void Append(absl::string_view text);

  // Hands everything appended to `sink` in pieces, in order, and sets `*copied` to the bytes
  // handed over. False (with `*copied` short of the total) when the file is not ok() or a read
  // fails.
  bool CopyTo(const std::function<void(absl::string_view)>& sink, size_t* copied);

 private:
  bool Flush();

  int fd_ = -1;
  bool failed_ = false;
  size_t written_ = 0;  // bytes in the file
  std::string buffer_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_EXPORT_SPILL_FILE_H_
