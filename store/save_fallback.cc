#include "store/save_fallback.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "store/measurement_io.h"

namespace roastcoffea {

std::string FallbackSaveDirectory() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string base = (tmpdir != nullptr && tmpdir[0] == '/') ? tmpdir : "/tmp";
  return absl::StrCat(base, "/roastcoffea-unsaved");
}

absl::StatusOr<SaveOutcome> SaveWithFallback(
    const v1::Measurement& measurement,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&)>& save,
    const std::string& fallback_directory) {
  absl::StatusOr<std::string> saved = save(measurement);
  if (saved.ok()) return SaveOutcome{*saved, false, ""};
  const std::string name =
      measurement.metadata().name().empty() ? "measurement" : measurement.metadata().name();
  absl::StatusOr<std::string> fallback =
      SaveMeasurementUnderFreeName(measurement, fallback_directory, name);
  if (!fallback.ok()) {
    return absl::Status(
        saved.status().code(),
        absl::StrCat(saved.status().message(), "; and the fallback save in '", fallback_directory,
                     "' failed too: ", fallback.status().message()));
  }
  return SaveOutcome{*fallback, true, std::string(saved.status().message())};
}

}  // namespace roastcoffea
