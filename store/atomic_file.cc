#include "store/atomic_file.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "io/atomic_write.h"

namespace roastcoffea {

absl::Status CheckOutputPath(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const absl::string_view base = slash == std::string::npos
                                     ? absl::string_view(path)
                                     : absl::string_view(path).substr(slash + 1);
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct stat info;
  // stat, not lstat: a link to a measurement directory leads to the same files.
  if (stat(absl::StrCat(directory, "/FORMAT").c_str(), &info) != 0) return absl::OkStatus();
  const bool own_file = base == "FORMAT" || base == "measurement.pb" || base == "measurement.json";
  if (own_file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to write '", path,
        "': it is a file of a saved measurement, never overwritten; choose another path"));
  }
  if (lstat(path.c_str(), &info) != 0) return absl::OkStatus();
  // Kept logs, files the user put there, an earlier output: none is told apart, none replaced.
  return absl::InvalidArgumentError(
      absl::StrCat("refusing to write '", path,
                   "': it already exists inside a saved measurement directory, "
                   "whose files are never overwritten; choose a new file name"));
}

absl::Status WriteOutputFileAtomically(const std::string& path, const std::string& contents) {
  if (absl::Status allowed = CheckOutputPath(path); !allowed.ok()) return allowed;
  return WriteFileAtomically(path, contents);
}

}  // namespace roastcoffea
