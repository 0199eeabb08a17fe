#include "ingest/any_measurement.h"

#include <sys/stat.h>

#include <string>

#include "absl/strings/string_view.h"
#include "ingest/checkpoint_measurement.h"
#include "store/checkpoint.h"
#include "store/measurement_io.h"

namespace roastcoffea {
namespace {

// The files a measurement directory of either kind is made of.
constexpr absl::string_view kMeasurementFiles[] = {
    "measurement.json", "measurement.pb",     "FORMAT",        "checkpoint.pbs",
    "metrics.json",     "start_end_time.txt", "metadata.json",
};

}  // namespace

std::string MeasurementDirectoryFor(absl::string_view path) {
  std::string result(path);
  while (result.size() > 1 && result.back() == '/') result.pop_back();
  const size_t slash = result.find_last_of('/');
  const absl::string_view base = slash == std::string::npos
                                     ? absl::string_view(result)
                                     : absl::string_view(result).substr(slash + 1);
  bool known = false;
  for (absl::string_view file : kMeasurementFiles) known |= base == file;
  struct stat info;
  // Only a regular file the user named (a directory called FORMAT stays what it is).
  if (!known || stat(result.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return result;
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return result.substr(0, slash);
}

absl::StatusOr<v1::Measurement> LoadAnyMeasurement(absl::string_view path,
                                                   const LegacyLoadOptions& legacy_options,
                                                   const LoadOptions& load_options) {
  const std::string directory = MeasurementDirectoryFor(path);
  if (IsLegacyMeasurementDirectory(directory)) {
    return LoadLegacyMeasurement(directory, legacy_options);
  }
  if (IsCheckpointDirectory(directory)) return LoadCheckpointMeasurement(directory);
  absl::StatusOr<v1::Measurement> measurement = LoadMeasurement(directory, load_options);
  // A run killed before it saved: its name leads to what it checkpointed.
  if (absl::IsNotFound(measurement.status()) &&
      IsCheckpointDirectory(CheckpointDirectoryFor(directory))) {
    return LoadCheckpointMeasurement(CheckpointDirectoryFor(directory));
  }
  return measurement;
}

}  // namespace roastcoffea
