#include "store/save_fallback.h"

#include <cstdlib>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "store/measurement_io.h"

namespace roastcoffea {

std::string FallbackSaveDirectory() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string base = (tmpdir != nullptr && tmpdir[0] == '/') ? tmpdir : "/tmp";
  return absl::StrCat(base, "/roastcoffea-unsaved");
}

namespace {

// The one rule for both forms: `save()`, else `save_under_free_name(fallback_directory, name)`.
absl::StatusOr<SaveOutcome> SaveOrFallBack(
    const v1::Measurement& measurement, absl::FunctionRef<absl::StatusOr<std::string>()> save,
    absl::FunctionRef<absl::StatusOr<std::string>(const std::string&, const std::string&)>
        save_under_free_name,
    const std::string& fallback_directory) {
  absl::StatusOr<std::string> saved = save();
  if (saved.ok()) return SaveOutcome{*saved, false, ""};
  const std::string name =
      measurement.metadata().name().empty() ? "measurement" : measurement.metadata().name();
  absl::StatusOr<std::string> fallback = save_under_free_name(fallback_directory, name);
  if (!fallback.ok()) {
    return absl::Status(
        saved.status().code(),
        absl::StrCat(saved.status().message(), "; and the fallback save in '", fallback_directory,
                     "' failed too: ", fallback.status().message()));
  }
  return SaveOutcome{*fallback, true, std::string(saved.status().message())};
}

}  // namespace

absl::StatusOr<SaveOutcome> SaveWithFallback(
    const v1::Measurement& measurement,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&)>& save,
    const std::string& fallback_directory) {
  return SaveOrFallBack(
      measurement, [&] { return save(measurement); },
      [&](const std::string& directory, const std::string& name) {
        return SaveMeasurementUnderFreeName(measurement, directory, name);
      },
      fallback_directory);
}

absl::StatusOr<SaveOutcome> SaveWithFallback(
    const v1::Measurement& measurement, const ChunkTable& chunks,
    const std::function<absl::StatusOr<std::string>(const v1::Measurement&, const ChunkTable&)>&
        save,
    const std::string& fallback_directory) {
  return SaveOrFallBack(
      measurement, [&] { return save(measurement, chunks); },
      [&](const std::string& directory, const std::string& name) {
        return SaveMeasurementUnderFreeName(measurement, chunks, directory, name);
      },
      fallback_directory);
}

}  // namespace roastcoffea
