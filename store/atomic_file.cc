#include "store/atomic_file.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "io/atomic_write.h"

namespace roastcoffea {
namespace {

// True when `path` names one of the files of a measurement directory (one with a FORMAT file).
bool IsMeasurementFile(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const absl::string_view base = slash == std::string::npos
                                     ? absl::string_view(path)
                                     : absl::string_view(path).substr(slash + 1);
  if (base != "FORMAT" && base != "measurement.pb" && base != "measurement.json") return false;
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  struct stat info;
  return stat(absl::StrCat(directory, "/FORMAT").c_str(), &info) == 0;
}

}  // namespace

absl::Status WriteOutputFileAtomically(const std::string& path, const std::string& contents) {
  if (IsMeasurementFile(path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to write '", path, "': it is a file of a saved measurement, never overwritten"));
  }
  return WriteFileAtomically(path, contents);
}

}  // namespace roastcoffea
