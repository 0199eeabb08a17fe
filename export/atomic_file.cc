#include "export/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace export_internal {

absl::Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  const std::string temporary = absl::StrCat(path, ".tmp-", getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", temporary, "': ", std::strerror(errno)));
    }
    out << contents;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      return absl::InternalError(absl::StrCat("cannot write '", temporary, "'"));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return absl::InternalError(
        absl::StrCat("cannot move '", temporary, "' to '", path, "': ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace export_internal
}  // namespace roastcoffea
