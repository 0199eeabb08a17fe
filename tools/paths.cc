#include "tools/paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace roastcoffea {
namespace {

std::string CurrentDirectory() {
  char buffer[4096];
  if (getcwd(buffer, sizeof(buffer)) == nullptr) return ".";
  return buffer;
}

absl::Status ErrnoError(absl::string_view what, const std::string& path, int error) {
  return absl::PermissionDeniedError(
      absl::StrCat("cannot ", what, " '", path, "': ", std::strerror(error)));
}

}  // namespace

std::string ResolveUserPath(absl::string_view path) {
  if (!path.empty() && path.front() == '/') return std::string(path);
  const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
  const std::string directory = (base != nullptr && *base != '\0') ? base : CurrentDirectory();
  if (path.empty() || path == ".") return directory;
  return absl::StrCat(directory, "/", path);
}

absl::Status EnsureWritableDirectory(const std::string& directory) {
  if (directory.empty()) return absl::InvalidArgumentError("empty output directory");
  // mkdir -p, one component at a time.
  for (size_t slash = directory.find('/', 1);; slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      return ErrnoError("create directory", prefix, errno);
    }
    if (slash == std::string::npos) break;
  }
  struct stat info;
  if (stat(directory.c_str(), &info) != 0) return ErrnoError("access", directory, errno);
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("output directory '", directory, "' exists but is not a directory"));
  }
  // access(W_OK) is always true for root; a real file creation is the only honest test.
  const std::string probe = absl::StrCat(directory, "/.roastcoffea-write-test-", getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return ErrnoError("write to directory", directory, errno);
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

}  // namespace roastcoffea
