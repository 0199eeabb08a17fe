// Claiming a measurement name for the length of a run, so that of several runs started with the
// same --name only one runs, and the others are refused before they start instead of being lost
// at save time (#27).
//
// The claim is an exclusive flock(2) on "<parent>/.<name>.roastcoffea-claim": the kernel drops
// it when the process ends however it ends (kill -9 included), so a claim is never stale; the
// file is removed when the claim is released.
//
// Thread-safety: a NameClaim is owned by one thread. Cost: one open, one flock, one stat.
#ifndef ROASTCOFFEA_STORE_NAME_CLAIM_H_
#define ROASTCOFFEA_STORE_NAME_CLAIM_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace roastcoffea {

class NameClaim {
 public:
  // Claims `name` in the existing directory `parent`. Errors, each naming the directory:
  //   InvalidArgument  `name` fails ValidateMeasurementName.
  //   AlreadyExists    <parent>/<name> exists (measurements are never overwritten).
  //   Unavailable      another process holds the claim (a run with the same name is going).
  //   the OS error's code  the claim file could not be created.
  static absl::StatusOr<NameClaim> Claim(absl::string_view parent, absl::string_view name);

  NameClaim(NameClaim&& other) noexcept;
  NameClaim& operator=(NameClaim&& other) noexcept;
  NameClaim(const NameClaim&) = delete;
  NameClaim& operator=(const NameClaim&) = delete;
  // Releases the claim and removes its file.
  ~NameClaim();

  // The claim file's path, for messages.
  const std::string& path() const { return path_; }

 private:
  NameClaim(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void Release();
  int fd_ = -1;
  std::string path_;
};

}  // namespace roastcoffea

#endif  // ROASTCOFFEA_STORE_NAME_CLAIM_H_
