#include "export/spill_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace roastcoffea {
namespace {

constexpr size_t kPieceBytes = size_t{64} << 10;

}  // namespace

SpillFile::SpillFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  path += "/roastcoffea-spill-XXXXXX";
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  fd_ = mkstemp(name.data());
  if (fd_ >= 0) unlink(name.data());
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) close(fd_);
}

void SpillFile::Append(absl::string_view text) {
  if (!ok()) return;
  buffer_.append(text.data(), text.size());
  if (buffer_.size() >= kPieceBytes) Flush();
}

bool SpillFile::Flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;
      break;
    }
    done += static_cast<size_t>(n);
  }
  written_ += done;
  buffer_.clear();
  return !failed_;
}

bool SpillFile::CopyTo(const std::function<void(absl::string_view)>& sink, size_t* copied) {
  *copied = 0;
  if (!ok() || !Flush()) return false;
  std::string piece(kPieceBytes, '\0');
  while (*copied < written_) {
    const ssize_t n = pread(fd_, piece.data(), piece.size(), static_cast<off_t>(*copied));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sink(absl::string_view(piece.data(), static_cast<size_t>(n)));
    *copied += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace roastcoffea
