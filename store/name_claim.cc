#include "store/name_claim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "store/measurement_io.h"

namespace roastcoffea {

absl::StatusOr<NameClaim> NameClaim::Claim(absl::string_view parent, absl::string_view name) {
  if (absl::Status valid = ValidateMeasurementName(name); !valid.ok()) return valid;
  const std::string target = absl::StrCat(parent, "/", name);
  std::string path = absl::StrCat(parent, "/.", name, ".roastcoffea-claim");
  // O_NOFOLLOW: a link planted at the claim's path is refused, never followed.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot claim the measurement name '", target, "' (", path,
                                     "): ", strerror(error)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("another collect run is saving to '", target,
                                               "' (it holds the name's claim ", path,
                                               "); choose another --name"));
  }
  NameClaim claim(fd, std::move(path));
  // Checked once the claim is held: a run that finished just before has saved by now.
  struct stat info;
  if (lstat(target.c_str(), &info) == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("measurement directory '", target,
                     "' already exists and is never overwritten; choose another --name"));
  }
  return claim;
}

NameClaim::NameClaim(NameClaim&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

NameClaim& NameClaim::operator=(NameClaim&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

NameClaim::~NameClaim() { Release(); }

void NameClaim::Release() {
  if (fd_ < 0) return;
  // Unlinked while still locked: a run that opened the old file and locks it after us then
  // finds the measurement directory (saved by now) and refuses.
  unlink(path_.c_str());
  close(fd_);
  fd_ = -1;
}

}  // namespace roastcoffea
